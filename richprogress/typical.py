"""How long a start usually takes: p50/p90 of past spawns, per profile and per step.

One and only purpose: typical durations from spawn summaries. Pure functions do the
numbers (``typical_durations``, ``typical_by_profile``); ``TypicalCache`` keeps them ready
so a page view costs a dict lookup, refreshed as spawns end, and fed at start by a loader
(the spawn-history store supplies it); ``TypicalTimes`` is the admin's configuration,
including expected times for a new hub that has no history yet. The words live in
``typical_words``. No JupyterHub, Kubernetes or Prometheus import here.

Only successful starts count: a failed spawn's length says how long it took to give up.
On a cluster that sometimes adds a machine, starts are of two kinds: warm (a machine has
room, seconds) and cold (a scale-up, minutes). The p50 of the whole start then tells the
usual wait and the p90 the cold one; the ``scaling`` step has its own numbers, taken from
the cold starts alone, because a warm start has no such step.
"""

from __future__ import annotations

import heapq
import logging
import math
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Literal, TypedDict

from traitlets import Dict, Float, Integer, TraitError, validate
from traitlets.config import LoggingConfigurable

from .diagnose import step_durations
from .records import PHASE_NAMES
from .timeline import SpawnTimeline, parse_timestamp, utcnow

log = logging.getLogger(__name__)

DEFAULT_MIN_SAMPLES = 5
DEFAULT_WINDOW = timedelta(days=14)
DEFAULT_MAX_SAMPLES = 500


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


def _typical_of(recent: Iterable[SpawnSummary], min_samples: int) -> Typical | None:
    """Typical times of summaries already chosen (ready, in the window, latest first)."""
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


_KNOWN_STEPS = frozenset(PHASE_NAMES)


def _recent_ready(
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
    groups = _recent_ready(summaries, now or utcnow(), window)
    out: dict[str | None, Typical] = {}
    for slug, group in groups.items():
        typical = _typical_of(_latest(group, max_samples), min_samples)
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


# -- configuration ---------------------------------------------------------------------------

ANY_PROFILE = "*"


def _as_span(value: Any) -> Span | None:
    """A configured time: seconds (p50, with p90 = 1.5 x p50) or ``[p50, p90]``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and value > 0:
        return Span(p50=float(value), p90=float(value) * 1.5, samples=0)
    if (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        and 0 < value[0] <= value[1]
    ):
        return Span(p50=float(value[0]), p90=float(value[1]), samples=0)
    return None


class TypicalTimes(LoggingConfigurable):
    """Typical start times: how they are computed, and what to expect on a new hub."""

    expected = Dict(
        config=True,
        help="""
        Expected start and step times, for a hub without enough history yet.

        Keyed by profile slug (``"*"`` for any profile), then by ``"total"`` or a step name
        (``requested``, ``scheduling``, ``scaling``, ``scheduled``, ``volume``, ``image``,
        ``starting``); a value is seconds (the usual time; 9 in 10 within 1.5 times it) or
        ``[usual, 9 in 10 within]``. Past spawns win once there are ``min_samples``.

        Example::

            c.TypicalTimes.expected = {
                "*": {"total": [60, 180], "scaling": [120, 240]},
                "gpu": {"total": [300, 600], "image": 240},
            }
        """,
    )

    window_days = Float(
        14.0,
        config=True,
        help="Only spawns that finished within this many days count (a changed cluster shows soon).",
    )

    min_samples = Integer(
        DEFAULT_MIN_SAMPLES,
        config=True,
        help="Fewest successful starts (of a profile, or of a step) before their times are shown.",
    )

    max_samples = Integer(
        DEFAULT_MAX_SAMPLES,
        config=True,
        help="Most recent successful starts per profile that count (bounds the work and the memory).",
    )

    @validate("expected")
    def _validate_expected(self, proposal: Any) -> Any:
        value = proposal["value"]
        for slug, times in value.items():
            where = f"TypicalTimes.expected[{slug!r}]"
            if not isinstance(slug, str) or not isinstance(times, Mapping):
                raise TraitError(f"{where} must map a profile slug to a dict of times")
            for key, seconds in times.items():
                if key != "total" and key not in _KNOWN_STEPS:
                    raise TraitError(
                        f"{where}: unknown key {key!r}; use 'total' or a step: "
                        + ", ".join(PHASE_NAMES)
                    )
                if _as_span(seconds) is None:
                    raise TraitError(
                        f"{where}[{key!r}] = {seconds!r}: give seconds (> 0) or "
                        "[usual, 9 in 10 within] with 0 < usual <= 9-in-10"
                    )
        return value

    @validate("window_days", "min_samples", "max_samples")
    def _validate_positive(self, proposal: Any) -> Any:
        if proposal["value"] <= 0:
            raise TraitError(f"TypicalTimes.{proposal['trait'].name} must be greater than 0")
        return proposal["value"]

    @property
    def window(self) -> timedelta:
        return timedelta(days=self.window_days)

    def expected_for(self, profile_slug: str | None) -> Typical | None:
        """The configured times for a profile (its own entry over ``"*"``), or None."""
        merged: dict[str, Any] = {**self.expected.get(ANY_PROFILE, {})}
        if profile_slug is not None and profile_slug != ANY_PROFILE:
            merged.update(self.expected.get(profile_slug, {}))
        if not merged:
            return None
        steps = {
            step: span
            for step in PHASE_NAMES
            if step in merged and (span := _as_span(merged[step])) is not None
        }
        return Typical(samples=0, total=_as_span(merged.get("total")), steps=steps, source="config")


# -- the cache -------------------------------------------------------------------------------

Loader = Callable[[], Iterable[SpawnSummary | Mapping[str, Any]]]


class TypicalCache:
    """Typical times kept ready: a page view costs a dict lookup, not a query.

    ``loader`` (the store's "past spawns" query) is called once, on the first ``get`` or on
    ``reload()``; after that, ``spawn_ended`` adds each finished spawn. Only the latest
    ``max_samples`` successful starts per profile are kept, and a profile's numbers are
    recomputed when a spawn of it ended or when they are older than ``refresh_every`` (the
    window slides). Without a loader, the history starts at the hub's start.
    """

    def __init__(
        self,
        loader: Loader | None = None,
        *,
        settings: TypicalTimes | None = None,
        clock: Callable[[], datetime] = utcnow,
        refresh_every: timedelta = timedelta(hours=1),
    ) -> None:
        self.loader = loader
        self.settings = settings or TypicalTimes()
        self.clock = clock
        self.refresh_every = refresh_every
        self._recent: dict[str | None, deque[SpawnSummary]] = {}
        self._computed: dict[str | None, tuple[datetime, Typical | None]] = {}
        self._loaded = False

    def reload(self) -> None:
        """Read the loader's summaries again (e.g. at hub start). A failing loader is
        logged, and the cache keeps what it had."""
        self._loaded = True
        if self.loader is None:
            return
        try:
            summaries = list(self.loader())
        except Exception:
            log.exception("richprogress: could not load past spawns for typical times")
            return
        groups = _recent_ready(summaries, self.clock(), self.settings.window)
        self._recent = {}
        for slug, group in groups.items():
            group.sort(key=lambda s: s.finished)
            self._keep(slug).extend(group[-self.settings.max_samples :])
        self._computed.clear()

    def _keep(self, slug: str | None) -> deque[SpawnSummary]:
        recent = self._recent.get(slug)
        if recent is None or recent.maxlen != self.settings.max_samples:
            recent = deque(recent or (), maxlen=self.settings.max_samples)
            self._recent[slug] = recent
        return recent

    def spawn_ended(self, summary: SpawnSummary | Mapping[str, Any]) -> None:
        """Take in a finished spawn (only successful starts count)."""
        item = as_summary(summary)
        if item is None or item.outcome != "ready":
            return
        if not self._loaded:
            self.reload()
        self._keep(item.profile_slug).append(item)
        self._computed.pop(item.profile_slug, None)

    def history(self, profile_slug: str | None) -> Typical | None:
        """Typical times from past spawns of a profile alone (None under the minimum)."""
        if not self._loaded:
            self.reload()
        now = self.clock()
        cached = self._computed.get(profile_slug)
        if cached is not None and now - cached[0] < self.refresh_every:
            return cached[1]
        since = now - self.settings.window
        recent = [s for s in self._recent.get(profile_slug, ()) if since <= s.finished <= now]
        typical = _typical_of(recent, self.settings.min_samples)
        self._computed[profile_slug] = (now, typical)
        return typical

    def get(self, profile_slug: str | None) -> Typical | None:
        """Typical times for a profile: past spawns, with the admin's expected times where
        there are too few; None when neither says anything (the page reads as without)."""
        return merge_typical(self.history(profile_slug), self.settings.expected_for(profile_slug))


_default_cache: TypicalCache | None = None


def default_cache(config: Any = None) -> TypicalCache:
    """The hub's cache (one per process). The store sets ``default_cache().loader``.

    With ``config`` (the hub's, e.g. a spawner's ``config``), its ``c.TypicalTimes``
    settings apply.
    """
    global _default_cache
    if _default_cache is None:
        _default_cache = TypicalCache()
    if config is not None and _default_cache.settings.config is not config:
        _default_cache.settings = TypicalTimes(config=config)
        _default_cache._computed.clear()
    return _default_cache


def profile_slug_of(spawner: Any) -> str | None:
    """The slug of the profile a spawner started with (KubeSpawner keeps it in
    ``user_options["profile"]``); None without profiles."""
    options = getattr(spawner, "user_options", None)
    if isinstance(options, dict):
        slug = options.get("profile")
        if isinstance(slug, str) and slug:
            return slug
    return None


def typical_for_spawner(spawner: Any) -> Typical | None:
    """The typical times for a spawner's profile, from the hub's cache (a dict lookup);
    None when nothing is known or on any error (a page must not fail for them)."""
    try:
        return default_cache(getattr(spawner, "config", None)).get(profile_slug_of(spawner))
    except Exception:
        log.exception("richprogress: could not read typical start times")
        return None
