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
import os
import re
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from test_pages import failure_page, pending_page

from richprogress.model.display import REASON_WORDS, SEVERITY_WORDS, row_word
from richprogress.model.records import SEVERITIES
from richprogress.model.timeline import SpawnTimeline
from richprogress.web.views.vocabulary import vocabulary

STATIC = Path(__file__).resolve().parents[1] / "static"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

#: the spawn's start has a part of a second, as the hub's clock does
STARTED = datetime(2026, 11, 29, 7, 46, 27, 603381, tzinfo=timezone.utc)
WHOLE = STARTED.replace(microsecond=0)
POD = "jupyter-alice"


def stamp(moment: datetime) -> str:
    text = moment.isoformat().replace("+00:00", "Z")
    return text.replace(".000000Z", "Z")


def version(
    uid: str, reason: str, severity: str, message: str, *, first: datetime, last: datetime | None = None,
    since: float, count: int = 1, type_: str | None = None, phase: str | None = "image",
) -> dict[str, Any]:
    """One version of a record as the stream sends it (a repeat: a higher count, a later stamp)."""
    return {
        "id": uid,
        "timestamp": stamp(last or first),
        "first_timestamp": stamp(first),
        "type": type_ or ("Normal" if severity == "info" else "Warning"),
        "severity": severity,
        "reason": reason,
        "object": {"kind": "Pod", "name": POD, "container": "notebook", "field_path": None},
        "component": "kubelet",
        "count": count,
        "message": message,
        "raw_message": message,
        "rule": None,
        "phase": phase,
        "since_spawn": since,
    }


def at(seconds: float) -> datetime:
    """A whole-second Kubernetes stamp, ``seconds`` after the start's second."""
    return WHOLE + timedelta(seconds=seconds)


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


def pending_data() -> dict[str, Any]:
    """The live page's data (its start, to the millisecond, and its vocabulary)."""
    tl = SpawnTimeline(started_at=STARTED, clock=lambda: STARTED + timedelta(seconds=0.2))
    _, data = pending_page("alice", "", tl)
    return {**data, "ownPod": POD}  # KubeSpawner's pod_name


# A DOM just big enough for rows.js, row-details.js and breaks.js: elements with classes,
# text, attributes and children; querySelector by one class.
HARNESS = """
class El {
  constructor(tag) { this.tagName = tag.toUpperCase(); this.children = []; this.parent = null;
    this.className = ""; this.dataset = {}; this.attrs = {}; this.title = ""; this.dateTime = ""; }
  get textContent() { return this.children.map((c) => typeof c === "string" ? c : c.textContent).join(""); }
  set textContent(text) { this.children = [String(text)]; }
  get childElementCount() { return this.children.filter((c) => typeof c !== "string").length; }
  get classList() { const el = this; return {
    add(c) { el.className = (el.className + " " + c).trim(); },
    contains(c) { return el.className.split(" ").includes(c); } }; }
  adopt(nodes) { const out = [];
    for (const n of nodes) { if (n && n.tagName === "#FRAGMENT") { out.push(...n.adopt(n.children)); n.children = []; }
      else { if (typeof n !== "string") { if (n.parent) n.parent.remove(n); n.parent = this; } out.push(n); } }
    return out; }
  remove(n) { this.children = this.children.filter((c) => c !== n); }
  append(...nodes) { this.children.push(...this.adopt(nodes)); }
  prepend(...nodes) { this.children.unshift(...this.adopt(nodes)); }
  replaceChildren(...nodes) { const kept = this.adopt(nodes); this.children = kept; }
  replaceWith(node) { const p = this.parent; const i = p.children.indexOf(this);
    p.children.splice(i, 1, ...p.adopt([node])); this.parent = null; }
  after(node) { const p = this.parent; const i = p.children.indexOf(this);
    p.children.splice(i + 1, 0, ...p.adopt([node])); }
  setAttribute(k, v) { this.attrs[k] = String(v); }
  getAttribute(k) { return k in this.attrs ? this.attrs[k] : null; }
  elements() { return this.children.filter((c) => typeof c !== "string"); }
  all(cls) { const out = []; for (const c of this.elements()) {
    if (c.className.split(" ").includes(cls)) out.push(c); out.push(...c.all(cls)); } return out; }
  querySelector(sel) { return this.all(sel.replace(/^[a-z]*\\./, ""))[0] || null; }
  focus() {}
  dispatchEvent() {}
}
globalThis.document = { createElement: (t) => new El(t), activeElement: null,
  createDocumentFragment: () => new El("#fragment") };
globalThis.window = { requestAnimationFrame: () => 1, cancelAnimationFrame: () => {} };
globalThis.CustomEvent = class { constructor(type, init) { this.type = type; this.detail = init.detail; } };
const { TimelineRows } = await import(%(rows)s);
"""

#: the live page's rows over the page's data, and the records that arrive (``arrivals``)
ROWS_SETUP = """
const data = %(data)s, arrivals = %(arrivals)s;
const log = new El("div");
let events = null;
const rows = new TimelineRows(log, { started: data.started, ownPod: data.ownPod,
  vocabulary: data.vocabulary, onWritten: (n) => { events = n; } });
"""

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


def run_node(script: str, *, zone: str = "UTC") -> Any:
    env = {**os.environ, "TZ": zone, "LC_ALL": "en_US.UTF-8", "LANG": "en_US.UTF-8"}
    out = subprocess.run(
        ["node", "--input-type=module", "-e", script], check=True, capture_output=True, text=True,
        timeout=30, env=env,
    ).stdout
    return json.loads(out)


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
