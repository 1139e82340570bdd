"""static/connection.js (the pending page's "Lost contact with the hub"), run under node.

A fake clock, DOM, stream and fetch stand in for the browser, so each case is exact: an
error the stream recovers from within the grace period says nothing; one it does not
recover from says "Lost contact", stops the clock, and probes the hub with growing
intervals until the hub itself answers (below 500, with JupyterHub's version header: not
the proxy's own 404 while the hub's route is missing), then reloads; a stream closed for good is lost at
once; a stream that comes back by itself hides the notice. The browser test
(ui-tests/test_spawn_history.py) restarts a real hub under a real page.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.helpers.paths import STATIC

JS = STATIC / "connection.js"

HARNESS = """
import { ContactWatch, LOST_AFTER_MS, PROBE_TIMEOUT_MS } from %(module)s;

const nodes = {};
class El {
  constructor() { this.hidden = false; this.children = []; this.textContent = ""; this.id = ""; }
  append(c) { this.children.push(c); if (c.id) nodes[c.id] = c; }
  after(c) { nodes[c.id] = c; }
  setAttribute() {}
}
nodes["progress-message"] = new El();
globalThis.document = { getElementById: (id) => nodes[id] || null, createElement: () => new El(),
                        body: { prepend(c) { nodes[c.id] = c; } } };
let intervals = 0;
globalThis.window = { setInterval: () => ++intervals, clearInterval: () => {},
                      setTimeout: () => 0, clearTimeout: () => {}, fetch: () => null,
                      location: { reload() {} } };

let now = 0;
let timers = [];
const env = {
  setTimeout: (fn, ms) => { const t = { at: now + ms, fn }; timers.push(t); return t; },
  clearTimeout: (t) => { timers = timers.filter((x) => x !== t); },
  fetch: async (url, options) => { const next = answers.shift(); if (next === "down") throw new Error("down");
                       if (next === "silent") {  // accepts the connection, never answers
                         return new Promise((_, reject) => options.signal.addEventListener("abort", () => reject(new Error("aborted"))));
                       }
                       const [status, hub] = next;
                       return { status, headers: new Map(hub ? [["X-JupyterHub-Version", "6.1.1"]] : []) }; },
  reload: () => { log.push(`reload@${now}`); },
};
async function advance(ms) {
  const end = now + ms;
  for (;;) {
    timers.sort((a, b) => a.at - b.at);
    const t = timers[0];
    if (!t || t.at > end) break;
    timers.shift(); now = t.at; t.fn();
    await new Promise((r) => setImmediate(r));
  }
  now = end;
}
const log = [];
let answers = [];
class Source extends EventTarget { constructor() { super(); this.readyState = 1; } }
function fire(source, type, state) { source.readyState = state; source.dispatchEvent(new Event(type)); }
function lostShown() { const box = nodes["rp-lost"]; return Boolean(box && !box.hidden); }

const out = {};
const page = { finished: false, timer: 7, tick() {}, data: { pageUrl: "/hub/spawn-pending/a" } };

// 1. an error the stream recovers from within the grace period
let watch = new ContactWatch(page, env); let s = new Source(); watch.follow(s);
fire(s, "error", 0); await advance(LOST_AFTER_MS - 500); fire(s, "open", 1); await advance(5000);
out.blip = { lost: lostShown(), timer: page.timer };

// 2. not recovered: lost, clock stopped, probes 2 s, 4 s, 4 s ... until the hub answers
fire(s, "error", 0); await advance(LOST_AFTER_MS);
out.lost = { lost: lostShown(), timer: page.timer, text: nodes["rp-lost-text"].textContent, at: now };
// down, the proxy's 502, the proxy's own 404 before the hub's route is back, the hub's 404
answers = ["down", [502, false], [404, false], [404, true]];
await advance(40000);
out.reload = log.slice();

// 3. closed for good: lost at once
log.length = 0; delete nodes["rp-lost"];
const page3 = { ...page, timer: 9 }; watch = new ContactWatch(page3, env); s = new Source(); watch.follow(s);
fire(s, "error", 2); out.closed = { lost: lostShown(), timer: page3.timer };

// 4. the stream comes back by itself: notice hidden, clock restarted
fire(s, "message", 1); out.back = { lost: lostShown(), restarted: page3.timer !== null };

// 6. a hub that takes the probe and never answers: given up after PROBE_TIMEOUT_MS, and the
// next probe reloads once the hub answers
log.length = 0; delete nodes["rp-lost"];
const page6 = { ...page, timer: 5 }; watch = new ContactWatch(page6, env); s = new Source(); watch.follow(s);
fire(s, "error", 2); const lost6 = now;
answers = ["silent", [404, true]];
await advance(30000);
out.silent = { reload: log.slice(), lostAt: lost6 };

// 5. a finished page (ready or failed) ignores the stream's end
delete nodes["rp-lost"];
const page5 = { ...page, finished: true }; watch = new ContactWatch(page5, env); s = new Source(); watch.follow(s);
fire(s, "error", 2); fire(s, "error", 0); await advance(60000); out.finished = { lost: lostShown() };

console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_contact_watch() -> None:
    script = HARNESS % {"module": json.dumps(JS.as_uri())}
    result = subprocess.run(
        ["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["blip"] == {"lost": False, "timer": 7}
    assert out["lost"]["lost"] is True
    assert out["lost"]["timer"] is None  # the clock stopped
    assert out["lost"]["text"].startswith("Lost contact with the hub.")
    lost_at = out["lost"]["at"]
    # probes at +2 s (down), +6 s (502), +10 s (the proxy's 404), +14 s (the hub's) -> reload:
    # at most 4 s after the hub is back
    assert out["reload"] == [f"reload@{lost_at + 2000 + 4000 + 4000 + 4000}"]
    # a probe the hub holds is given up at 5 s; the next one, 4 s later, reloads
    assert out["silent"]["reload"] == [f"reload@{out['silent']['lostAt'] + 2000 + 5000 + 4000}"]
    assert out["closed"] == {"lost": True, "timer": None}
    assert out["back"] == {"lost": False, "restarted": True}
    assert out["finished"] == {"lost": False}
