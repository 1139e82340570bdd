"""The same spawn reads the same on the live page and on the failure page: static/rows.js
(run under node, on a small stand-in DOM) and the failure page (rendered by the hub) are
fed the same records, and every row must show the same clock, repeat clock, pills, count
and moment, under the same "(N events)".

The records are those that made the two pages disagree by a second: whole-second
Kubernetes stamps beside the hub's sub-second readings, repeats whose first occurrence
came before the reading of their latest, and a cluster clock ahead of the hub's, whose row
moves later once it repeats (the rows below it follow).
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

import pytest

from richprogress.model.display import REASON_WORDS, SEVERITY_WORDS, row_word
from richprogress.model.records import SEVERITIES
from richprogress.model.timeline import SpawnTimeline
from richprogress.web.views.vocabulary import vocabulary
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

IMAGE = "quay.io/jupyter/no-such-notebook:2026-11"

#: what the stream sends, in order (repeats again with their new count)
ARRIVALS = [
    version("a", "Scheduled", "info", "Found a machine for your server.", phase="scheduled",
            first=STARTED + timedelta(seconds=0.516), since=0.516),
    version("b", "Pulling", "info", f"Downloading the image {IMAGE}.", first=at(1), since=0.75),
    version("c", "Failed", "error", f"The image {IMAGE} does not exist.", first=at(2), since=1.8),
    version("d", "Failed", "warning", "Could not download the image.", first=at(2), since=1.9),
    version("b", "Pulling", "info", f"Downloading the image {IMAGE}.", first=at(1), last=at(3), since=2.9, count=2),
    version("c", "Failed", "error", f"The image {IMAGE} does not exist.", first=at(2), last=at(3), since=3.1, count=2),
    version("d", "Failed", "warning", "Could not download the image.", first=at(2), last=at(3), since=3.2, count=2),
    version("e", "BackOff", "warning", "Waiting before trying again.", first=at(3), since=3.3),
    # the cluster's clock runs ahead: its first stamp is later than the hub's reading
    version("f", "Unhealthy", "warning", "Not answering yet.", first=at(5.9), since=4.2, phase="starting"),
    version("g", "constructor", "warning", "An odd reason.", first=at(5), since=4.5, phase="starting"),
    # f repeats: its row moves later (its first stamp is now the smaller), and g follows
    version("f", "Unhealthy", "warning", "Not answering yet.", first=at(5.9), last=at(7), since=6.5,
            count=2, phase="starting"),
    # ahead again, seen once: the hub's reading (+0:05.9), not the stamp (+0:06.6)
    version("h", "FailedScheduling", "warning", "No machine has room.", first=at(7.2), since=5.9, phase=None),
    version("stopped-early", "StoppedEarly", "info", "Stopped early, at +0:06: waiting cannot fix this.",
            first=STARTED + timedelta(seconds=6.81), since=6.81, type_="Custom", phase=None),
]


def failed_timeline() -> SpawnTimeline:
    tl = SpawnTimeline(started_at=STARTED, clock=lambda: STARTED + timedelta(seconds=6.95))
    for record in ARRIVALS:
        tl.add(dict(record))  # type: ignore[arg-type]
    tl.finish("failed", "")
    return tl


LIVE = HARNESS + ROWS_SETUP + """
// the hub's "Server requested", as static/pages/pending.js makes its record
rows.queue({ id: "message:Server requested", timestamp: data.started, first_timestamp: null, type: "",
  severity: "info", reason: null, object: null, component: null, count: 1, message: "Server requested",
  raw_message: "Server requested", rule: null, since_spawn: 0 });
rows.flush();
for (const record of arrivals) { rows.queue(record); rows.flush(); }  // a frame per event
rows.markCause(%(cause)s);
const text = (row, cls) => { const found = row.querySelector("." + cls); return found ? found.textContent : ""; };
console.log(JSON.stringify({ events, rows: log.elements().map((row) => ({
  id: row.dataset.recordId, severity: row.dataset.severity, clock: text(row, "rp-clock"),
  last: text(row, "rp-last"), time: (row.querySelector(".rp-time") || {}).dateTime || null,
  timeText: text(row, "rp-time"),
  pills: row.all("rp-pill").map((p) => p.textContent),
  count: text(row, "rp-count"), countTitle: (row.querySelector(".rp-count") || {}).title || "",
})) }));
"""


def live_rows(cause: str | None) -> dict[str, Any]:
    script = LIVE % {
        "rows": json.dumps((STATIC / "rows.js").as_uri()),
        "data": json.dumps(pending_data()),
        "arrivals": json.dumps(ARRIVALS),
        "cause": json.dumps(cause),
    }
    return run_node(script)


def page_rows() -> tuple[int, list[dict[str, Any]]]:
    doc = failure_page("alice", failed_timeline())
    title = doc.by_id("rp-timeline-title").words()
    events = int(re.search(r"\((\d+) events?", title).group(1))  # type: ignore[union-attr]

    def text(row: Any, cls: str) -> str:
        found = row.find_all(class_=cls)
        return found[0].words() if found else ""

    rows = []
    for row in doc.by_id("rp-timeline").find_all("div", class_="rp-event"):
        times = row.find_all("time")
        counts = row.find_all(class_="rp-count")
        rows.append({
            "id": row.attrs["data-record-id"],
            "severity": row.attrs["data-severity"],
            "clock": text(row, "rp-clock"),
            "last": text(row, "rp-last"),
            "time": times[0].attrs["datetime"] if times else None,
            "timeText": times[0].words() if times else "",
            "pills": [p.words() for p in row.find_all(class_="rp-pill")],
            "count": text(row, "rp-count"),
            "countTitle": counts[0].attrs["title"] if counts else "",
        })
    return events, rows


@needs_node
def test_both_pages_show_every_row_alike() -> None:
    events, page = page_rows()
    cause = next(row["id"] for row in page if "the cause" in row["pills"])
    live = live_rows(cause)
    assert [r["id"] for r in live["rows"]] == [r["id"] for r in page]
    for mine, theirs in zip(live["rows"], page, strict=True):
        # the time's text is the viewer's on the live page, "... UTC" from the hub
        assert {**mine, "timeText": ""} == {**theirs, "timeText": ""}
    # "(N events)": the rows of the spawn, not the hub's "Server requested"
    assert live["events"] == events == len(page) - 1 == len({r["id"] for r in ARRIVALS})


@needs_node
def test_the_clocks_are_the_smaller_reading_cut_to_the_second() -> None:
    _, page = page_rows()
    clocks = {row["id"]: (row["clock"], row["last"]) for row in page}
    assert clocks == {
        "message:Server requested": ("+0:00", ""),
        "a": ("+0:00", ""),
        # stamped 07:46:28, read at +0:00.75: the stamp's 0.4 s, not the reading
        "b": ("+0:00", "to +0:02"),
        "c": ("+0:01", "to +0:03"),
        "d": ("+0:01", "to +0:03"),
        "e": ("+0:02", ""),
        # read at +0:04.2 and stamped later: the row moved to its first stamp (+0:05.3)
        "f": ("+0:05", "to +0:06"),
        # its own first stamp is +0:04.4, but never earlier than the row above
        "g": ("+0:05", ""),
        "h": ("+0:05", ""),
        "stopped-early": ("+0:06", ""),
    }


@needs_node
def test_pills_say_a_word_and_the_reason_stays_in_the_details() -> None:
    _, page = page_rows()
    pills = {row["id"]: row["pills"] for row in page}
    assert pills == {
        "message:Server requested": [],
        "a": ["done"],
        "b": ["working"],
        "c": ["error", "the cause"],
        "d": ["retrying"],
        "e": ["retrying"],
        "f": ["retrying"],
        "g": ["problem"],  # an odd reason (a JS object's own key) reads as its severity
        "h": ["waiting"],
        "stopped-early": ["stopped"],
    }
    doc = failure_page("alice", failed_timeline())
    cause = doc.by_id("rp-timeline").find_all("div", class_="rp-decisive")[0]
    assert "Failed" not in [p.words() for p in cause.find_all(class_="rp-pill")]
    assert "ReasonFailed" in cause.find_all("dl")[0].words().replace(" ", "")


def test_every_severity_has_a_word_and_the_page_gets_the_table() -> None:
    assert list(SEVERITY_WORDS) == list(SEVERITIES) == list(REASON_WORDS)
    words = vocabulary()["reasonWords"]
    assert words["severity"] == dict(SEVERITY_WORDS)
    assert words["reason"] == {severity: dict(table) for severity, table in REASON_WORDS.items()}
    # an error is an error, whatever its reason; no reason, no pill
    assert row_word("error", "Pulled") == "error"
    assert row_word("info", None) == row_word("warning", "") == ""
    assert row_word("nonsense", "Pulled") == "done"


LOCAL = HARNESS.replace("const { TimelineRows }", "const { showLocalTimes }") + """
import * as clock from %(clock)s;
const log = new El("div");
const time = new El("time"); time.className = "rp-time"; time.dateTime = %(iso)s; time.textContent = "07:46:28 UTC";
log.all = () => [time]; log.querySelectorAll = () => [time];
showLocalTimes(log);
console.log(JSON.stringify({ shown: time.textContent, title: clock.fullTime(%(iso)s),
  bad: [clock.localClockTime("nonsense"), clock.fullTime(null)] }));
"""


@needs_node
@pytest.mark.parametrize(
    ("zone", "shown", "title"),
    [
        ("America/Los_Angeles", "11:46:28 PM PST", "Nov 28, 2026, 11:46:28 PM PST (2026-11-29 07:46:28 UTC)"),
        ("UTC", "7:46:28 AM UTC", "Nov 29, 2026, 7:46:28 AM UTC (2026-11-29 07:46:28 UTC)"),
    ],
)
def test_row_times_are_the_viewers_with_the_zone_named(zone: str, shown: str, title: str) -> None:
    script = LOCAL % {
        "rows": json.dumps((STATIC / "rows.js").as_uri()),
        "clock": json.dumps((STATIC / "clock.js").as_uri()),
        "iso": json.dumps("2026-11-29T07:46:28Z"),
    }
    got = run_node(script, zone=zone)
    # ICU may put a narrow no-break space before AM/PM
    assert {k: v.replace("\u202f", " ") if isinstance(v, str) else v for k, v in got.items()} == {
        "shown": shown, "title": title, "bad": ["", ""],
    }


def test_the_report_under_the_rows_gives_each_the_same_clock() -> None:
    # "Copy details" and the failure page's plain-text report: the rows' clocks, to the second
    doc = failure_page("alice", failed_timeline())
    report = doc.by_id("rp-report").text()
    said = {}
    for line in report[report.index("Timeline:"):].splitlines()[1:]:
        # time, clock, type, reason, object, sentence (and "x2")
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) >= 6:
            said[cells[5]] = cells[1]
    shown = {}
    for row in doc.by_id("rp-timeline").find_all("div", class_="rp-event")[1:]:  # not "Server requested"
        clock = " ".join(part.words() for cls in ("rp-clock", "rp-last") for part in row.find_all(class_=cls))
        shown[row.find_all(class_="rp-message")[0].words()] = clock
    assert said == shown
