"""What happens once when a spawn ends: metrics and typical times hear about it.

One and only purpose: collect the facts of a finished spawn from its spawner (profile slug,
diagnosis, whether fail-fast ended it) and pass them on to ``metrics.observe_spawn_end``
and the typical-time cache. ``setup(c)`` subscribes ``on_spawn_end`` to the one "spawn
ended" point (``spawn_events``), which the spawn-history store listens to as well. Never
raises: a spawn must not fail because its metrics could not be written.
"""

from __future__ import annotations

import logging
import weakref
from typing import Any

from .diagnose import Diagnosis, diagnose
from .timeline import SpawnTimeline

log = logging.getLogger(__name__)

#: the timelines already announced: each spawn's end is told once
_announced: weakref.WeakSet[SpawnTimeline] = weakref.WeakSet()


def spawn_ended(spawner: Any, timeline: SpawnTimeline, *, outcome: str | None = None) -> None:
    """Tell the metrics and the typical-time cache that ``timeline`` finished.

    ``outcome`` overrides the timeline's (``stopped`` for a stop before the server was
    ready). A second call for the same timeline does nothing.
    """
    try:
        if timeline in _announced or timeline.outcome == "pending":
            return
        _announced.add(timeline)
        from . import metrics, typical, typical_cache

        slug = typical_cache.profile_slug_of(spawner)
        diagnosis: Diagnosis | None = None
        if timeline.outcome == "failed" and outcome != "stopped":
            diagnosis = diagnose(timeline.records(), timeline.failure_message)
        formatter = getattr(spawner, "event_formatter", None)
        if formatter is not None:
            metrics.register_rule_ids(rule.id for rule in formatter.ruleset.rules)
        metrics.observe_spawn_end(
            timeline,
            profile_slug=slug,
            diagnosis=diagnosis,
            # issue 9 (fail-fast) marks the timeline it ended early
            stopped_early=bool(getattr(timeline, "stopped_early", False)),
            outcome=outcome,
        )
        if timeline.outcome == "ready" and outcome in (None, "ready"):
            typical_cache.default_cache(getattr(spawner, "config", None)).spawn_ended(typical.summarize(timeline, slug))
    except Exception:
        log.exception("richprogress: could not record the end of a spawn")


def on_spawn_end(end: Any) -> None:
    """``spawn_ended`` as a listener of a "spawn ended" notification that passes one object
    with ``spawner``, ``timeline`` and ``outcome`` (``ready``, ``failed`` or ``stopped``):
    the shape the spawn-history branch (issue 10) gives its listeners, so the two can share
    one notification point."""
    spawn_ended(end.spawner, end.timeline, outcome=getattr(end, "outcome", None))
