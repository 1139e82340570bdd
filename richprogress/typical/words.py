"""Typical times in words, for the pending page: pure functions of ``typical.Typical``.

Say how long a start usually takes, calmly and in round numbers:

- "Usually ready in about 3 min (9 in 10 within 5 min)" near the clock;
- "Adding a machine usually takes 2-4 min; 1:20 so far" for the current step;
- "This is taking longer than usual" once a step (or the whole start) runs past its p90;
- and how far the progress bar may move inside a step while it waits.

Every function returns None (or the step's own progress) when nothing is known, so a hub
without history reads as before.
"""

from __future__ import annotations

import math
from typing import TypedDict

from richprogress.model.records import PHASE_NAMES, PHASE_PROGRESS
from richprogress.model.times import format_clock
from richprogress.typical.statistics import Span, Typical

#: What each step is, as the subject of "... usually takes 2-4 min".
STEP_NOUNS: dict[str, str] = {
    "requested": "Requesting a server",
    "scheduling": "Finding a machine",
    "scaling": "Adding a machine",
    "scheduled": "Preparing the machine",
    "volume": "Preparing storage",
    "image": "Downloading the software image",
    "starting": "Starting the server",
}

LONGER_THAN_USUAL = "This is taking longer than usual"


def _seconds_words(seconds: float, *, up: bool) -> tuple[int, str]:
    """A round duration (value, unit): 5 s steps under a minute, then minutes, then hours
    and minutes. ``up`` rounds up (for "within"), else to the nearest."""
    rounding = math.ceil if up else round
    if seconds < 57.5 or (up and seconds <= 60):
        value = max(5, int(rounding(seconds / 5.0)) * 5)
        if value < 60:
            return value, "s"
    minutes = max(1, int(rounding(seconds / 60.0)))
    return minutes, "min"


def duration_words(seconds: float, *, up: bool = False) -> str:
    """``40 s``, ``3 min``, ``1 h 20 min``: a duration rounded for people."""
    value, unit = _seconds_words(seconds, up=up)
    if unit == "min" and value >= 60:
        hours, minutes = divmod(value, 60)
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{value} {unit}"


def range_words(span: Span) -> str:
    """``2-4 min``, ``20-40 s``, ``40 s-2 min``, or ``about 2 min`` when both ends round
    to the same."""
    low = duration_words(span["p50"])
    high = duration_words(span["p90"], up=True)
    if low == high:
        return f"about {low}"
    low_value, low_unit = low.rsplit(" ", 1) if low.count(" ") == 1 else (low, "")
    high_value, high_unit = high.rsplit(" ", 1) if high.count(" ") == 1 else (high, "")
    if low_unit and low_unit == high_unit:
        return f"{low_value}-{high_value} {high_unit}"
    return f"{low}-{high}"


def usually_ready(typical: Typical | None) -> str | None:
    """"Usually ready in about 3 min (9 in 10 within 5 min)"; None when the whole start
    has no typical time."""
    total = typical["total"] if typical else None
    if total is None:
        return None
    usual = duration_words(total["p50"])
    within = duration_words(total["p90"], up=True)
    if within == usual:
        return f"Usually ready in about {usual}"
    return f"Usually ready in about {usual} (9 in 10 within {within})"


def step_usually(typical: Typical | None, step: str | None, so_far: float | None) -> str | None:
    """"Adding a machine usually takes 2-4 min; 1:20 so far"; None when the step has no
    typical time (or is not one a user waits in)."""
    span = _step_span(typical, step)
    if span is None or step not in STEP_NOUNS:
        return None
    text = f"{STEP_NOUNS[step]} usually takes {range_words(span)}"
    clock = format_clock(so_far).lstrip("+")
    return f"{text}; {clock} so far" if clock else text


def _step_span(typical: Typical | None, step: str | None) -> Span | None:
    if typical is None or step is None:
        return None
    return typical["steps"].get(step)


def late_after(span: Span) -> float:
    """Seconds after which a step (or the start) is "longer than usual": its p90 as the
    page words it. The words round the p90 up ("2-4 min" for a p90 of 3:20, "9 in 10
    within 5 min" for 4:50), so the page never says "longer than usual" while its own
    "usually 2-4 min" has not run out yet."""
    value, unit = _seconds_words(span["p90"], up=True)
    return max(float(span["p90"]), float(value * 60 if unit == "min" else value))


def is_longer_than_usual(
    typical: Typical | None,
    *,
    step: str | None = None,
    step_elapsed: float | None = None,
    total_elapsed: float | None = None,
) -> bool:
    """True once the current step runs past its p90, or the whole start past its p90 (as
    the page words them, ``late_after``)."""
    span = _step_span(typical, step)
    if span is not None and step_elapsed is not None and step_elapsed > late_after(span):
        return True
    total = typical["total"] if typical else None
    return total is not None and total_elapsed is not None and total_elapsed > late_after(total)


def longer_than_usual(
    typical: Typical | None,
    *,
    step: str | None = None,
    step_elapsed: float | None = None,
    total_elapsed: float | None = None,
) -> str | None:
    """"This is taking longer than usual" when ``is_longer_than_usual``, else None."""
    if is_longer_than_usual(
        typical, step=step, step_elapsed=step_elapsed, total_elapsed=total_elapsed
    ):
        return LONGER_THAN_USUAL
    return None


def progress_in_step(typical: Typical | None, step: str | None, step_elapsed: float) -> int:
    """Where the bar stands while ``step`` runs: its own percent, moved toward the next
    step's by expected time (halfway at the step's p50, never reaching the next step).
    Without a typical time for the step, the step's own percent (as without history).
    Grows with ``step_elapsed``, so a bar fed by it never goes back within a step."""
    if step not in PHASE_PROGRESS:
        return 0
    here = PHASE_PROGRESS[step]
    span = _step_span(typical, step)
    index = PHASE_NAMES.index(step)
    if span is None or index + 1 >= len(PHASE_NAMES) or step_elapsed <= 0:
        return here
    gap = PHASE_PROGRESS[PHASE_NAMES[index + 1]] - here
    usual = max(span["p50"], 0.001)
    fraction = step_elapsed / (step_elapsed + usual)  # 0.5 at the p50, -> 1 never reached
    return here + min(gap - 1, int(gap * fraction))


class StepView(TypedDict):
    """One step's typical time as the pending page's JS reads it."""

    text: str  # "Adding a machine usually takes 2-4 min" (the JS adds "; 1:20 so far")
    p50: float
    p90: float
    late: float  # late_after: past this many seconds in the step, "longer than usual"


class PageView(TypedDict):
    """The pending page's typical times (``pending_data``'s ``typical``): the sentences
    made here, so Python is the one place their words come from."""

    usually: str | None  # "Usually ready in about 3 min (9 in 10 within 5 min)"
    total_p90: float | None
    total_late: float | None  # late_after of the whole start
    steps: dict[str, StepView]
    longer: str  # LONGER_THAN_USUAL
    source: str


def page_view(typical: Typical | None) -> PageView | None:
    """What the pending page shows of ``typical``; None when nothing is known (the page
    then reads as it does without typical times)."""
    if typical is None:
        return None
    steps: dict[str, StepView] = {}
    for step, span in typical["steps"].items():
        text = step_usually(typical, step, None)
        if text is not None:
            steps[step] = StepView(text=text, p50=span["p50"], p90=span["p90"], late=late_after(span))
    usually = usually_ready(typical)
    if usually is None and not steps:
        return None
    total = typical["total"]
    return PageView(
        usually=usually,
        total_p90=total["p90"] if total else None,
        total_late=late_after(total) if total else None,
        steps=steps,
        longer=LONGER_THAN_USUAL,
        source=typical["source"],
    )


def patience_note(
    typical: Typical | None,
    *,
    step: str | None = None,
    step_elapsed: float | None = None,
    total_elapsed: float | None = None,
) -> str | None:
    """What a "still waiting" row adds once the page says "This is taking longer than
    usual": "this is taking longer than usual (usually 2-4 min)" when the step is past its
    p90, "... (usually ready in about 3 min)" when the whole start is; None when neither.
    The same test as ``is_longer_than_usual`` (from its very second on), so the row and
    the page agree."""
    longer = LONGER_THAN_USUAL[0].lower() + LONGER_THAN_USUAL[1:]
    span = _step_span(typical, step)
    if span is not None and step_elapsed is not None and step_elapsed >= late_after(span):
        return f"{longer} (usually {range_words(span)})"
    total = typical["total"] if typical else None
    if total is not None and total_elapsed is not None and total_elapsed >= late_after(total):
        return f"{longer} (usually ready in about {duration_words(total['p50'])})"
    return None
