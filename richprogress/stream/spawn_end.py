"""The "spawn ended" notification point: one call per finished spawn, many listeners.

One and only purpose: let modules that care about finished spawns (the spawn history, a
metrics module) hear about them without the spawner knowing them. The spawner calls
``spawn_ended(spawner, timeline)`` once when a timeline finishes (ready, failed, or stopped
before it was ready); listeners registered with ``subscribe`` are called right there, on the
hub's event loop, so they must be quick (the history store only queues the write).

A listener that raises is logged and does not stop the others, nor the spawn.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from richprogress.model.timeline import STOPPED_BEFORE_READY, SpawnTimeline

EndOutcome = Literal["ready", "failed", "stopped"]

#: failure texts that mean a person stopped the spawn (see ``RichProgressMixin``)
STOPPED_MESSAGES = frozenset({STOPPED_BEFORE_READY, "The spawn was cancelled."})

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


def end_outcome(timeline: SpawnTimeline) -> EndOutcome:
    """``ready``, ``stopped`` (a person stopped it before it was ready) or ``failed``."""
    if timeline.outcome == "ready":
        return "ready"
    if timeline.outcome == "stopped" or timeline.failure_message in STOPPED_MESSAGES:
        return "stopped"
    return "failed"


def spawn_ended(spawner: Any, timeline: SpawnTimeline) -> None:
    """Tell every listener that ``timeline``'s spawn ended. Once per timeline; never raises."""
    if timeline.outcome == "pending" or getattr(timeline, "_rp_end_told", False):
        return
    timeline._rp_end_told = True  # type: ignore[attr-defined]
    end = SpawnEnd(spawner=spawner, timeline=timeline, outcome=end_outcome(timeline))
    for listener in list(_listeners):
        try:
            listener(end)
        except Exception:
            log.exception("richprogress: a spawn-ended listener failed; the spawn is not affected")
