"""How server starts went over the last day and week, in words, for the admin's failures page.

Turn the spawn-history store's counts (``outcome_counts_since``,
``cause_counts_since``) and the newest ready starts' durations (``ready_seconds_since``)
into a few sentences, as pure functions:

    Last day: 1,204 starts, 36 failed (3%), 4 stopped by their user.
    Usually ready in about 40 s (9 in 10 within 3 min).
    Most failures: image-not-found (20), timeout (9), no-node-fits (5).

The typical time is that of the newest ``SAMPLE`` ready starts of the period (bounded work
at any number of spawns; enough for a median and a 90th percentile). No database here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, TypedDict

from richprogress.typical.statistics import DEFAULT_MIN_SAMPLES, Span, Typical, percentile
from richprogress.typical.words import usually_ready

#: ready starts a period's typical time is computed from (the newest)
SAMPLE = 2000
#: causes named per period
TOP_CAUSES = 3


class PeriodWords(TypedDict):
    """One period's sentences (each None when there is nothing to say)."""

    key: str  # "day" | "week"
    starts: str
    usually: str | None
    causes: str | None


def share(part: int, whole: int) -> str:
    """``3%``, ``under 1%`` (never a misleading 0% for a few failures), ``100%``."""
    if whole <= 0:
        return "0%"
    pct = 100.0 * part / whole
    if 0 < pct < 1:
        return "under 1%"
    if 99 < pct < 100:
        return "over 99%"
    return f"{round(pct)}%"


def starts_sentence(label: str, counts: Mapping[str, int]) -> str:
    """``Last day: 1,204 starts, 36 failed (3%), 4 stopped by their user.``"""
    total = sum(counts.values())
    if total == 0:
        return f"{label}: no server starts."
    failed, stopped = counts.get("failed", 0), counts.get("stopped", 0)
    parts = [f"{total:,} start{'' if total == 1 else 's'}"]
    parts.append(f"{failed:,} failed ({share(failed, total)})" if failed else "none failed")
    if stopped:
        parts.append(f"{stopped:,} stopped by their user")
    return f"{label}: {', '.join(parts)}."


def usually_sentence(seconds: Sequence[float], min_samples: int = DEFAULT_MIN_SAMPLES) -> str | None:
    """``Usually ready in about 40 s (9 in 10 within 3 min).``; None under ``min_samples``."""
    if len(seconds) < max(1, min_samples):
        return None
    ordered = sorted(seconds)
    total = Span(p50=percentile(ordered, 0.5), p90=percentile(ordered, 0.9), samples=len(ordered))
    words = usually_ready(Typical(samples=len(ordered), total=total, steps={}, source="history"))
    return f"{words}." if words else None


def causes_sentence(causes: Sequence[tuple[str, int]], top: int = TOP_CAUSES) -> str | None:
    """``Most failures: image-not-found (20), timeout (9).``; None without failures."""
    named = [(cause, n) for cause, n in causes if n > 0]
    if not named:
        return None
    named.sort(key=lambda item: -item[1])
    shown = ", ".join(f"{cause} ({n:,})" for cause, n in named[:top])
    rest = len(named) - top
    more = f", and {rest} other cause{'' if rest == 1 else 's'}" if rest > 0 else ""
    if sum(n for _, n in named) == 1:
        return f"Cause: {named[0][0]}."
    return f"Most failures: {shown}{more}."


def start_stats(
    store: Any, now: datetime, causes: Mapping[str, tuple[int, ...]] | None = None
) -> list[PeriodWords]:
    """The last day's and week's sentences from the store: counts by outcome and by cause
    (one pass each over an index), and the newest ``SAMPLE`` ready starts of each period.
    ``causes``: ``store.cause_counts_since(week, day)`` when the caller has it already."""
    week, day = now - timedelta(days=7), now - timedelta(days=1)
    counts = store.outcome_counts_since(week, day)
    if causes is None:
        causes = store.cause_counts_since(week, day)
    out: list[PeriodWords] = []
    for key, label, since, index in (("day", "Last day", day, 1), ("week", "Last week", week, 0)):
        out.append(
            PeriodWords(
                key=key,
                starts=starts_sentence(label, {o: ns[index] for o, ns in counts.items()}),
                usually=usually_sentence(store.ready_seconds_since(since, SAMPLE)),
                causes=causes_sentence([(c, ns[index]) for c, ns in causes.items()]),
            )
        )
    return out
