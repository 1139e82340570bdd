"""static/rows.js under node, on a small stand-in DOM, fed records as the stream sends them.

- ``HARNESS``: a DOM just big enough for rows.js, row-details.js and breaks.js, then
  ``TimelineRows`` imported (``%(rows)s``: rows.js's file URL); ``ROWS_SETUP``: the live
  page's rows over the page's data (``%(data)s``) and the records that arrive
  (``%(arrivals)s``); ``run_node(script, zone="UTC")``: the script's JSON output;
  ``needs_node``: skip without node;
- ``version(uid, reason, severity, message, first=..., since=...)``: one version of a
  record as the stream sends it; ``at(seconds)``: a whole-second Kubernetes stamp after the
  start (``STARTED``, with a part of a second as the hub's clock has);
- ``pending_data()``: the live page's data (its start and its vocabulary).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from richprogress.model.timeline import SpawnTimeline
from tests.helpers.pages import pending_page

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



def run_node(script: str, *, zone: str = "UTC") -> Any:
    env = {**os.environ, "TZ": zone, "LC_ALL": "en_US.UTF-8", "LANG": "en_US.UTF-8"}
    out = subprocess.run(
        ["node", "--input-type=module", "-e", script], check=True, capture_output=True, text=True,
        timeout=30, env=env,
    ).stdout
    return json.loads(out)
