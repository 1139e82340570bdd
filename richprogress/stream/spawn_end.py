"""The "spawn ended" notification point: one call per finished spawn, many listeners.

Modules that care about finished spawns (the spawn history, the metrics, the typical
times) hear about them here without the spawner knowing them. The spawner calls
``spawn_ended(spawner, timeline)`` once when a timeline finishes (ready, failed, or stopped
before it was ready); listeners registered with ``subscribe`` are called right there, on the
hub's event loop, so they must be quick (the history store only queues the write).

A listener that raises is logged and does not stop the others, nor the spawn. The failure
text of a ``start()`` that raised is worded here too (``failure_message``), beside the texts
that mean a person stopped the spawn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from richprogress.model.timeline import CANCELLED, STOPPED_MESSAGES, SpawnTimeline

EndOutcome = Literal["ready", "failed", "stopped"]


log = logging.getLogger("richprogress")


@dataclass(frozen=True)
class SpawnEnd:
    """What a listener receives: the spawner (read it getattr-safe), its finished
    timeline, and how the spawn ended."""

    spawner: Any
    timeline: SpawnTimeline
    outcome: EndOutcome


Listener = Callable[[SpawnEnd], None]
_listeners: list[Listener] = []


def subscribe(listener: Listener) -> Callable[[], None]:
    """Call ``listener`` for every spawn that ends from now on; returns the unsubscriber.

    Subscribing the same function twice keeps one subscription.
    """
    if listener not in _listeners:
        _listeners.append(listener)

    def unsubscribe() -> None:
        if listener in _listeners:
            _listeners.remove(listener)

    return unsubscribe


def failure_message(exc: BaseException | None, start_timeout: float, elapsed: float) -> str:
    """The failure text of a spawn whose ``start()`` raised ``exc`` after ``elapsed`` seconds.

    The hub's own start timeout cancels ``start()`` or raises a ``TimeoutError()`` that
    has no message: it is told by the time it came at.
    """
    if exc is not None and str(exc):
        return str(exc)
    if isinstance(exc, (TimeoutError, asyncio.CancelledError)) and start_timeout and elapsed >= 0.9 * start_timeout:
        return f"The server did not start within {start_timeout:g} seconds."
    if isinstance(exc, asyncio.CancelledError):
        return CANCELLED
    return f"The spawn failed ({type(exc).__name__})." if exc is not None else ""


def no_answer_message(url: str | None, http_timeout: float, waited: float) -> str | None:
    """The failure text of a spawn the hub stops after ``start()`` returned because its HTTP
    check of ``url`` got no answer: JupyterHub's own words (``wait_for_http_server``), which
    its error says a moment later. None when the stop came before ``http_timeout`` had
    passed (``waited``: seconds since ``start()`` returned): a person stopped it."""
    if not url or http_timeout <= 0 or waited < 0.9 * http_timeout:
        return None
    return f"Server at {url} didn't respond in {http_timeout:g} seconds"


def end_outcome(timeline: SpawnTimeline) -> EndOutcome:
    """``ready``, ``stopped`` (a person stopped it before it was ready) or ``failed``."""
    if timeline.outcome == "ready":
        return "ready"
    if timeline.outcome == "stopped" or timeline.failure_message in STOPPED_MESSAGES:
        return "stopped"
    return "failed"


def spawn_ended(spawner: Any, timeline: SpawnTimeline) -> None:
    """Tell every listener that ``timeline``'s spawn ended. Once per timeline; never raises."""
    if timeline.outcome == "pending" or getattr(timeline, "_end_told", False):
        return
    timeline._end_told = True  # type: ignore[attr-defined]
    end = SpawnEnd(spawner=spawner, timeline=timeline, outcome=end_outcome(timeline))
    for listener in list(_listeners):
        try:
            listener(end)
        except Exception:
            log.exception("richprogress: a spawn-ended listener failed; the spawn is not affected")
