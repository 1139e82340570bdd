"""Prometheus metrics of finished spawns.

Turn each finished spawn into a few Prometheus samples. This is the
only module that imports ``prometheus_client``. The metrics live in its default registry,
so JupyterHub's own ``/hub/metrics`` serves them with its ``jupyterhub_*`` metrics.

- ``richprogress_spawn_duration_seconds{outcome, profile}``: request to ready / failure;
- ``richprogress_spawn_step_duration_seconds{step, outcome}``: time spent in each step;
- ``richprogress_spawn_failures_total{cause, step}``: failed spawns by the decisive rule's
  id (or ``timeout`` / ``unknown``) and the step they died in;
- ``richprogress_spawn_stopped_early_total{cause}``: spawns that fail-fast ended itself;
- ``richprogress_store_errors_total{operation}``: spawn-history store errors;
- ``richprogress_store_spool_events_total{event}``: the history's spool: spawns that waited
  for the database, were stored after waiting, found the spool full or unwritable, and
  spool lines that could not be read.

Label values come from small, fixed sets (so a scrape stays small), never from user names, image names
or free text: a value outside its set becomes ``other``. ``observe_spawn_end`` is the entry
point; it counts each spawn once and never raises (metrics must not break a spawn).
"""

from __future__ import annotations

import logging
import re
import threading
import weakref
from collections.abc import Iterable
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram

from richprogress.model.records import PHASE_NAMES
from richprogress.model.timeline import SpawnTimeline
from richprogress.story.causes import TIMEOUT, UNKNOWN, failure_cause
from richprogress.story.diagnosis import Diagnosis, diagnose
from richprogress.typical.profile import profile_slug_of
from richprogress.typical.statistics import step_seconds

log = logging.getLogger(__name__)

#: the timelines already counted: each spawn's end is counted once
_counted: weakref.WeakSet[SpawnTimeline] = weakref.WeakSet()

OTHER = "other"
#: The profile label of a spawn without a profile (no ``profile_list``).
NO_PROFILE = "none"
#: How a finished spawn ended, as the ``outcome`` label says it.
OUTCOMES: tuple[str, ...] = ("ready", "failed", "stopped")
#: The store operations that ``count_store_error`` knows.
STORE_OPERATIONS: tuple[str, ...] = ("write", "read", "prune", "connect")
#: the spool's events (``richprogress.history.spool.SPOOL_EVENTS``, which this layer may not
#: import; a test checks the two agree)
SPOOL_EVENTS: tuple[str, ...] = ("waiting", "replayed", "full", "unwritable", "skipped", "refused")
#: Profiles admitted first-come before the rest become ``other``: a hub has a handful.
MAX_PROFILES = 50
#: Rule ids admitted first-come beyond the loaded rules (registered by the spawner, the
#: admin's own included): only a hook that sets ``rule`` itself makes such ids.
MAX_EXTRA_RULES = 20

# A start takes seconds (warm node, cached image) to tens of minutes (a scale-up and a
# multi-GB pull); the buckets are dense where p50/p90 usually fall (30 s - 10 min). Few
# buckets on purpose: each one is a line per label set in every scrape.
SPAWN_BUCKETS: tuple[float, ...] = (10, 20, 30, 45, 60, 90, 120, 180, 240, 300, 420, 600, 900, 1800, 3600)
STEP_BUCKETS: tuple[float, ...] = (1, 2, 5, 10, 20, 30, 60, 90, 120, 180, 300, 600, 1200)

# A label value we may admit first-come: short, and made of id characters only, so free
# text (a sentence, an image name with "/" and ":") never becomes a label.
_ID_LIKE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}\Z")


class BoundedLabel:
    """The values of one label: a known set, plus up to ``limit`` id-like newcomers.

    Anything else (past the limit, or not id-like, or not a str) becomes ``other``, so the
    number of series stays bounded whatever a hub's users or hooks do.
    """

    def __init__(self, known: Iterable[str] = (), limit: int = 0) -> None:
        self.known: set[str] = set(known)
        self.limit = limit
        self.admitted: set[str] = set()
        self._lock = threading.Lock()

    def add_known(self, values: Iterable[str]) -> None:
        """Widen the known set (e.g. with the ids of the rules the hub loaded)."""
        with self._lock:
            self.known.update(v for v in values if isinstance(v, str) and _ID_LIKE.match(v))

    def __call__(self, value: Any) -> str:
        if not isinstance(value, str):
            return OTHER
        if value in self.known or value in self.admitted:
            return value
        if not _ID_LIKE.match(value):
            return OTHER
        with self._lock:
            if len(self.admitted) < self.limit:
                self.admitted.add(value)
                return value
        return OTHER


class SpawnMetrics:
    """The metric objects and their label bounds, in one registry: the default one through
    ``default_metrics()`` (made once: a second set in the same registry is an error), a
    private one in tests."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.spawn_duration = Histogram(
            "richprogress_spawn_duration_seconds",
            "Seconds from the spawn request to the server being ready or the spawn ending "
            "otherwise, by outcome (ready, failed, stopped) and profile slug",
            ["outcome", "profile"],
            buckets=SPAWN_BUCKETS,
            registry=registry,
        )
        self.step_duration = Histogram(
            "richprogress_spawn_step_duration_seconds",
            "Seconds a finished spawn spent in each step (requested, scheduling, scaling, "
            "scheduled, volume, image, starting, ready), by the spawn's outcome",
            ["step", "outcome"],
            buckets=STEP_BUCKETS,
            registry=registry,
        )
        self.failures = Counter(
            "richprogress_spawn_failures",
            "Failed spawns, by cause (the id of the rule behind the decisive event, or "
            "timeout, or unknown) and the step the spawn failed in",
            ["cause", "step"],
            registry=registry,
        )
        self.stopped_early = Counter(
            "richprogress_spawn_stopped_early",
            "Spawns that richprogress ended itself because their cause cannot fix itself "
            "(fail-fast), by cause",
            ["cause"],
            registry=registry,
        )
        self.store_errors = Counter(
            "richprogress_store_errors",
            "Errors of the spawn-history store, by operation (write, read, prune, connect)",
            ["operation"],
            registry=registry,
        )
        # start at 0, so rate()/increase() see the first error (a series born at 1 has none)
        for operation in STORE_OPERATIONS:
            self.store_errors.labels(operation=operation)
        self.spool_events = Counter(
            "richprogress_store_spool_events",
            "The spawn history's spool, by event: waiting (a finished spawn the database did "
            "not take at once), replayed (stored after waiting), full (not spooled: the bound "
            "was reached), unwritable (not durable: the file could not be written, or a full "
            "disk cut the line back; spooled again at the next try), skipped (a spool line "
            "that could not be read), refused (a spawn whose row the database refused, set aside)",
            ["event"],
            registry=registry,
        )
        for spool_event in SPOOL_EVENTS:
            self.spool_events.labels(event=spool_event)
        self.spool_event = BoundedLabel(SPOOL_EVENTS)
        self.outcome = BoundedLabel(OUTCOMES)
        self.step = BoundedLabel(PHASE_NAMES)
        self.profile = BoundedLabel(limit=MAX_PROFILES)
        self.cause = BoundedLabel(_default_rule_ids() | {TIMEOUT, UNKNOWN}, limit=MAX_EXTRA_RULES)
        self.operation = BoundedLabel(STORE_OPERATIONS)
        # The failures a hub expects start at 0 too: an alert on increase() sees nothing of a
        # series born at 1, so without this the first "no scale-up" failure would go unseen.
        for cause, step in _expected_failures():
            self.failures.labels(cause=cause, step=step)
        self._seen: weakref.WeakSet[SpawnTimeline] = weakref.WeakSet()
        self._seen_lock = threading.Lock()

    # -- observing --------------------------------------------------------------------------

    def first_time(self, timeline: SpawnTimeline) -> bool:
        """True the first time a timeline is seen (and marks it seen)."""
        with self._seen_lock:
            if timeline in self._seen:
                return False
            self._seen.add(timeline)
            return True

    def observe(
        self,
        timeline: SpawnTimeline,
        *,
        profile_slug: str | None,
        diagnosis: Diagnosis | None,
        stopped_early: bool,
        outcome: str | None,
    ) -> bool:
        """Record one finished spawn; False (and nothing recorded) when it is still pending
        or was recorded before."""
        ended = outcome or timeline.outcome
        if ended not in OUTCOMES or timeline.finished_at is None:
            return False
        if not self.first_time(timeline):
            return False
        outcome_label = self.outcome(ended)
        profile = NO_PROFILE if profile_slug is None else self.profile(profile_slug)
        self.spawn_duration.labels(outcome=outcome_label, profile=profile).observe(
            timeline.elapsed()
        )
        for step, seconds in step_seconds(timeline).items():
            self.step_duration.labels(step=self.step(step), outcome=outcome_label).observe(seconds)
        if ended == "failed" or stopped_early:
            if diagnosis is None:
                diagnosis = diagnose(timeline.records(), timeline.failure_message)
            records = timeline.records()
            cause = self.cause(
                failure_cause(reversed(records), diagnosis.get("record_id"), timeline.failure_message)
            )
            if ended == "failed":
                self.failures.labels(cause=cause, step=self.step(diagnosis.get("phase"))).inc()
            if stopped_early:
                self.stopped_early.labels(cause=cause).inc()
        return True


def _expected_failures() -> list[tuple[str, str]]:
    """(cause, step) of the failures worth a zero series: each default rule that says a
    warning or an error, in its step; ``timeout`` and ``unknown`` in every step."""
    from richprogress.wording.formatter import default_rules

    pairs = [
        (rule.id, rule.phase)
        for rule in default_rules()
        if rule.phase in PHASE_NAMES and rule.severity in ("warning", "error")
    ]
    steps = [step for step in PHASE_NAMES if step != "ready"]
    return pairs + [(cause, step) for cause in (TIMEOUT, UNKNOWN) for step in steps]


def _default_rule_ids() -> set[str]:
    from richprogress.wording.formatter import default_rules

    return {rule.id for rule in default_rules()}


_default: SpawnMetrics | None = None
_default_lock = threading.Lock()


def default_metrics() -> SpawnMetrics:
    """The metrics in prometheus_client's default registry (made once per process)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = SpawnMetrics(REGISTRY)
        return _default


def register_rule_ids(rule_ids: Iterable[str], metrics: SpawnMetrics | None = None) -> None:
    """Let the ids of the rules a hub loaded (its own rules too) be ``cause`` labels."""
    (metrics or default_metrics()).cause.add_known(rule_ids)


def observe_spawn_end(
    timeline: SpawnTimeline,
    *,
    profile_slug: str | None,
    diagnosis: Diagnosis | None,
    stopped_early: bool = False,
    outcome: str | None = None,
    metrics: SpawnMetrics | None = None,
) -> None:
    """Record a finished spawn in the metrics. Counts each timeline once; never raises.

    ``outcome`` overrides ``timeline.outcome`` (a spawn stopped before it was ready is
    "failed" on its timeline and ``stopped`` here). ``diagnosis`` is computed from the
    timeline when a failed spawn comes without one. ``stopped_early``: fail-fast ended it.
    """
    try:
        (metrics or default_metrics()).observe(
            timeline,
            profile_slug=profile_slug,
            diagnosis=diagnosis,
            stopped_early=stopped_early,
            outcome=outcome,
        )
    except Exception:
        log.exception("richprogress: could not record a spawn in the metrics")


def count_store_error(operation: str = "write", metrics: SpawnMetrics | None = None) -> None:
    """Count one error of the spawn-history store (``operation``: write, read, prune,
    connect; anything else counts as ``other``). Never raises."""
    try:
        target = metrics or default_metrics()
        target.store_errors.labels(operation=target.operation(operation)).inc()
    except Exception:
        log.exception("richprogress: could not count a store error")


def count_spool_event(event: str, metrics: SpawnMetrics | None = None) -> None:
    """Count one event of the spawn history's spool (``SPOOL_EVENTS``; anything else counts
    as ``other``). Never raises."""
    try:
        target = metrics or default_metrics()
        target.spool_events.labels(event=target.spool_event(event)).inc()
    except Exception:
        log.exception("richprogress: could not count a spool event")


def on_spawn_end(end: Any) -> None:
    """Count a finished spawn: the listener ``setup(c)`` subscribes to the spawn's end.

    ``end`` carries ``spawner``, ``timeline`` and ``outcome`` (``ready``, ``failed`` or
    ``stopped``, which overrides the timeline's: a spawn stopped before it was ready is
    "failed" on its timeline). A second call for the same timeline does nothing. Never
    raises: a spawn must not fail because its metrics could not be written.
    """
    try:
        spawner, timeline = end.spawner, end.timeline
        outcome = getattr(end, "outcome", None)
        if timeline in _counted or timeline.outcome == "pending":
            return
        _counted.add(timeline)
        diagnosis: Diagnosis | None = None
        if timeline.outcome == "failed" and outcome != "stopped":
            diagnosis = diagnose(timeline.records(), timeline.failure_message)
        formatter = getattr(spawner, "event_formatter", None)
        if formatter is not None:
            register_rule_ids(rule.id for rule in formatter.ruleset.rules)
        observe_spawn_end(
            timeline,
            profile_slug=profile_slug_of(spawner),
            diagnosis=diagnosis,
            stopped_early=bool(getattr(timeline, "stopped_early", False)),
            outcome=outcome,
        )
    except Exception:
        log.exception("richprogress: could not record the end of a spawn")
