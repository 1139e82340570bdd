"""Folding a timeline so it fits a screenshot: the kubelet's follow-ups of a failed pull,
long runs of repeats, and past a row limit the middle, fold into ``Fold`` items; the
records themselves are never changed, and the decisive record is never folded away.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from richprogress.model.records import EventRecord
from richprogress.model.times import finite_seconds
from richprogress.story.record_text import text_field


class Fold(TypedDict):
    """Records folded out of view: ``folded`` of them, ``count`` occurrences in all."""

    folded: int
    count: int
    reason: str | None  # None when the folded records differ
    message: str | None
    first: float | None  # since-spawn offsets of the first and last folded record
    last: float | None
    first_timestamp: str | None
    last_timestamp: str | None
    ids: list[str]
    # the id of the failed pull whose follow-ups these are (None for other folds), and
    # their own words, each once, in order: what the fold stands for
    follows: str | None
    raw_messages: list[str]


def _fold(run: Sequence[Mapping[str, Any]], follows: str | None = None) -> Fold:
    reasons = {text_field(r, "reason") for r in run}
    messages = {text_field(r, "message") for r in run}
    raw = [text_field(r, "raw_message") or text_field(r, "message") or "" for r in run]
    return Fold(
        folded=len(run),
        # finite_seconds reads any finite number: a hook's count may be a float, or no number
        count=sum(max(1, int(finite_seconds(r.get("count")) or 1)) for r in run),
        reason=reasons.pop() if len(reasons) == 1 else None,
        message=messages.pop() if len(messages) == 1 else None,
        first=finite_seconds(run[0].get("since_spawn")),
        last=finite_seconds(run[-1].get("since_spawn")),
        first_timestamp=text_field(run[0], "first_timestamp") or text_field(run[0], "timestamp"),
        last_timestamp=text_field(run[-1], "timestamp") or text_field(run[-1], "first_timestamp"),
        ids=[str(r.get("id")) for r in run],
        follows=follows,
        raw_messages=list(dict.fromkeys(m for m in raw if m)),
    )


# What a failed pull is about: the object and the container (the follow-ups name the same).
_Subject = tuple[str | None, str | None, str | None]
#: the kubelet's follow-ups of a failed pull: they say again that it failed, and that it
#: waits before the next try (kubelet's ErrImagePull / ImagePullBackOff and its back-off)
_FOLLOW_UP_FAILED = frozenset({"Error: ErrImagePull", "Error: ImagePullBackOff"})
#: fewer follow-ups than this stay rows: a fold of one would cost the row it saves
MIN_FOLLOW_UPS = 2


def _subject(record: Mapping[str, Any]) -> _Subject:
    obj = record.get("object")
    obj = obj if isinstance(obj, Mapping) else {}

    def part(key: str) -> str | None:
        value = obj.get(key)
        return value if isinstance(value, str) else None

    return (part("kind"), part("name"), part("container"))


def _follow_ups(records: Sequence[EventRecord], decisive_id: str | None) -> dict[int, list[int]]:
    """Failed pull (its index) -> the indices of the follow-ups after it that add nothing:
    ``Error: ErrImagePull``, ``Error: ImagePullBackOff`` and ``Back-off pulling image`` of
    the same container, until that container's next failed pull or its ``Pulled``."""
    open_cause: dict[_Subject, int] = {}
    found: dict[int, list[int]] = {}
    for index, record in enumerate(records):
        reason = text_field(record, "reason")
        raw = (text_field(record, "raw_message") or text_field(record, "message") or "").strip()
        subject = _subject(record)
        if reason == "Failed" and raw.startswith("Failed to pull image"):
            open_cause[subject] = index
        elif reason == "Pulled":
            open_cause.pop(subject, None)
        elif (
            subject in open_cause
            and record.get("id") != decisive_id
            and ((reason == "Failed" and raw in _FOLLOW_UP_FAILED)
                 or (reason == "BackOff" and raw.startswith("Back-off pulling image")))
        ):
            found.setdefault(open_cause[subject], []).append(index)
    return {cause: members for cause, members in found.items() if len(members) >= MIN_FOLLOW_UPS}


def is_fold(item: Mapping[str, Any]) -> bool:
    """Whether an item of ``fold_records``'s result is a fold (else it is a record)."""
    return "folded" in item


# Internally a row is a list of records: one record shown, or several folded together.
_Row = list[EventRecord]
# A row being folded: its records, whether they fold, and the failed pull they follow.
_Folding = tuple[_Row, bool, str | None]


def _split_around(span: Sequence[EventRecord], decisive_id: str | None) -> list[_Row]:
    """Rows folding ``span``, with the decisive record (if inside) left as its own row."""
    for index, record in enumerate(span):
        if decisive_id is not None and record.get("id") == decisive_id:
            before, after = list(span[:index]), list(span[index + 1 :])
            return [row for row in (before, [record], after) if row]
    return [list(span)] if span else []


def fold_records(
    records: Sequence[EventRecord],
    keep: int = 0,
    *,
    decisive_id: str | None = None,
    min_run: int = 3,
) -> list[EventRecord | Fold]:
    """Fold a timeline so it fits a screenshot; folds are data (``Fold``), records unchanged.

    1. The kubelet's follow-ups of a failed pull (``Error: ErrImagePull``, ``Error:
       ImagePullBackOff``, ``Back-off pulling image`` of the same container; at least
       ``MIN_FOLLOW_UPS``) fold into one fold right after the failed pull (its ``follows``):
       they only say again that it failed and that the kubelet waits.
    2. A run of ``min_run`` (at least 3) or more consecutive records with the same reason
       and message shows its first and last record with a fold of the ones between.
    3. If more than ``keep`` rows remain (``keep`` > 0), the middle is folded into one
       fold: the first rows (how it began) and the last rows (how it ended) stay.
    The record whose id is ``decisive_id`` is never folded away.
    """
    follow_ups = _follow_ups(records, decisive_id)
    # a failed pull (by identity) -> its follow-ups, which leave the run folding below
    causes = {id(records[cause]): [records[i] for i in members] for cause, members in follow_ups.items()}
    if follow_ups:
        away = {i for members in follow_ups.values() for i in members}
        records = [record for index, record in enumerate(records) if index not in away]
    # (records, folded?, the failed pull it follows) rows; a "fold" of one record would
    # cost a row and hide it.
    rows: list[_Folding] = []
    index = 0
    while index < len(records):
        end = index + 1
        key = (text_field(records[index], "reason"), text_field(records[index], "message"))
        while (
            end < len(records)
            and (
                text_field(records[end], "reason"),
                text_field(records[end], "message"),
            )
            == key
        ):
            end += 1
        run = records[index:end]
        if len(run) >= max(min_run, 3):
            rows.append(([run[0]], False, None))
            for row in _split_around(run[1:-1], decisive_id):
                rows.append((row, len(row) > 1, None))
            rows.append(([run[-1]], False, None))
        else:
            rows.extend(([record], False, None) for record in run)
        index = end
    if causes:
        rows = _with_follow_ups(rows, causes)
    if keep > 0 and len(rows) > keep:
        # Keep a few rows of the start and more of the end, where failures are explained.
        keep = max(keep, 4)
        head = max(1, (keep - 1) // 3)
        tail = keep - 1 - head
        middle = [record for row, _, _ in rows[head : len(rows) - tail] for record in row]
        if decisive_id is not None and tail > 3 and any(r.get("id") == decisive_id for r in middle):
            # Showing it costs two rows (it splits the fold): take them from the end.
            tail -= 2
            middle = [record for row, _, _ in rows[head : len(rows) - tail] for record in row]
        pieces = _split_around(middle, decisive_id)
        rows = rows[:head] + [(row, len(row) > 1, None) for row in pieces] + rows[len(rows) - tail :]
    return [_fold(row, follows) if folded else row[0] for row, folded, follows in rows]


def _with_follow_ups(rows: list[_Folding], causes: dict[int, _Row]) -> list[_Folding]:
    """``rows`` with each failed pull's follow-ups as a fold right after it (inside the
    fold that holds the failed pull, when a run of repeats folded it)."""
    out: list[_Folding] = []
    for row, folded, follows in rows:
        extra = [record for shown in row for record in causes.get(id(shown), ())]
        if folded:
            out.append((row + extra, True, follows))
            continue
        out.append((row, folded, follows))
        if extra:
            out.append((extra, True, str(row[0].get("id"))))
    return out
