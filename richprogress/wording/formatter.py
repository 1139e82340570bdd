"""EventFormatter: Kubernetes (or custom) event dict -> EventRecord, via rules and a hook.

One and only purpose: the configurable front of the formatter. It owns the config options
(``rules``, ``extra_rules``, ``format_hook``), validates them at configure time, and builds
records (DESIGN.md contract 1) from normalized fields and the first matching rule. It knows
nothing of JupyterHub or Kubernetes clients; the spawner and the CLI both use it.
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Mapping
from typing import Any, cast

from traitlets import Any as AnyTrait
from traitlets import Dict as DictTrait
from traitlets import List as ListTrait
from traitlets import TraitError, Union, observe, validate
from traitlets.config import LoggingConfigurable

from richprogress.model.display import clean_str
from richprogress.model.records import PHASE_PROGRESS, SEVERITIES, EventRecord
from richprogress.wording.default_rules import DEFAULT_RULES
from richprogress.wording.fields import (
    Fields,
    fields_from_read,
    normalize_event,
    normalize_message,
    read_event,
)
from richprogress.wording.rules import Rule, RuleError, RuleSet, load_rules

_default_rules_cache: list[Rule] | None = None

# The record cache (see EventFormatter._default_record) is bounded: it starts over when it
# holds this many wordings, and never keeps an event whose message is longer than this.
_RECORDS_LIMIT = 2048
_RECORD_MESSAGE_MAX = 2048


def default_rules() -> list[Rule]:
    """The compiled default rules (compiled once per process)."""
    global _default_rules_cache
    if _default_rules_cache is None:
        # Our callables depend on their groups alone, so their text may be reused.
        _default_rules_cache = load_rules(DEFAULT_RULES, option="default rules", pure_callables=True)
    return _default_rules_cache


_OBJECT_PARTS = ("kind", "name", "container", "field_path")


def _optional_str(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _json_data(value: Any) -> bool:
    try:
        # allow_nan=False: the browser's JSON.parse rejects NaN, and the event with it
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def _fits(key: Any, value: Any) -> bool:
    """Whether a hook's ``value`` for ``key`` keeps the record's contract (DESIGN.md 1)."""
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
            and all(_optional_str(value.get(part)) for part in _OBJECT_PARTS)
            and _json_data(dict(value))
        )
    return _json_data(value)


class EventFormatter(LoggingConfigurable):
    """Turn Kubernetes events (and other progress messages) into EventRecords.

    Usable on its own::

        from richprogress import EventFormatter
        record = EventFormatter().format_event(event)
    """

    rules = Union(
        [ListTrait(), DictTrait()],
        default_value=None,
        allow_none=True,
        config=True,
        help="""
        Formatting rules that replace the default rules. None (the default) uses ours.

        A list of rules (tried in order), or a dict of rules (tried in the order of their
        keys, a key being the rule's id). The rule format of kubespawner #910 works
        unchanged. A rule::

            {
                "match": {"reason": r"Failed", "message": r'Failed to pull image "(?P<image>[^"]+)"'},
                "template": "The image {image} could not be downloaded",
                # optional, richprogress only:
                "id": "my-pull-rule", "severity": "error", "phase": "image",
                "hint": "Check the image name {image}.",
            }

        Match fields: reportingComponent, fieldPath, reason, message, type, kind, name,
        namespace, container. Each pattern is applied with ``re.match``; all must match;
        the first matching rule wins; named groups of all patterns are passed to the
        template (``str.format``) or, for a callable template, as keyword arguments
        (``template(**groups)``); groups that did not take part are "". A template that
        fails keeps the event's own message. Rules are checked at start-up: a bad rule is
        an error naming it.

        Example::

            c.EventFormatter.rules = {
                "01-pull": {
                    "match": {"reason": "Pulling", "message": r'Pulling image "(?P<image>[^"]+)"'},
                    "template": "Downloading {image}",
                },
            }
        """,
    )

    extra_rules = Union(
        [ListTrait(), DictTrait()],
        default_value=[],
        config=True,
        help="""
        Formatting rules tried before the rules in ``rules`` (or the defaults), so they win.

        Same format as ``rules``. Use this to reword a few events and keep our defaults for
        the rest.

        Example::

            c.EventFormatter.extra_rules = [
                {
                    "id": "our-gpu-pool",
                    "match": {"reason": "TriggeredScaleUp", "message": ".*gpu-pool"},
                    "template": "Starting a GPU machine for you (this takes about 8 minutes)",
                    "phase": "scaling",
                }
            ]
        """,
    )

    format_hook = AnyTrait(
        default_value=None,
        allow_none=True,
        config=True,
        help="""
        A function that may edit or replace each record after the rules ran.

        Called as ``hook(spawner, raw_event, record)``; ``spawner`` is None outside a
        spawner (e.g. the command line). Return the record to use, or None to keep the
        record as the rules made it. It may be async where it is called from async code
        (the spawner); a sync call (``format_event``) cannot wait for it and keeps the
        default record. If the hook raises, the error is logged once (per hook and rule)
        and the default record is used. The record is a copy: edit it freely, but keep it
        data (plain text, no HTML).

        Example::

            def add_docs_link(spawner, event, record):
                if record["rule"] == "image-not-found":
                    record["hint"] = "See https://docs.example.edu/images for the list of images."
                return record

            c.EventFormatter.format_hook = add_docs_link
        """,
    )

    def __init__(self, **kwargs: Any) -> None:
        self._ruleset: RuleSet | None = None
        self._hook: Any = None  # format_hook, mirrored: reading a trait costs ~6x a plain attribute
        self._logged: set[tuple[Any, ...]] = set()
        # read_event key -> a record made for an event with that key (read it, never hand it out)
        self._records: dict[tuple[Any, ...], EventRecord] = {}
        super().__init__(**kwargs)
        self._hook = self.format_hook

    # ---- configuration ---------------------------------------------------------------

    @validate("rules", "extra_rules")
    def _validate_rules(self, proposal: Any) -> Any:
        name = proposal["trait"].name
        value = proposal["value"]
        if value is None and name == "rules":
            return None
        try:
            load_rules(value, option=f"EventFormatter.{name}")
        except RuleError as exc:
            raise TraitError(f"Invalid rule in EventFormatter.{name}: {exc}") from None
        return value

    @validate("format_hook")
    def _validate_hook(self, proposal: Any) -> Any:
        value = proposal["value"]
        if value is not None and not callable(value):
            raise TraitError(
                f"EventFormatter.format_hook must be callable or None, not {type(value).__name__}"
            )
        return value

    @observe("format_hook")
    def _hook_changed(self, change: Any) -> None:
        self._hook = change["new"]

    @observe("rules", "extra_rules")
    def _rules_changed(self, change: Any) -> None:
        self._ruleset = None
        self._records = {}

    @property
    def ruleset(self) -> RuleSet:
        """The compiled rules in the order they are tried (extra rules first)."""
        if self._ruleset is None:
            extra = load_rules(self.extra_rules, option="EventFormatter.extra_rules")
            if self.rules is None:
                base = default_rules()
            else:
                base = load_rules(self.rules, option="EventFormatter.rules")
            self._ruleset = RuleSet([*extra, *base])
        return self._ruleset

    # ---- formatting ------------------------------------------------------------------

    def _log_once(self, key: tuple[Any, ...], msg: str, *args: Any, exc_info: bool = True) -> None:
        if key in self._logged:
            return
        if len(self._logged) < 10_000:
            self._logged.add(key)
        self.log.error(msg, *args, exc_info=exc_info)

    def _render(self, rule: Rule, hint: bool, groups: Mapping[str, str]) -> str | None:
        what = "hint" if hint else "template"
        render = rule.render_hint if hint else rule.render
        try:
            text = render(groups) if render is not None else None
        except Exception:
            self._log_once(
                ("render", rule.id, what),
                "richprogress: the %s of rule %s failed to render; using the event's own message",
                what,
                rule.label,
            )
            return None
        if type(text) is str and text.isascii():
            return text
        if not isinstance(text, str):
            self._log_once(
                ("type", rule.id, what),
                "richprogress: the %s of rule %s returned %s, not a str; ignoring it",
                what,
                rule.label,
                type(text).__name__,
                exc_info=False,
            )
            return None
        return clean_str(text)

    def _build(self, fields: Fields) -> EventRecord:
        return self._build_pure(fields)[0]

    def _build_pure(self, fields: Fields) -> tuple[EventRecord, bool]:
        """The record for ``fields``, and whether its wording may be reused (see ``Rule.pure``)."""
        # Unpacking the tuple once is much cheaper than 13 attribute lookups per event.
        (uid, timestamp, first_timestamp, type_, reason, kind, name, container, field_path,
         component, count, raw, match_values) = fields
        message = None
        hint = None
        phase = None
        severity = None
        rule_id = None
        fatal = False
        pure = True
        ruleset = self._ruleset
        if ruleset is None:  # not `or`: a RuleSet's truth is its length, a call per event
            ruleset = self.ruleset
        found = ruleset.match(match_values)
        if found is not None:
            rule, groups = found
            pure = rule.pure
            if rule.safe_render:  # a %-template: the common case, with no guard to pay for
                message = rule.render(groups)  # type: ignore[misc]
                if not message.isascii():
                    message = clean_str(message)
            else:
                message = self._render(rule, False, groups)
            if message:
                rule_id = rule.id
                severity = rule.severity
                phase = rule.phase
                if rule.fatal:
                    fatal = rule.fatal is True or self._is_fatal(rule, groups)
                if rule.hint is not None:
                    if rule.safe_hint:
                        hint = rule.render_hint(groups)  # type: ignore[misc]
                        if not hint.isascii():
                            hint = clean_str(hint)
                        hint = hint or None
                    else:
                        hint = self._render(rule, True, groups) or None
        if not message:
            # Never an empty line: the event's own words, else what little we know.
            message = raw or reason or "(event without a message)"
        if severity is None:
            severity = "warning" if type_ == "Warning" else "info"
        record: EventRecord = {
            "id": uid,
            "timestamp": timestamp,
            "first_timestamp": first_timestamp,
            "type": type_,
            "severity": severity,
            "reason": reason,
            "object": {
                "kind": kind,
                "name": name,
                "container": container,
                "field_path": field_path,
            },
            "component": component,
            "count": count,
            "message": message,
            "raw_message": raw,
            "rule": rule_id,
            "phase": phase,
            "hint": hint,
        }
        if fatal:
            # only when true: records of causes that waiting can fix stay as they were
            record["fatal"] = True
        return record, pure

    def _is_fatal(self, rule: Rule, groups: Mapping[str, str]) -> bool:
        """A rule's callable ``fatal``, called as ``fatal(**groups)``; False if it fails."""
        try:
            return bool(rule.fatal(**groups))  # type: ignore[operator]
        except Exception:
            self._log_once(
                ("render", rule.id, "fatal"),
                "richprogress: the fatal check of rule %s failed; treating the cause as not fatal",
                rule.label,
            )
            return False

    def _safe_record(self, event: Any) -> EventRecord:
        """The record of last resort, should normalizing or matching ever fail."""
        try:
            message = clean_str(event.get("message")) if isinstance(event, Mapping) else None
        except Exception:
            message = None
        fields = normalize_message(message or "(unreadable event)")
        record = self._build_plain(fields)
        return record

    def _build_plain(self, fields: Fields) -> EventRecord:
        return {
            "id": fields.id,
            "timestamp": None,
            "first_timestamp": None,
            "type": fields.type,
            "severity": "info",
            "reason": None,
            "object": {"kind": None, "name": None, "container": None, "field_path": None},
            "component": None,
            "count": 1,
            "message": fields.raw_message,
            "raw_message": fields.raw_message,
            "rule": None,
            "phase": None,
            "hint": None,
        }

    def _default_record(self, event: Any) -> EventRecord:
        """The record the rules make for ``event`` (before the hook). Never raises.

        Most events share their wording with one seen before: a repeat (count and times
        change, the text does not), the same event for another page, or the same kubelet
        step for another user. So records are cached by ``read_event``'s key, the raw values
        the wording depends on; a hit copies the cached record and sets the event's own id,
        times, count and object name. Only plain keys (str or None values), short messages
        and pure rules are cached, so a hit gives exactly the record a miss would.
        """
        try:
            seen = read_event(event)
            if seen is not None:
                key, name, uid, timestamp, first_timestamp, count = seen
                if name is not None and (type(name) is not str or not name.isascii()):
                    return self._build(normalize_event(event))
                ruleset = self._ruleset
                if ruleset is None:
                    ruleset = self.ruleset
                records = self._records
                try:
                    cached = records.get(key)
                    if cached is None and ruleset.reads_name:
                        # a wording that depends on the name is kept under the name too
                        cached = records.get((*key, name))
                except TypeError:  # an unhashable value (a list, a dict): not a plain event
                    return self._build(normalize_event(event))
                if cached is not None:
                    record = cached.copy()
                    obj = cached["object"].copy()
                    obj["name"] = name or None
                    record["object"] = obj
                    record["id"] = uid
                    record["timestamp"] = timestamp
                    record["first_timestamp"] = first_timestamp
                    record["count"] = count
                    return record
                fields = fields_from_read(*seen)
                if fields is None:  # a value that is not plain text: no caching, the careful reader
                    return self._build(normalize_event(event))
                record, pure = self._build_pure(fields)
                if pure and len(record["raw_message"]) <= _RECORD_MESSAGE_MAX:
                    if len(records) >= _RECORDS_LIMIT:
                        records.clear()
                    kept = record.copy()
                    kept["object"] = record["object"].copy()
                    if ruleset.name_matters(fields.match_values):
                        key = (*key, name)
                    records[key] = kept
                return record
            return self._build(normalize_event(event))
        except Exception:
            self._log_once(("format",), "richprogress: formatting an event failed; showing it raw")
            return self._safe_record(event)

    def _copy(self, record: EventRecord) -> EventRecord:
        copy = dict(record)
        copy["object"] = dict(record["object"])
        return cast(EventRecord, copy)

    def _hook_result(self, hook: Any, record: EventRecord, result: Any) -> EventRecord:
        if result is None:
            return record
        if isinstance(result, Mapping) and isinstance(result.get("message"), str):
            merged = dict(record)
            odd: list[str] = []
            for key, value in result.items():
                if _fits(key, value):
                    # an object missing some parts still carries all four (contract 1)
                    merged[key] = (
                        {**dict.fromkeys(_OBJECT_PARTS), **value} if key == "object" else value
                    )
                else:
                    odd.append(str(key))
            if odd:
                # The pages, the SSE stream and the JSON endpoint render these keys; a value
                # of another type would break them (or the stream's JSON) for every viewer.
                self._log_once(
                    ("hook-keys", id(hook), record["rule"], tuple(odd)),
                    "richprogress: format_hook returned values of the wrong type for %s "
                    "(rule %s); keeping the default record's values for those keys",
                    ", ".join(odd),
                    record["rule"],
                    exc_info=False,
                )
            return cast(EventRecord, merged)
        self._log_once(
            ("hook-type", id(hook), record["rule"]),
            "richprogress: format_hook returned %s for an event (rule %s); expected a record "
            "with a str message, or None. Using the default record.",
            type(result).__name__,
            record["rule"],
            exc_info=False,
        )
        return record

    def _hook_failed(self, hook: Any, record: EventRecord) -> None:
        self._log_once(
            ("hook", id(hook), record["rule"]),
            "richprogress: format_hook %r raised for an event (reason %s, rule %s, message %.200r); "
            "using the default record",
            hook,
            record["reason"],
            record["rule"],
            record["raw_message"],
        )

    def format_event(self, event: Mapping[str, Any], spawner: Any = None) -> EventRecord:
        """Format one event into an EventRecord. Never raises.

        Applies a sync ``format_hook``; an async hook cannot be awaited here, so its result
        is closed, logged once, and the default record is used (call ``format_event_async``
        from async code).
        """
        record = self._default_record(event)
        hook = self._hook
        if hook is None:
            return record
        try:
            result = hook(spawner, event, self._copy(record))
        except Exception:
            self._hook_failed(hook, record)
            return record
        if inspect.isawaitable(result):
            close = getattr(result, "close", None)
            if callable(close):
                close()
            self._log_once(
                ("hook-async", id(hook)),
                "richprogress: format_hook %r is async but was called from sync code "
                "(format_event); using default records there. Use format_event_async.",
                hook,
                exc_info=False,
            )
            return record
        return self._hook_result(hook, record, result)

    async def format_event_async(self, event: Mapping[str, Any], spawner: Any = None) -> EventRecord:
        """Like ``format_event``, but awaits an async ``format_hook``. Never raises."""
        record = self._default_record(event)
        hook = self._hook
        if hook is None:
            return record
        try:
            result = hook(spawner, event, self._copy(record))
            if inspect.isawaitable(result):
                result = await result
        except Exception:
            self._hook_failed(hook, record)
            return record
        return self._hook_result(hook, record, result)

    def format_message(
        self, message: str, *, id: str | None = None, timestamp: str | None = None
    ) -> EventRecord:
        """A record (type ``Custom``) for a progress message that is not a Kubernetes event.

        Rules are applied to the message (match field ``message``; ``type`` is "Custom").
        The hook is not called: there is no event to give it.
        """
        try:
            return self._build(normalize_message(message, id=id, timestamp=timestamp))
        except Exception:
            self._log_once(("format",), "richprogress: formatting a message failed; showing it raw")
            return self._safe_record({"message": message})
