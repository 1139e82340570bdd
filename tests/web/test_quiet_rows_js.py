"""The live page's rows (static/rows.js, under node on test_rows_js's stand-in DOM) show
quiet and hidden records as the failure page does: a quiet record a muted row with its
Details button, a hidden one no row, a FailedScheduling quiet once a scale-up arrived (the
rows before it too), and the cause in full, even when it was hidden.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from richprogress.model.timeline import SpawnTimeline
from tests.helpers.pages import failure_page
from tests.helpers.paths import STATIC
from tests.helpers.rows_js import (
    HARNESS,
    ROWS_SETUP,
    STARTED,
    at,
    needs_node,
    pending_data,
    run_node,
    version,
)

LIVE = HARNESS + ROWS_SETUP + """
const snapshot = () => log.elements().map((row) => ({ id: row.dataset.recordId, show: row.dataset.show || "row",
  button: Boolean(row.querySelector("button.rp-details-toggle")), decisive: row.classList.contains("rp-decisive") }));
const steps = [];
for (const record of arrivals) { rows.queue(record); rows.flush(); steps.push(snapshot()); }
rows.markCause(%(cause)s);
console.log(JSON.stringify({ events, steps, rows: snapshot() }));
"""


def quiet(record: dict[str, Any], show: str) -> dict[str, Any]:
    return {**record, "show": show}


WAITING = version("w", "FailedScheduling", "warning", "No machine has enough free CPU.", first=at(1), since=1.0,
                  phase="scheduling")
ARRIVALS = [
    WAITING,
    quiet(version("n", "NodeHasSufficientMemory", "info", "Room enough.", first=at(1), since=1.2, phase="scaling"),
          "hidden"),
    version("u", "TriggeredScaleUp", "info", "Adding a machine.", first=at(2), since=2.0, phase="scaling"),
    # the scheduler again, after the scale-up (its count grew)
    {**WAITING, "count": 3, "timestamp": "2026-11-29T07:46:58Z", "since_spawn": 30.0},
    version("s", "Scheduled", "info", "Found a machine.", first=at(40), since=40.0, phase="scheduled"),
    quiet(version("p", "ProbeWarning", "info", "The probe passed, with a warning.", first=at(41), since=41.0,
                  phase="starting"), "quiet"),
    quiet(version("x", "Failed", "error", "The image x:1 does not exist.", first=at(42), since=42.0), "hidden"),
]


def live(cause: str | None) -> dict[str, Any]:
    return run_node(LIVE % {
        "rows": json.dumps((STATIC / "rows.js").as_uri()),
        "data": json.dumps(pending_data()),
        "arrivals": json.dumps(ARRIVALS),
        "cause": json.dumps(cause),
    })


def page_rows() -> list[dict[str, Any]]:
    tl = SpawnTimeline(started_at=STARTED, clock=lambda: STARTED + timedelta(seconds=50))
    for record in ARRIVALS:
        tl.add(dict(record))  # type: ignore[arg-type]
    tl.finish("failed", "")
    doc = failure_page("alice", tl)
    return [
        {"id": row.attrs["data-record-id"], "show": row.attrs.get("data-show", "row"),
         "decisive": "rp-decisive" in row.attrs["class"]}
        for row in doc.by_id("rp-timeline").find_all("div", class_="rp-event")
        if row.attrs["data-record-id"] != "message:Server requested"
    ]


@needs_node
def test_live_rows_quiet_and_hide_as_the_failure_page_does() -> None:
    page = page_rows()
    cause = next(row["id"] for row in page if row["decisive"])
    assert cause == "x"  # the hidden image error is the cause, and has its row
    out = live(cause)
    assert [{k: r[k] for k in ("id", "show", "decisive")} for r in out["rows"]] == page
    assert [(r["id"], r["show"]) for r in page] == [
        ("w", "quiet"), ("u", "row"), ("s", "row"), ("p", "quiet"), ("x", "row"),
    ]
    assert out["events"] == len(page)


@needs_node
def test_a_failed_scheduling_is_a_row_until_a_scale_up_comes() -> None:
    steps = live(None)["steps"]
    # before the scale-up: the scheduler's warning is a plain row, the hidden one no row
    assert steps[1] == [{"id": "w", "show": "row", "button": True, "decisive": False}]
    # the scale-up quiets the row above it; the repeat after it stays quiet
    assert [(r["id"], r["show"]) for r in steps[2]] == [("w", "quiet"), ("u", "row")]
    assert [(r["id"], r["show"]) for r in steps[3]] == [("w", "quiet"), ("u", "row")]
    # a quiet row always has its button (the keyboard's way to open it); a hidden cause
    # not yet named is no row
    assert all(r["button"] for r in steps[-1] if r["show"] == "quiet")
    assert "x" not in [r["id"] for r in steps[-1]]
