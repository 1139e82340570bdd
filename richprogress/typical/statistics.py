"""How long a start usually takes: p50/p90 of past spawns, per profile and per step.

Typical durations from spawn summaries, as pure functions
(``typical_durations``, ``typical_by_profile``, ``merge_typical``). ``typical_cache`` keeps
them ready for page views and holds the admin's configuration; ``typical_words`` says them
in words. No JupyterHub, Kubernetes or Prometheus import here.

Only successful starts count: a failed spawn's length says how long it took to give up.
On a cluster that sometimes adds a machine, starts are of two kinds: warm (a machine has
room, seconds) and cold (a scale-up, minutes). The p50 of the whole start then tells the
usual wait and the p90 the cold one; the ``scaling`` step has its own numbers, taken from
the cold starts alone, because a warm start has no such step.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Literal, TypedDict

from richprogress.model.records import PHASE_NAMES
from richprogress.model.timeline import SpawnTimeline
from richprogress.model.times import parse_timestamp, utcnow
from richprogress.story.steps import step_durations

DEFAULT_MIN_SAMPLES = 5
DEFAULT_WINDOW = timedelta(days=14)
DEFAULT_MAX_SAMPLES = 500
_KNOWN_STEPS = frozenset(PHASE_NAMES)


class Span(TypedDict):
    """Typical length of a start or a step, in seconds; ``samples`` spawns behind it
    (0 when it comes from the admin's configuration)."""

    p50: float
    p90: float
    samples: int


class Typical(TypedDict):
    """What the timeline JSON serves as ``typical`` (None when nothing is known)."""

    samples: int
    total: Span | None
    steps: dict[str, Span]
    source: Literal["history", "config", "history+config"]


@dataclass(frozen=True)
class SpawnSummary:
    """One past spawn, as much as typical times need of it."""

    finished: datetime
    outcome: str
    total_seconds: float | None
    steps: Mapping[str, float] = field(default_factory=dict)
    profile_slug: str | None = None


def as_summary(item: SpawnSummary | Mapping[str, Any]) -> SpawnSummary | None:
    """A ``SpawnSummary`` from itself or from a dict, such as a row of the spawn-history
    store; None when the dict has no usable finish time.

    Keys: ``finished`` (or ``finished_at``; a datetime, naive = UTC, or an ISO string),
    ``outcome``, ``total_seconds`` (or ``elapsed``), ``profile_slug``, and ``steps``: a dict
    step -> seconds, or a list of ``{"phase", "duration"}`` items as
    ``diagnose.step_durations`` returns them (summed per step).
    """
    if isinstance(item, SpawnSummary):
        return item
    finished = item.get("finished", item.get("finished_at"))
    if isinstance(finished, datetime):
        moment: datetime | None = finished if finished.tzinfo else finished.replace(tzinfo=timezone.utc)
    else:
        moment = parse_timestamp(finished)
    if moment is None:
        return None
    total = item.get("total_seconds", item.get("elapsed"))
    return SpawnSummary(
        finished=moment,
        outcome=str(item.get("outcome") or ""),
        total_seconds=float(total) if _is_number(total) else None,
        steps=_steps_of(item.get("steps")),
        profile_slug=item.get("profile_slug"),
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _steps_of(steps: Any) -> dict[str, float]:
    out: dict[str, float] = {}
    if isinstance(steps, Mapping):
        pairs: Iterable[tuple[Any, Any]] = steps.items()
    elif isinstance(steps, (list, tuple)):
        pairs = ((s.get("phase"), s.get("duration")) for s in steps if isinstance(s, Mapping))
    else:
        return out
    for step, seconds in pairs:
        if isinstance(step, str) and _is_number(seconds):
            out[step] = out.get(step, 0.0) + float(seconds)
    return out


def step_seconds(timeline: SpawnTimeline) -> dict[str, float]:
    """Seconds a spawn spent in each step, summed when a step comes back (an init
    container's image, then the main one). The numbers the failure page shows
    (``diagnose.step_durations``)."""
    totals: dict[str, float] = {}
    for step in step_durations(timeline.records(), timeline.started_at, timeline.finished_at):
        duration = step.get("duration")
        if duration is None:
            continue
        totals[step["phase"]] = totals.get(step["phase"], 0.0) + float(duration)
    return totals


def summarize(timeline: SpawnTimeline, profile_slug: str | None) -> SpawnSummary:
    """The summary of a finished spawn's timeline."""
    return SpawnSummary(
        finished=timeline.finished_at or utcnow(),
        outcome=timeline.outcome,
        total_seconds=timeline.elapsed(),
        steps=step_seconds(timeline),
        profile_slug=profile_slug,
    )


# -- the numbers -----------------------------------------------------------------------------


def percentile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of sorted values, interpolated between the closest ranks
    (numpy's default). ``ordered`` must be sorted and not empty."""
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _span(values: list[float], min_samples: int) -> Span | None:
    if len(values) < max(1, min_samples):
        return None
    values.sort()
    return Span(
        p50=round(percentile(values, 0.5), 3),
        p90=round(percentile(values, 0.9), 3),
        samples=len(values),
    )


def typical_of(recent: Iterable[SpawnSummary], min_samples: int) -> Typical | None:
    """Typical times of summaries already chosen (successful starts in the window); None
    when neither the total nor any step has ``min_samples`` values."""
    totals: list[float] = []
    by_step: dict[str, list[float]] = {}
    count = 0
    for summary in recent:
        count += 1
        if summary.total_seconds is not None:
            totals.append(summary.total_seconds)
        for step, seconds in summary.steps.items():
            if step in _KNOWN_STEPS:
                by_step.setdefault(step, []).append(seconds)
    total = _span(totals, min_samples)
    steps = {}
    for step in PHASE_NAMES:  # step order, for readers of the JSON
        span = _span(by_step.get(step, []), min_samples)
        if span is not None:
            steps[step] = span
    if total is None and not steps:
        return None
    return Typical(samples=count, total=total, steps=steps, source="history")



def recent_ready_by_profile(
    summaries: Iterable[SpawnSummary | Mapping[str, Any]],
    now: datetime,
    window: timedelta,
) -> dict[str | None, list[SpawnSummary]]:
    """Successful starts finished within ``window`` before ``now``, by profile slug."""
    since = now - window
    groups: dict[str | None, list[SpawnSummary]] = {}
    for item in summaries:
        summary = as_summary(item)
        if summary is None or summary.outcome != "ready" or not since <= summary.finished <= now:
            continue
        groups.setdefault(summary.profile_slug, []).append(summary)
    return groups


def _latest(group: list[SpawnSummary], max_samples: int) -> list[SpawnSummary]:
    if len(group) <= max_samples:
        return group
    return heapq.nlargest(max_samples, group, key=lambda s: s.finished)


def typical_by_profile(
    summaries: Iterable[SpawnSummary | Mapping[str, Any]],
    *,
    now: datetime | None = None,
    window: timedelta = DEFAULT_WINDOW,
    min_samples: int = DEFAULT_MIN_SAMPLES,
    max_samples: int = DEFAULT_MAX_SAMPLES,
) -> dict[str | None, Typical]:
    """Typical times of every profile, in one pass over the summaries.

    Per profile: the latest ``max_samples`` successful starts that finished within
    ``window`` (so a changed cluster shows within days); a total or step with fewer than
    ``min_samples`` values is left out, and a profile with nothing left is absent.
    """
    groups = recent_ready_by_profile(summaries, now or utcnow(), window)
    out: dict[str | None, Typical] = {}
    for slug, group in groups.items():
        typical = typical_of(_latest(group, max_samples), min_samples)
        if typical is not None:
            out[slug] = typical
    return out


def typical_durations(
    summaries: Iterable[SpawnSummary | Mapping[str, Any]],
    profile_slug: str | None,
    *,
    now: datetime | None = None,
    window: timedelta = DEFAULT_WINDOW,
    min_samples: int = DEFAULT_MIN_SAMPLES,
    max_samples: int = DEFAULT_MAX_SAMPLES,
) -> Typical | None:
    """Typical times of one profile (see ``typical_by_profile``); None under
    ``min_samples`` successful starts."""
    return typical_by_profile(
        (s for s in summaries if _slug_of(s) == profile_slug),
        now=now,
        window=window,
        min_samples=min_samples,
        max_samples=max_samples,
    ).get(profile_slug)


def _slug_of(item: SpawnSummary | Mapping[str, Any]) -> str | None:
    return item.profile_slug if isinstance(item, SpawnSummary) else item.get("profile_slug")


def merge_typical(history: Typical | None, expected: Typical | None) -> Typical | None:
    """History where it has enough samples; the admin's expected times fill the rest."""
    if history is None or expected is None:
        return history or expected
    steps = {**expected["steps"], **history["steps"]}
    return Typical(
        samples=history["samples"],
        total=history["total"] or expected["total"],
        steps={step: steps[step] for step in PHASE_NAMES if step in steps},
        source="history" if steps == history["steps"] and history["total"] else "history+config",
    )
