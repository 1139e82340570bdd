"""Typical start times kept ready for pages, and the admin's settings for them.

Answer "how long do starts of this profile usually take?" in a dict
lookup. ``TypicalCache`` is fed at start by a loader (the spawn-history store's query) and
then by each spawn that ends, and recomputes a profile's numbers (``typical``'s pure
functions) only when one of its spawns ended or the window slid. ``TypicalTimes``
(``c.TypicalTimes``) holds the window, the minimum samples and the expected times for a new
hub that has no history yet. No Prometheus import here.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from traitlets import Dict, Float, Integer, TraitError, validate
from traitlets.config import LoggingConfigurable

from richprogress.model.records import PHASE_NAMES
from richprogress.model.settings import check_number, setting_name
from richprogress.model.times import utcnow
from richprogress.typical import statistics
from richprogress.typical.profile import profile_slug_of
from richprogress.typical.statistics import (
    DEFAULT_MAX_SAMPLES,
    DEFAULT_MIN_SAMPLES,
    Span,
    SpawnSummary,
    Typical,
    as_summary,
    merge_typical,
    recent_ready_by_profile,
    typical_of,
)

log = logging.getLogger(__name__)

_KNOWN_STEPS = frozenset(PHASE_NAMES)

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
            where = f"{setting_name(self, 'expected')}[{slug!r}]"
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

    # what each setting accepts (refusals and docs/configuration.md say the same)
    expected.tag(
        allowed="a dict: profile slug (or '*') -> {'total' or a step: seconds > 0, or [usual, 9 in 10 within]}"
    )
    window_days.tag(allowed="days, more than 0 and at most 36500")
    min_samples.tag(allowed="a whole number, at least 1")
    max_samples.tag(allowed="a whole number, at least 1")

    @validate("window_days")
    def _validate_window(self, proposal: Any) -> Any:
        # beyond a century the window's start date would overflow
        return check_number(self, proposal, above=0, most=36500)

    @validate("min_samples", "max_samples")
    def _validate_samples(self, proposal: Any) -> Any:
        return check_number(self, proposal, least=1)

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
    ``reload()``; after that, ``spawn_ended`` adds each finished spawn. With
    ``background=True`` (the hub's cache) that first load runs on a thread of its own, so
    no page view waits for the database: until it is done, pages get the admin's expected
    times alone. Only the latest
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
        background: bool = False,
    ) -> None:
        self.loader = loader
        self.background = background
        #: guards ``_recent`` between the loading thread and the event loop
        self._lock = threading.Lock()
        self._loading: threading.Thread | None = None
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
        groups = recent_ready_by_profile(summaries, self.clock(), self.settings.window)
        with self._lock:
            # spawns that ended while the loader ran, and that it did not see
            arrived = [s for recent in self._recent.values() for s in recent]
            self._recent = {}
            for slug, group in groups.items():
                group.sort(key=lambda s: s.finished)
                self._keep(slug).extend(group[-self.settings.max_samples :])
            for item in sorted(arrived, key=lambda s: s.finished):
                newest = self._recent.get(item.profile_slug)
                if not newest or item.finished > newest[-1].finished:
                    self._keep(item.profile_slug).append(item)
            self._computed.clear()

    def _ensure_loaded(self) -> None:
        """Load once: in place, or on a thread of its own with ``background``."""
        if self._loaded:
            return
        if not self.background or self.loader is None:
            self.reload()
            return
        self._loaded = True  # from now on, pages use what is there while the thread loads
        self._loading = threading.Thread(
            target=self.reload, name="rp-typical-load", daemon=True
        )
        self._loading.start()

    def wait_loaded(self, timeout: float | None = None) -> None:
        """Wait for a background load (tests, benchmarks)."""
        if self._loading is not None:
            self._loading.join(timeout)

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
        self._ensure_loaded()
        with self._lock:
            self._keep(item.profile_slug).append(item)
            self._computed.pop(item.profile_slug, None)

    def history(self, profile_slug: str | None) -> Typical | None:
        """Typical times from past spawns of a profile alone (None under the minimum)."""
        self._ensure_loaded()
        now = self.clock()
        cached = self._computed.get(profile_slug)
        if cached is not None and now - cached[0] < self.refresh_every:
            return cached[1]
        since = now - self.settings.window
        with self._lock:
            recent = [s for s in self._recent.get(profile_slug, ()) if since <= s.finished <= now]
        typical = typical_of(recent, self.settings.min_samples)
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
        _default_cache = TypicalCache(background=True)
    if config is not None and _default_cache.settings.config is not config:
        _default_cache.settings = TypicalTimes(config=config)
        _default_cache._computed.clear()
    return _default_cache


def typical_for_spawner(spawner: Any) -> Typical | None:
    """The typical times for a spawner's profile, from the hub's cache (a dict lookup);
    None when nothing is known or on any error (a page must not fail for them)."""
    try:
        return default_cache(getattr(spawner, "config", None)).get(profile_slug_of(spawner))
    except Exception:
        log.exception("richprogress: could not read typical start times")
        return None


def on_spawn_end(end: Any) -> None:
    """Add a spawn that got ready to the typical times: the listener ``setup(c)``
    subscribes to the spawn's end (``end`` carries ``spawner``, ``timeline`` and
    ``outcome``). Failed and stopped spawns do not count. Never raises."""
    try:
        timeline = end.timeline
        if timeline.outcome != "ready" or getattr(end, "outcome", "ready") != "ready":
            return
        spawner = end.spawner
        summary = statistics.summarize(timeline, profile_slug_of(spawner))
        default_cache(getattr(spawner, "config", None)).spawn_ended(summary)
    except Exception:
        log.exception("richprogress: could not record the end of a spawn in the typical times")
