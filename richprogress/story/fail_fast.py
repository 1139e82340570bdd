"""Is this spawn hopeless yet? The live diagnosis of a running spawn, as a pure function.

From the records a spawn has so far and the time: what the live page says about it, and
whether waiting any longer is pointless, so the spawner can end it early.
No JupyterHub or Kubernetes import, no clock of its own: the spawner passes the time.

- The cause is ``diagnose(records)``, the same function the failure page and
  ``richprogress explain --diagnose`` use, so the three never disagree.
- A cause is *fatal* when its decisive record says so (``record["fatal"] is True``: set by a
  rule's ``fatal``, or by a ``format_hook``). Waiting cannot fix it without a person
  changing something (see ``wording.default_rules.FATAL_RULES``).
- A fatal cause is acted on only once it has *held*: it happened ``repeats`` times (the
  second failed pull of a missing image), or it has been the cause for ``hold_seconds``.
  That rules out a one-off, e.g. a registry replica that does not have a new tag yet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from richprogress.model.records import EventRecord
from richprogress.story.diagnosis import Diagnosis, diagnose

#: What the live page shows: ``trying`` (a problem that may clear up, calm colours),
#: ``hopeless`` (a fatal cause: waiting will not help, red) or ``stopped`` (the spawner
#: ended the spawn early because of it).
LiveState = Literal["trying", "hopeless", "stopped"]
LIVE_STATES: tuple[str, ...] = ("trying", "hopeless", "stopped")


class LiveDiagnosis(Diagnosis):
    """The ``diagnosis`` of the live event stream: the failure page's four keys
    (``Diagnosis``) plus the live ``state``, whether the cause is ``fatal``, and how often
    it happened."""

    state: str
    fatal: bool
    count: int


@dataclass(frozen=True)
class FailFastPolicy:
    """When a fatal cause has held long enough to end the spawn.

    ``enabled`` False: never stop (the page still shows the cause). ``repeats``: stop once
    the decisive record happened this many times (0 turns the count off).
    ``hold_seconds``: stop once it has been the cause this long (0 turns time off). With
    both off, a fatal cause stops the spawn as soon as it is seen.
    """

    enabled: bool = True
    repeats: int = 2
    hold_seconds: float = 60.0


@dataclass(frozen=True)
class Assessment:
    """The verdict for one moment of a spawn."""

    #: what the page shows above the timeline; None when nothing is wrong
    diagnosis: LiveDiagnosis | None
    #: end the spawn now
    stop: bool = False
    #: seconds from ``now`` until the hold time of a fatal cause passes (re-assess then);
    #: None when time cannot change the verdict
    recheck_in: float | None = None
    #: the fatal cause has held (it happened twice, or as often or as long as the policy
    #: waits for), whether or not fail-fast is on: the evidence is decisive
    held: bool = False


def record_count(record: Mapping[str, object]) -> int:
    """How often a record happened (its ``count``; 1 when it has no valid one)."""
    count = record.get("count")
    if isinstance(count, int) and not isinstance(count, bool) and count >= 1:
        return count
    return 1


def is_fatal(record: Mapping[str, object]) -> bool:
    """Whether a record names a cause that waiting cannot fix."""
    return record.get("fatal") is True


def same_cause(records: Sequence[Mapping[str, object]], record: Mapping[str, object]) -> list[Mapping[str, object]]:
    """The records that say what ``record`` says (same rule, same words), ``record`` among them.

    Real event recorders write one cause as several events: the scheduler's series starts
    over when the pod's resourceVersion moved or after 6 quiet minutes, the API server
    deletes an event an hour after its last write and the recorder writes it anew. Each is
    a record of its own, with its own count and first sighting."""
    rule, message = record.get("rule"), record.get("message")
    said = [r for r in records if rule is not None and r.get("rule") == rule and r.get("message") == message]
    return said if any(r is record for r in said) else [*said, record]


def cause_count(records: Sequence[Mapping[str, object]], record: Mapping[str, object]) -> int:
    """How often the cause ``record`` says happened, over every record that says it."""
    return max(record_count(record), sum(record_count(r) for r in same_cause(records, record)))


def cause_seen_at(
    records: Sequence[Mapping[str, object]], record: Mapping[str, object], first_seen: Mapping[str, float], now: float
) -> float:
    """When the cause ``record`` says was first seen, by any record that says it (``now``
    for a record not in ``first_seen``): a new event for the same cause does not restart
    the hold time."""
    return min(first_seen.get(str(r.get("id")), now) for r in same_cause(records, record))


def assess(
    records: Sequence[EventRecord],
    *,
    now: float,
    first_seen: Mapping[str, float] | None = None,
    policy: FailFastPolicy = FailFastPolicy(),
) -> Assessment:
    """The live diagnosis of a running spawn and whether to end it now.

    ``now`` and the values of ``first_seen`` are seconds since the spawn request, by one
    clock; ``first_seen`` maps a record id to when the spawner first saw that record (a
    record missing there counts as seen ``now``). Deterministic and pure.
    """
    found = diagnose(records)
    record_id = found["record_id"]
    if record_id is None:  # no record explains anything: nothing is wrong (yet)
        return Assessment(None)
    record = next((r for r in reversed(records) if r.get("id") == record_id), None)
    if record is None:  # pragma: no cover - diagnose names one of the records
        return Assessment(None)
    fatal = is_fatal(record)
    count = record_count(record)
    diagnosis = LiveDiagnosis(
        summary=found["summary"],
        hint=found["hint"],
        phase=found["phase"],
        record_id=found["record_id"],
        state="hopeless" if fatal else "trying",
        fatal=fatal,
        count=count,
    )
    if not fatal:
        return Assessment(diagnosis)
    # the cause, not the one event: Kubernetes may have written it as several (same_cause)
    seen_at = cause_seen_at(records, record, first_seen or {}, now)
    held_for = max(0.0, now - seen_at)
    happened = cause_count(records, record)
    by_count = policy.repeats > 0 and happened >= policy.repeats
    by_time = policy.hold_seconds > 0 and held_for >= policy.hold_seconds
    due = by_count or by_time or (policy.repeats <= 0 and policy.hold_seconds <= 0)
    # the evidence is decisive once the cause came back (or lasted), whatever the policy
    # counts before it acts: a second "not found" is not a registry replica's hiccup
    held = due or happened >= 2
    recheck = policy.hold_seconds - held_for if policy.hold_seconds > 0 and not due else None
    if policy.enabled and due:
        return Assessment(diagnosis, stop=True, held=True)
    return Assessment(diagnosis, recheck_in=recheck if not held or policy.enabled else None, held=held)
