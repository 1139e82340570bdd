"""Folding a timeline so it fits a screenshot: long runs of repeats, and past a row limit
the middle, fold into ``Fold`` items; the records themselves are never changed, and the
decisive record is never folded away.
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


def _fold(run: Sequence[Mapping[str, Any]]) -> Fold:
    reasons = {text_field(r, "reason") for r in run}
    messages = {text_field(r, "message") for r in run}
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
    )


def is_fold(item: Mapping[str, Any]) -> bool:
    """Whether an item of ``fold_records``'s result is a fold (else it is a record)."""
    return "folded" in item


# Internally a row is a list of records: one record shown, or several folded together.
_Row = list[EventRecord]


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

    1. A run of ``min_run`` (at least 3) or more consecutive records with the same reason
       and message shows its first and last record with a fold of the ones between.
    2. If more than ``keep`` rows remain (``keep`` > 0), the middle is folded into one
       fold: the first rows (how it began) and the last rows (how it ended) stay.
    The record whose id is ``decisive_id`` is never folded away.
    """
    # (records, folded?) pairs; a "fold" of one record would cost a row and hide it.
    rows: list[tuple[_Row, bool]] = []
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
            rows.append(([run[0]], False))
            for row in _split_around(run[1:-1], decisive_id):
                rows.append((row, len(row) > 1))
            rows.append(([run[-1]], False))
        else:
            rows.extend(([record], False) for record in run)
        index = end
    if keep > 0 and len(rows) > keep:
        # Keep a few rows of the start and more of the end, where failures are explained.
        keep = max(keep, 4)
        head = max(1, (keep - 1) // 3)
        tail = keep - 1 - head
        middle = [record for row, _ in rows[head : len(rows) - tail] for record in row]
        if decisive_id is not None and tail > 3 and any(r.get("id") == decisive_id for r in middle):
            # Showing it costs two rows (it splits the fold): take them from the end.
            tail -= 2
            middle = [record for row, _ in rows[head : len(rows) - tail] for record in row]
        pieces = _split_around(middle, decisive_id)
        rows = rows[:head] + [(row, len(row) > 1) for row in pieces] + rows[len(rows) - tail :]
    return [_fold(row) if folded else row[0] for row, folded in rows]
