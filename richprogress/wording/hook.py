"""The ``format_hook`` around a default record: called on a copy of it, waited for where the
caller can wait, and only what it returns that fits a record is kept.

A record's keys are rendered by the pages, the SSE stream and the JSON endpoint, so a value
of another type from a hook would break them (or the stream's JSON) for every viewer: such
values are left out, and logged once.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Mapping
from typing import Any, cast

from richprogress.model.records import PHASE_PROGRESS, SEVERITIES, EventRecord
from richprogress.wording.record import LogOnce

OBJECT_PARTS = ("kind", "name", "container", "field_path")


def _optional_str(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _json_data(value: Any) -> bool:
    try:
        # allow_nan=False: the browser's JSON.parse rejects NaN, and the event with it
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def fits(key: Any, value: Any) -> bool:
    """Whether a hook's ``value`` for ``key`` keeps a record what it must be (the types
    ``EventRecord`` declares, an id that is not empty, a count >= 1, JSON data)."""
    if not isinstance(key, str):
        return False
    if key == "id":
        return isinstance(value, str) and bool(value)
    if key in ("type", "message", "raw_message"):
        return isinstance(value, str)
    if key in ("timestamp", "first_timestamp", "reason", "component", "rule", "hint"):
        return _optional_str(value)
    if key == "severity":
        return value in SEVERITIES
    if key == "phase":
        return value is None or (isinstance(value, str) and value in PHASE_PROGRESS)
    if key == "fatal":
        return isinstance(value, bool)
    if key == "count":
        return isinstance(value, int) and not isinstance(value, bool) and value >= 1
    if key == "since_spawn":
        return value is None or (
            isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        )
    if key == "object":
        return (
            isinstance(value, Mapping)
            and all(_optional_str(value.get(part)) for part in OBJECT_PARTS)
            and _json_data(dict(value))
        )
    return _json_data(value)


class FormatHook:
    """A ``format_hook`` and how the formatter uses it: ``call`` it, then, if it gave an
    awaitable, ``wait`` for it (async callers) or ``cannot_wait`` (sync ones), then ``merge``
    what it returned into the record. A hook that fails is logged once (per hook and rule)
    and leaves the record as the rules made it."""

    __slots__ = ("hook", "log_once")

    def __init__(self, hook: Any, log_once: LogOnce) -> None:
        self.hook = hook
        self.log_once = log_once

    def call(self, spawner: Any, event: Mapping[str, Any], record: EventRecord) -> Any:
        """What the hook returns for a copy of ``record``; None (keep it) if it raised."""
        copy = dict(record)
        copy["object"] = dict(record["object"])
        try:
            return self.hook(spawner, event, copy)
        except Exception:
            self._failed(record)
            return None

    async def wait(self, result: Awaitable[Any], record: EventRecord) -> Any:
        """An async hook's result; None (keep the record) if it raised."""
        try:
            return await result
        except Exception:
            self._failed(record)
            return None

    def cannot_wait(self, result: Awaitable[Any]) -> None:
        """Sync code cannot wait for an async hook: close its coroutine, say so once."""
        close = getattr(result, "close", None)
        if callable(close):
            close()
        self.log_once(
            ("hook-async", id(self.hook)),
            "richprogress: format_hook %r is async but was called from sync code "
            "(format_event); using default records there. Use format_event_async.",
            self.hook,
            exc_info=False,
        )

    def merge(self, record: EventRecord, result: Any) -> EventRecord:
        """``record`` with what the hook returned that fits; ``record`` for None or junk."""
        if result is None:
            return record
        if not isinstance(result, Mapping) or not isinstance(result.get("message"), str):
            self.log_once(
                ("hook-type", id(self.hook), record["rule"]),
                "richprogress: format_hook returned %s for an event (rule %s); expected a record "
                "with a str message, or None. Using the default record.",
                type(result).__name__,
                record["rule"],
                exc_info=False,
            )
            return record
        merged = dict(record)
        odd: list[str] = []
        for key, value in result.items():
            if fits(key, value):
                # an object missing some parts still carries all four
                merged[key] = {**dict.fromkeys(OBJECT_PARTS), **value} if key == "object" else value
            else:
                odd.append(str(key))
        if odd:
            self.log_once(
                ("hook-keys", id(self.hook), record["rule"], tuple(odd)),
                "richprogress: format_hook returned values of the wrong type for %s "
                "(rule %s); keeping the default record's values for those keys",
                ", ".join(odd),
                record["rule"],
                exc_info=False,
            )
        return cast(EventRecord, merged)

    def _failed(self, record: EventRecord) -> None:
        self.log_once(
            ("hook", id(self.hook), record["rule"]),
            "richprogress: format_hook %r raised for an event (reason %s, rule %s, message %.200r); "
            "using the default record",
            self.hook,
            record["reason"],
            record["rule"],
            record["raw_message"],
        )
