"""Why a spawn failed, in one sentence: the decisive record, its hint, the step it died in.

Pure functions over EventRecords (no JupyterHub or Kubernetes import), shared by the
failure page, the "Copy details" report and ``richprogress explain --diagnose``:
``diagnose(records, failure_message)`` picks the record that best explains the failure,
``got_past(records)`` names the problems the spawn got past (never the cause).

The hub's own start timeout leaves an empty "Spawn failed: " message, so the cause has
to come from the records whenever they hold one; when none does, the hub's own error says
which time limit ran out (``hub_errors``) and the step says where the spawn was then.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from richprogress.model.records import SEVERITIES, EventRecord
from richprogress.story.hints import HINT_RETRY, PHASE_HINTS, TIMEOUT_HINTS, timeout_sentence
from richprogress.story.hub_errors import (
    HINT_NO_ANSWER,
    limit_words,
    no_answer_sentence,
    read_hub_error,
)
from richprogress.story.known_failures import (
    ERROR_BONUS,
    READ_CAUSE_WEIGHT,
    UNKNOWN_ERROR_WEIGHT,
    UNKNOWN_WARNING_WEIGHT,
    Failure,
    classify,
)
from richprogress.story.ordering import time_order
from richprogress.story.record_text import text_field
from richprogress.story.recovery import Subject, overcomes, problem_subject, success_subjects
from richprogress.story.steps import (
    AFTERMATH_REASONS,
    latest_phase,
    marks_step,
    phase_index,
    record_phase,
)
from richprogress.wording.cause_reader import KEEP_AND_ADD, read_cause, says_only_failed
from richprogress.wording.default_rules.refusals import refusal_summary


class Diagnosis(TypedDict):
    """What the failure page shows first, and what ``explain --diagnose`` prints."""

    summary: str
    hint: str | None
    phase: str | None
    record_id: str | None


_SPAWN_FAILED_PREFIX = re.compile(r"^\s*(spawn failed\s*:?\s*)+", re.IGNORECASE)


def _severity(record: Mapping[str, Any]) -> str:
    """The record's severity; from its type when a hand-made record has none (or a bad one)."""
    severity = text_field(record, "severity")
    if severity in SEVERITIES:
        return severity
    return "warning" if record.get("type") == "Warning" else "info"


def decisive_record(records: Sequence[EventRecord]) -> EventRecord | None:
    """The record that best explains a failure, or None when none does.

    Candidates are warnings and errors (by ``severity``; by ``type`` only when a record has
    no valid severity) neither resolved nor in hand: a FailedScheduling followed by a
    Scheduled is over, one followed by a scale-up is in hand (a machine is being added), and
    a failed pull followed by a ``Pulled`` of the same image is over (a later success of the
    same kind, ``recovery``). Among them the most telling wins: a known specific cause over
    its follow-ups, an error over a warning, then the latest.
    """
    ordered, _resolved, in_hand, failures = _scan(records)
    best: tuple[int, int, EventRecord] | None = None
    for position, record in enumerate(ordered):
        if in_hand[position] or _severity(record) == "info":
            continue
        severity = _severity(record)
        failure = failures[position]
        if failure is not None:
            weight = failure.weight
        elif (text_field(record, "rule") or "").startswith("cause-"):
            weight = READ_CAUSE_WEIGHT
        elif severity == "error":
            weight = UNKNOWN_ERROR_WEIGHT
        else:
            weight = UNKNOWN_WARNING_WEIGHT
        if severity == "error":
            weight += ERROR_BONUS
        # ">=" so that among equals the latest wins.
        if best is None or (weight, position) >= (best[0], best[1]):
            best = (weight, position, record)
    return best[2] if best else None


def got_past(records: Sequence[EventRecord]) -> frozenset[str]:
    """The ids of the warnings and errors the spawn got past: what they blocked happened
    (the pod was scheduled after a FailedScheduling; a later step than theirs, the scale-up
    aside), or a later success of the same kind ended them (``recovery``: the Pulled after a
    failed pull). The pages mark their rows "resolved"; ``decisive_record`` never picks them."""
    ordered, resolved, _in_hand, _failures = _scan(records)
    return frozenset(
        str(record.get("id"))
        for position, record in enumerate(ordered)
        if resolved[position] and _severity(record) != "info"
    )


_SCHEDULED = phase_index("scheduled")


def _resolved_at(phase: int, reason: str | None) -> int:
    """The step a later record must reach for a problem of step ``phase`` to be over: the
    next one, but a scheduling problem only once the pod was scheduled (a machine being
    added is in hand, not done), and so any FailedScheduling (one about storage too)."""
    if reason == "FailedScheduling" or phase == phase_index("scheduling"):
        return _SCHEDULED
    return phase + 1


def _scan(
    records: Sequence[EventRecord],
) -> tuple[list[EventRecord], list[bool], list[bool], list[Failure | None]]:
    """The records in time order; whether each problem among them is resolved (what it
    blocked happened, or a later success of the same kind ended it); whether each is in
    hand (resolved, or a later step was reached, such as a scale-up after a FailedScheduling:
    no cause to name, but not over either); and each one's classified failure (None where it
    is in hand, or is no problem)."""
    ordered = time_order(records)
    # progress_after[i]: the furthest step a plain, good record reached after position i.
    progress_after = [-1] * (len(ordered) + 1)
    resolved = [False] * len(ordered)
    in_hand = [False] * len(ordered)
    failures: list[Failure | None] = [None] * len(ordered)
    successes: dict[str, list[Subject]] = {}
    for position in range(len(ordered) - 1, -1, -1):
        later = ordered[position]
        reached = -1
        severity = _severity(later)
        if severity == "info" and text_field(later, "reason") not in AFTERMATH_REASONS:
            # a patience row ("Still waiting for ...") gets past nothing
            if marks_step(later):
                reached = phase_index(record_phase(later))
            for success in success_subjects(later):
                successes.setdefault(success[0], []).append(success)
        elif severity != "info":
            step = phase_index(record_phase(later))
            furthest = progress_after[position + 1]
            if furthest >= _resolved_at(step, text_field(later, "reason")):
                resolved[position] = in_hand[position] = True
            else:
                failure = classify(later)
                # a scale-up after a NotTriggerScaleUp: in hand by its step, over by its kind
                problem = problem_subject(failure.name if failure else None, later) if successes else None
                if problem is not None and any(overcomes(s, problem) for s in successes.get(problem[0], ())):
                    resolved[position] = in_hand[position] = True
                elif furthest > step:
                    in_hand[position] = True
                else:
                    failures[position] = failure
        progress_after[position] = max(reached, progress_after[position + 1])
    return ordered, resolved, in_hand, failures


def ended_running(records: Sequence[EventRecord]) -> bool:
    """Whether the events end with the server running: a container started after every
    error and every warning other than a health check still settling (a readiness probe
    that fails at first is normal). For event lists with no outcome of their own (the
    command line): a spawn that became ready never ends with "What went wrong"."""
    started = -1
    trouble = -1
    for position, record in enumerate(time_order(records)):
        reason = text_field(record, "reason")
        if reason == "Started":
            started = position
        elif _severity(record) == "error" or (_severity(record) == "warning" and reason != "Unhealthy"):
            trouble = position
    return started > trouble


def clean_failure_message(message: str | None) -> str:
    """The exception's text without JupyterHub's "Spawn failed:" prefixes; "" if nothing left."""
    if not message:
        return ""
    return _SPAWN_FAILED_PREFIX.sub("", str(message)).strip()


def _why(record: Mapping[str, Any]) -> tuple[str, str | None] | None:
    """(summary, hint or None to keep the record's) from the cause inside a record's own text,
    when no rule said why: a record no rule worded (an admin's own rule set, a stored record)
    or one a default rule worded only as "failed" (stored before the cause reader). None when
    the record says why already, or its text holds no cause the reader knows."""
    rule = text_field(record, "rule")
    message = text_field(record, "message")
    raw = text_field(record, "raw_message") or ""
    if rule is None:
        # worded by no one (a hook's own sentence is kept), and a problem
        if (message and message != raw) or _severity(record) == "info":
            return None
    elif not says_only_failed(rule, message):
        return None
    obj = record.get("object")
    container = obj.get("container") if isinstance(obj, Mapping) else None
    cause = read_cause(raw, container if isinstance(container, str) else "")
    if cause is None:
        return None
    if rule in KEEP_AND_ADD and message:
        return f"{message}: {cause.cause}", None
    return cause.sentence, cause.hint


def diagnose(records: Sequence[EventRecord], failure_message: str | None = None) -> Diagnosis:
    """Say in one sentence why a spawn failed, what the user can do, and in which step.

    ``failure_message`` is the exception's text (may be "" or just "Spawn failed: " when
    the hub's own timeout fired). The records win over it when one explains the failure.
    Deterministic and pure.
    """
    record = decisive_record(records)
    reached = latest_phase(records)
    if record is not None:
        failure = classify(record)
        phase = record_phase(record) or reached or "requested"
        hint = text_field(record, "hint") or (failure.hint if failure else None)
        if not hint:
            hint = PHASE_HINTS.get(phase or "requested", HINT_RETRY)
        summary = " ".join((text_field(record, "message") or text_field(record, "raw_message") or "").split())
        why = _why(record)
        if why is not None:
            summary, hint = why[0], text_field(record, "hint") if why[1] is None else why[1]
            hint = hint or PHASE_HINTS.get(phase or "requested", HINT_RETRY)
        if not summary:
            summary = clean_failure_message(failure_message) or timeout_sentence(phase)
        return Diagnosis(summary=summary, hint=hint, phase=phase, record_id=text_field(record, "id"))
    phase = reached or "requested"
    cleaned = clean_failure_message(failure_message)
    # KubeSpawner's own failure when the API server refused the pod (a full quota, a
    # webhook's "no"): its text holds the refusal inside the API's JSON answer
    refusal = refusal_summary(cleaned) if cleaned else None
    if refusal is not None:
        return Diagnosis(summary=refusal.sentence, hint=refusal.hint, phase=phase, record_id=None)
    # the hub's own verdict: which of its time limits ran out, and where the spawn was then
    hub_error = read_hub_error(cleaned)
    if hub_error is not None and hub_error.kind == "no-answer":
        return Diagnosis(summary=no_answer_sentence(hub_error), hint=HINT_NO_ANSWER, phase="starting", record_id=None)
    if hub_error is not None:
        return Diagnosis(
            summary=timeout_sentence(phase, limit_words(hub_error.seconds)),
            hint=TIMEOUT_HINTS.get(phase, HINT_RETRY),
            phase=phase,
            record_id=None,
        )
    if cleaned:
        return Diagnosis(
            summary=cleaned[0].upper() + cleaned[1:],
            hint=PHASE_HINTS.get(phase, HINT_RETRY),
            phase=phase,
            record_id=None,
        )
    return Diagnosis(
        summary=timeout_sentence(phase),
        hint=TIMEOUT_HINTS.get(phase, HINT_RETRY),
        phase=phase,
        record_id=None,
    )
