"""Admins' own rows on a spawn's timeline: ``note()``, and the rows of a hub hook that failed.

Work done in ``pre_spawn_hook``, ``auth_state_hook``, ``modify_pod_hook`` or an admin's own
``start()`` (copying course files, creating a volume, asking an API) was invisible to the
user waiting on the page. ``note(spawner, "Copying your course files")`` puts a row on the
spawn's timeline: live on the page's stream, on the failure page, in "Copy details", in the
JSON and in the stored history, like any event. It is a plain function, not a coroutine,
so sync and async hooks call it the same way: it only adds a record and wakes the readers.

A hook that raises becomes a row too (``hook_failed``): "The hub's pre-spawn step failed:
<the exception's text>", an error the waiting cannot fix, which the diagnosis picks as the
cause. The exception's text is written by whoever wrote the hook, or by a library it
called (a path, an HTTP answer): it is made one line, its controls escaped and cut short,
as event text is (``model.display``); its traceback stays in the hub's log.

No JupyterHub or Kubernetes import here.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from richprogress.model.display import display_line
from richprogress.model.records import PHASE_NAMES, SEVERITIES, EventRecord
from richprogress.model.timeline import SpawnTimeline
from richprogress.model.times import isoformat_z, utcnow
from richprogress.stream.broadcast import TimelineBroadcast

__all__ = ["HOOK_STEPS", "NOTE_LIMIT", "NOTE_RULE", "hook_failed", "hook_guarded", "note", "run_guarded"]

#: the ``rule`` of every record ``note()`` and ``hook_failed`` make (``EventRecord``)
NOTE_RULE = "note"
#: the ``component`` of those records: the hub said it, not Kubernetes
NOTE_COMPONENT = "hub"
#: the ``reason`` of a failed hook's row (a note has none: its sentence says it all)
HOOK_FAILED_REASON = "HookFailed"
#: the longest note, hint or exception text kept (a row is a sentence, not a log)
NOTE_LIMIT = 500

#: the step each guarded hook is, as the failure sentence names it
HOOK_STEPS: dict[str, str] = {
    "pre_spawn_hook": "pre-spawn step",
    "auth_state_hook": "sign-in step",
    "modify_pod_hook": "pod set-up step",
}

#: what the user can do about a failed hook: nothing but tell an admin (the hub's own
#: configuration failed, not their server)
HOOK_FAILED_HINT = (
    "This is a problem in the hub's set-up, not in your server: ask your administrator for "
    "help and send them this page."
)


def _check(message: Any, phase: Any, severity: Any, hint: Any) -> None:
    """A TypeError or ValueError naming the argument to fix."""
    if not isinstance(message, str):
        raise TypeError(f"richprogress.note: message must be a str, not {type(message).__name__}")
    if not message.strip():
        raise ValueError("richprogress.note: message is empty")
    if not isinstance(phase, str) or phase not in PHASE_NAMES:
        raise ValueError(f"richprogress.note: phase must be one of {', '.join(PHASE_NAMES)}; not {phase!r}")
    if not isinstance(severity, str) or severity not in SEVERITIES:
        raise ValueError(
            f"richprogress.note: severity must be one of {', '.join(SEVERITIES)}; not {severity!r}"
        )
    if hint is not None and not isinstance(hint, str):
        raise TypeError(f"richprogress.note: hint must be a str or None, not {type(hint).__name__}")


class NoSpawn(Exception):
    """The spawner has no spawn in progress (its text says so)."""


def _on_a_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _check_spawner(spawner: Any) -> None:
    """A TypeError for a spawner without richprogress, a RuntimeError off the hub's loop."""
    if not callable(getattr(spawner, "_rp_timeline_for_progress", None)):
        raise TypeError(
            f"richprogress.note: {type(spawner).__name__} does not use richprogress: make the "
            "spawner class richprogress.RichKubeSpawner, or put richprogress.RichProgressMixin "
            "first in its bases"
        )
    # the timeline and its readers' futures belong to the hub's loop (its main thread)
    if not _on_a_loop() and threading.current_thread() is not threading.main_thread():
        raise RuntimeError(
            "richprogress.note: call it on the hub's event loop (hooks and start() run there); "
            "from a thread, use loop.call_soon_threadsafe(richprogress.note, spawner, ...)"
        )


def _spawn_of(spawner: Any) -> tuple[SpawnTimeline, TimelineBroadcast]:
    """The timeline (and its readers' channel) of the spawn ``spawner`` is running;
    ``NoSpawn`` when none is."""
    if not (getattr(spawner, "_spawn_pending", False) or getattr(spawner, "_rp_in_start", False)):
        raise NoSpawn("no spawn of this server is in progress")
    timeline: SpawnTimeline = spawner._rp_timeline_for_progress()
    if timeline.outcome != "pending":
        raise NoSpawn("this server's spawn has already ended")
    return timeline, spawner._rp_broadcast(timeline)


def _previous(timeline: SpawnTimeline, record_id: str) -> EventRecord | None:
    return next((r for r in reversed(timeline.records()) if r.get("id") == record_id), None)


def note_record(
    timeline: SpawnTimeline,
    message: str,
    *,
    phase: str,
    severity: str,
    hint: str | None,
    raw: str | None = None,
    reason: str | None = None,
    fatal: bool = False,
) -> EventRecord:
    """The record of one note (arguments already checked): a repeat of the same note on the
    same spawn is the same row, whose ``count`` grows, as a repeated event's does."""
    text = display_line(message, NOTE_LIMIT)
    raw_text = display_line(raw, NOTE_LIMIT) if raw is not None else text
    digest = hashlib.blake2b(
        "\x1f".join((str(timeline.started_ts), phase, severity, reason or "", text)).encode("utf-8", "replace"),
        digest_size=10,
    ).hexdigest()
    record_id = f"note-{digest}"
    now = isoformat_z(utcnow())
    before: dict[str, Any] = dict(_previous(timeline, record_id) or {})
    record: EventRecord = {
        "id": record_id,
        "timestamp": now,
        "first_timestamp": before.get("first_timestamp") or now,
        # the pills read the type as Kubernetes' two: a problem is a Warning
        "type": "Normal" if severity == "info" else "Warning",
        "severity": severity,
        "reason": reason,
        "object": {"kind": None, "name": None, "container": None, "field_path": None},
        "component": NOTE_COMPONENT,
        "count": int(before.get("count") or 0) + 1,
        "message": text,
        "raw_message": raw_text,
        "rule": NOTE_RULE,
        "phase": phase,
    }
    if hint is not None and hint.strip():
        record["hint"] = display_line(hint, NOTE_LIMIT)
    if fatal:
        record["fatal"] = True
    return record


def note(
    spawner: Any,
    message: str,
    *,
    phase: str = "requested",
    severity: str = "info",
    hint: str | None = None,
) -> str | None:
    """Put a row saying ``message`` on the timeline of the spawn ``spawner`` is running.

    For hooks and ``start()`` (sync or async: nothing to await). ``phase``: the step it is
    about (``richprogress.model.records.PHASE_NAMES``; the progress bar moves to it);
    ``severity``: ``info``, ``warning`` (the page shows it as a problem) or ``error``;
    ``hint``: what the user can do. Plain text only: the pages never read it as HTML, and
    it is made one line and cut to ``NOTE_LIMIT`` characters. The same note again on the
    same spawn counts up on its row. Returns the row's ``id``; None (and a warning in the hub's
    log) when the server has no spawn in progress: JupyterHub runs ``auth_state_hook`` to
    show the spawn form too, and ``options_from_form`` before the spawn exists.

    Example::

        import richprogress

        async def copy_course(spawner):
            richprogress.note(spawner, "Copying your course files")
            await copy_files(spawner.user.name)

        c.Spawner.pre_spawn_hook = copy_course

    Raises TypeError or ValueError naming the argument to fix, and TypeError for a spawner
    without richprogress.
    """
    _check(message, phase, severity, hint)
    _check_spawner(spawner)
    try:
        timeline, broadcast = _spawn_of(spawner)
    except NoSpawn as why:
        # not an error of the caller's: JupyterHub also runs auth_state_hook to show the
        # spawn form, and options_from_form before the spawn exists. A note must never
        # break the hub's own flow; the log says where it went
        log = getattr(spawner, "log", None) or logging.getLogger("richprogress")
        log.warning("richprogress.note: %s; not shown: %s", why, display_line(message, 200))
        return None
    record = note_record(timeline, message, phase=phase, severity=severity, hint=hint)
    _add(spawner, timeline, broadcast, record)
    return record["id"]


def _add(spawner: Any, timeline: SpawnTimeline, broadcast: TimelineBroadcast, record: EventRecord) -> None:
    spawner._rp_add_record(timeline, broadcast, record)
    broadcast.notify()


def exception_text(exc: BaseException) -> str:
    """What a failed hook's row quotes: the exception's own text (its class name when it has
    none), never its traceback."""
    text = str(exc).strip()
    return text or type(exc).__name__


def hook_failed(spawner: Any, hook: str, exc: BaseException, *, end: bool) -> str | None:
    """Add the row of hook ``hook`` (a ``HOOK_STEPS`` key) that raised ``exc``; with
    ``end``, also end the spawn as failed with the row's sentence (the hook ran before
    ``start()``, which then never runs). The sentence, or None when no spawn of this
    spawner is in progress. Never raises: the hook's own exception is what matters."""
    try:
        timeline, broadcast = _spawn_of(spawner)
    except NoSpawn:
        return None  # e.g. auth_state_hook run for the spawn form: JupyterHub shows that error
    step = HOOK_STEPS.get(hook, "set-up step")
    quoted = exception_text(exc)
    sentence = f"The hub's {step} failed: {quoted}"
    record = note_record(
        timeline,
        sentence,
        phase="requested",
        severity="error",
        hint=HOOK_FAILED_HINT,
        raw=quoted,
        reason=HOOK_FAILED_REASON,
        fatal=True,
    )
    _add(spawner, timeline, broadcast, record)
    sentence = record["message"]
    if end:
        from richprogress.stream.spawn_end import spawn_ended

        timeline.finish("failed", sentence)
        broadcast.notify()
        spawn_ended(spawner, timeline)
    return sentence


async def run_guarded(spawner: Any, hook: str, run: Callable[[], Any], *, end: bool) -> Any:
    """``run()`` (a hook runner, sync or async), with its failure made a row
    (``hook_failed``); the exception goes on to JupyterHub unchanged."""
    try:
        result = run()
        if isinstance(result, Awaitable):
            result = await result
        return result
    except Exception as exc:
        hook_failed(spawner, hook, exc, end=end)
        raise


def guarded_hook(spawner: Any, hook: str, function: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """``function`` (a hook trait's value, called with the spawner and more) wrapped so that
    its failure is a row; for a hook that runs inside ``start()`` (``modify_pod_hook``)."""

    async def guarded(*args: Any, **kwargs: Any) -> Any:
        return await run_guarded(spawner, hook, lambda: function(*args, **kwargs), end=False)

    guarded.__wrapped__ = function  # type: ignore[attr-defined]
    return guarded


@contextmanager
def hook_guarded(spawner: Any, hook: str) -> Iterator[None]:
    """While the block runs, the spawner's hook trait ``hook`` (e.g. ``modify_pod_hook``,
    which KubeSpawner calls inside ``start()``) is wrapped by ``guarded_hook``; the admin's
    own function is put back after. Nothing changes when the hook is not set."""
    function = getattr(spawner, hook, None)
    if function is None or getattr(function, "__wrapped__", None) is not None:
        yield
        return
    setattr(spawner, hook, guarded_hook(spawner, hook, function))
    try:
        yield
    finally:
        setattr(spawner, hook, function)
