"""Record every state a spawn's pages pass through, as the user saw them, and say what a
state says (for ui-tests/test_contradictions.py).

``RECORDER``, an init script, samples the DOM of every page of the browser context every
``SAMPLE_MS`` and after every change (a MutationObserver), and keeps each state that
differs from the one before in ``sessionStorage`` at once, one key per state: the states
outlive the page's own reloads (the redirect to the server, the reload after a failure,
the spawn form after a stop), and nothing is polled from Python while the spawn runs.
``record_spawn`` spawns a ``Case`` through the spawn form, waits on DOM conditions until
it ended, and reads the states and the JSON and text endpoints back (fetched from inside
the page, with its cookies and XSRF token, as the page's own fetch does).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.helpers.paths import TEST_OUTPUT

#: how often the recorder samples the page, besides after every DOM change
SAMPLE_MS = 100

#: the sessionStorage keys: "rp-rec-n" (states kept), "rp-rec-<i>" (state i), "rp-rec-load"
RECORDER = r"""
(() => {
  if (window.__rpRecorder) return;  // once per document
  window.__rpRecorder = true;
  const store = window.sessionStorage;
  const load = Number(store.getItem("rp-rec-load") || "0") + 1;
  store.setItem("rp-rec-load", String(load));
  [window.__states, window.__rpSamples] = [[], 0];
  let [last, lastRows] = [null, null];

  const byId = (id) => document.getElementById(id);
  const text = (node) => (node ? node.textContent.replace(/\s+/g, " ").trim() : null);
  const visible = (node) => Boolean(node && node.isConnected && node.checkVisibility());
  const box = (id) => {
    const node = byId(id);
    return node && {text: text(node), hidden: node.hidden, visible: visible(node), disabled: node.disabled};
  };
  const rowsOf = (list) => list && [...list.children].map((row) => ({
    id: row.dataset.recordId || null, cls: row.className, severity: row.dataset.severity || null,
    clock: text(row.querySelector(".rp-clock")), last: text(row.querySelector(".rp-last")),
    pills: [...row.querySelectorAll(".rp-pill, .rp-count")].map((p) => ({text: text(p), cls: p.className})),
    message: text(row.querySelector(".rp-message")) ?? text(row), visible: visible(row),
  }));
  const facts = (dl) => dl && [...dl.querySelectorAll("div")].map((d) => [text(d.querySelector("dt")), text(d.querySelector("dd"))]);

  function snapshot() {
    const bar = byId("progress-bar");
    const live = byId("rp-live");
    const kind = byId("richprogress-pending") ? "pending"
      : byId("richprogress-failed") ? "failed"
      : byId("spawn_form") ? "spawn-form"
      : /\/user\//.test(location.pathname) && !/\/hub\//.test(location.pathname) ? "server"
      : "other";
    return {
      load, path: location.pathname, kind,
      title: text(byId("rp-title")), lead: box("rp-lead"), step: text(byId("rp-step")),
      stepState: box("rp-step-state"), message: box("progress-message"),
      live: live ? {
        visible: visible(live), hidden: live.hidden, state: live.dataset.state || null,
        kicker: text(byId("rp-live-kicker")), summary: text(byId("rp-live-summary")),
        hint: box("rp-live-hint"), stop: box("rp-live-stop"),
      } : null,
      typical: {usually: box("rp-typical"), step: box("rp-typical-step"), longer: box("rp-typical-longer")},
      lost: box("rp-lost"),
      bar: bar ? {cls: bar.className, now: bar.getAttribute("aria-valuenow"),
                  label: bar.getAttribute("aria-label")} : null,
      elapsed: text(byId("rp-elapsed")), elapsedLabel: text(byId("rp-elapsed-label")),
      eventCount: text(byId("rp-event-count")),
      failure: live || byId("rp-failure") ? {
        box: box("rp-failure"), summary: text(byId("rp-failure-summary")),
        ref: box("rp-failure-ref-line"), refText: text(byId("rp-failure-ref")),
        hint: text(byId("rp-failure-hint")),
      } : null,
      stopButton: box("stop-server-btn"), stopStatus: box("stop-server-status"),
      rows: rowsOf(byId("progress-log")),
      // the failure page (templates/not_running.html)
      page: byId("richprogress-failed") ? {
        kicker: text(byId("rp-kicker")), summary: text(byId("rp-summary")),
        ref: text(byId("rp-summary-ref")), hint: text(byId("rp-hint")), facts: facts(byId("rp-facts")),
        timelineTitle: text(byId("rp-timeline-title")), rows: rowsOf(byId("rp-timeline")),
        report: text(byId("rp-report")),
      } : null,
      // any other page: its main heading and text, enough to tell what it says
      other: kind === "server" || kind === "other" || kind === "spawn-form"
        ? {heading: text(document.querySelector("h1, h2")),
           body: (document.body ? document.body.innerText : "").slice(0, 2000)}
        : null,
    };
  }

  function sample() {
    window.__rpSamples += 1;
    // a document still being parsed is half a page (a count above rows not parsed yet)
    if (!document.body || document.readyState === "loading") return;
    let state;
    try { state = snapshot(); } catch (err) { state = {load, path: location.pathname, kind: "error", error: String(err)}; }
    // rows are stored only when they changed (read_states fills them in): small per tick
    const rows = JSON.stringify(state.rows);
    const sameRows = rows === lastRows;
    const key = JSON.stringify({...state, rows: null});
    if (key === last && sameRows) return;
    [last, lastRows] = [key, rows];
    const kept = {...state, t: performance.timeOrigin + performance.now()};
    if (sameRows) { delete kept.rows; kept.sameRows = true; }
    window.__states.push(kept);
    const n = Number(store.getItem("rp-rec-n") || "0");
    store.setItem(`rp-rec-${n}`, JSON.stringify(kept));
    store.setItem("rp-rec-n", String(n + 1));
  }

  // the document itself: observed before its first element exists
  new MutationObserver(sample).observe(document,
    {childList: true, subtree: true, attributes: true, characterData: true});
  window.setInterval(sample, %(sample_ms)d);
  window.addEventListener("pagehide", sample);
})();
""".replace("%(sample_ms)d", str(SAMPLE_MS))

_READ_STATES = """() => Array.from({length: Number(sessionStorage.getItem("rp-rec-n") || "0")},
  (_, i) => JSON.parse(sessionStorage.getItem(`rp-rec-${i}`)))"""

_FETCH = """async (url) => {
  const xsrf = (window.jhdata && window.jhdata.xsrf_token) || "";
  const r = await fetch(url, {credentials: "same-origin", headers: {"X-XSRFToken": xsrf}});
  return {status: r.status, body: await r.text()};
}"""


def read_states(page: Page) -> list[dict[str, Any]]:
    """Every state the recorder kept in this tab, in order; a state whose rows did not
    change gets the rows of the state before it."""
    states: list[dict[str, Any]] = page.evaluate(_READ_STATES)
    for index, state in enumerate(states):
        if state.pop("sameRows", False):
            state["rows"] = states[index - 1].get("rows")
        state["index"] = index
    return states


def fetch_in_page(page: Page, url: str) -> tuple[int, str]:
    """GET ``url`` with the page's cookies and XSRF token: (status, body)."""
    answer = page.evaluate(_FETCH, url)
    return answer["status"], answer["body"]


@dataclass(frozen=True)
class Case:
    """One spawn to record: a scenario, the image typed in the form, and what the user clicks
    (``stop``: "stop-and-change" or "stop-server", once ``stop_when`` is visible)."""

    scenario: str
    typed: str | None = None
    stop: str | None = None
    stop_when: str | None = None

    @property
    def name(self) -> str:
        return self.scenario + (f"-{self.stop}" if self.stop else "")


@dataclass
class Recording:
    """All a test saw of one spawn: the states, the endpoints' answers, what it clicked."""

    scenario: str
    speed: float
    start_timeout: float
    states: list[dict[str, Any]] = field(default_factory=list)
    timeline: Any = None
    timeline_text: str = ""
    #: what the test did, in order, with the index of the last state before it
    actions: list[tuple[str, int]] = field(default_factory=list)
    #: how the spawn ended (``END``'s answer) and how long it took from the click, in seconds
    ended: str = ""
    seconds: float = 0.0

    def after(self, action: str) -> int | None:
        """The index of the first state after the test did ``action`` (None: it did not)."""
        return next((index + 1 for name, index in self.actions if name == action), None)


# -- what one state says ---------------------------------------------------------------------
# Each takes a state as ``read_states`` returns it. "Visible" is what Chromium draws
# (checkVisibility), not merely the absence of a hidden attribute.

#: the status line of the ready step (richprogress/web/views/vocabulary.py STEP_STATES)
READY_STATUS = "Your server is ready."
READY_STEP = "Server ready"


def shown(part: dict[str, Any] | None) -> str | None:
    """The text of a recorded element when it is visible, else None."""
    return (part.get("text") or "") if part and part.get("visible") else None


def live_page(state: dict[str, Any]) -> bool:
    """The pending page, before it says the start failed."""
    return state.get("kind") == "pending" and not failed_live(state)


def failed_live(state: dict[str, Any]) -> bool:
    """The pending page saying the start failed (the title, or the failure box)."""
    box = (state.get("failure") or {}).get("box")
    return state.get("kind") == "pending" and ("could not start" in (state.get("title") or "") or shown(box) is not None)


def says_failed(state: dict[str, Any]) -> bool:
    """Either page saying the start failed."""
    return failed_live(state) or state.get("kind") == "failed"


def banner(state: dict[str, Any]) -> str | None:
    """The live banner's data-state when it is visible, else None."""
    live = state.get("live") or {}
    return live.get("state") if live.get("visible") else None


def cannot_continue(state: dict[str, Any]) -> bool:
    """A live page saying waiting will not get past the cause: the red banner ("This will
    not fix itself", "Stopped early"), "(cannot continue)" beside the step, the status line
    "Waiting will not get past this", or the bar turned red."""
    if not live_page(state):
        return False
    words = " ".join(
        t or "" for t in (shown(state.get("stepState")), shown(state.get("message")),
                          (state.get("live") or {}).get("kicker") if banner(state) else None)
    )
    red = "bg-danger" in ((state.get("bar") or {}).get("cls") or "").split()
    return (banner(state) in ("hopeless", "stopped") or red or "cannot continue" in words
            or "will not fix itself" in words or "Waiting will not get past" in words)


def says_ready(state: dict[str, Any]) -> bool:
    """The step or the status line saying the server is ready."""
    return state.get("step") == READY_STEP or shown(state.get("message")) == READY_STATUS


def stopping(state: dict[str, Any]) -> bool:
    """A stop button saying it is stopping the server (the user clicked it)."""
    buttons = (state.get("stopButton"), (state.get("live") or {}).get("stop"))
    if any((b or {}).get("text", "").startswith("Stopping") for b in buttons):
        return True
    return (shown(state.get("stopStatus")) or "").startswith(("Stopping", "Server stopped"))


def typical_lines(state: dict[str, Any]) -> dict[str, str]:
    """The typical-time lines Chromium shows, by name (usually, step, longer)."""
    lines = state.get("typical") or {}
    return {name: text for name, part in lines.items() if (text := shown(part)) is not None}


def rows(state: dict[str, Any]) -> list[dict[str, Any]]:
    """The timeline rows of either page (the live log, or the failure page's timeline)."""
    page = state.get("page") or {}
    return (page.get("rows") if state.get("kind") == "failed" else state.get("rows")) or []


def pills(row: dict[str, Any], kind: str) -> list[str]:
    """A row's pills of one kind: reason, object, overcome, decisive, count."""
    return [p["text"] for p in row.get("pills") or [] if f"rp-pill-{kind}" in p["cls"].split()
            or (kind == "count" and "rp-count" in p["cls"].split())]


def spawn_rows(state: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of the spawn: not the hub's own "Server requested", not a fold."""
    return [r for r in rows(state) if r.get("id") and r["id"] != "message:Server requested"
            and r.get("message") != "Server requested"]


def last_row_seconds(state: dict[str, Any]) -> int | None:
    """The latest clock among the rows (a repeat's "to +m:ss" counts), in seconds."""
    found = [seconds(c) for r in rows(state) for c in (r.get("clock"), (r.get("last") or "").removeprefix("to "))]
    found = [f for f in found if f is not None]
    return max(found) if found else None


# -- reading states -------------------------------------------------------------------------


def seconds(clock: str | None) -> int | None:
    """ "+1:02" or "1:02" or "1:02:03" as seconds; None when it is not a clock."""
    match = re.fullmatch(r"\+?(\d+):(\d\d)(?::(\d\d))?", (clock or "").strip())
    if not match:
        return None
    a, b, c = match.groups()
    return int(a) * 3600 + int(b) * 60 + int(c) if c else int(a) * 60 + int(b)


def duration(text: str | None) -> int | None:
    """ "7 s", "2 min 31 s", "1 h 02 min" (clock.js formatDuration) as seconds."""
    match = re.fullmatch(r"(?:(\d+) h )?(?:(\d+) min)? ?(?:(\d+) s)?", (text or "").strip())
    if not match or not any(match.groups()):
        return None
    h, m, s = (int(g) if g else 0 for g in match.groups())
    return h * 3600 + m * 60 + s


def brief(state: dict[str, Any]) -> str:
    """One state in a few lines, for a failure message."""
    live, bar, page, failure = (state.get(k) or {} for k in ("live", "bar", "page", "failure"))
    lines = [
        f"#{state.get('index')} load {state.get('load')} {state.get('kind')} {state.get('path')}",
        (f"  title={state.get('title')!r} step={state.get('step')!r}"
         f" note={_vis(state.get('stepState'))} status={_vis(state.get('message'))}"),
        (f"  clock={state.get('elapsedLabel')!r} {state.get('elapsed')!r} bar={bar.get('cls')!r}"
         f"@{bar.get('now')} lead={_vis(state.get('lead'))} count={state.get('eventCount')!r}"),
    ]
    if live.get("visible"):
        lines.append(f"  banner[{live.get('state')}] {live.get('kicker')!r}: {live.get('summary')!r} "
                     f"hint={_vis(live.get('hint'))}")
    if typical_lines(state):
        lines.append(f"  typical={typical_lines(state)}")
    if shown(failure.get("box")) is not None:
        lines.append(f"  failure box: {failure.get('summary')!r} ref={failure.get('refText')!r} "
                     f"hint={failure.get('hint')!r}")
    if shown(state.get("lost")):
        lines.append(f"  lost: {state['lost']['text']!r}")
    if stopping(state):
        lines.append(f"  stopping: {(state.get('stopButton') or {}).get('text')!r} {shown(state.get('stopStatus'))!r}")
    if page:
        lines += [f"  failure page: {page.get('summary')!r} ref={page.get('ref')!r} hint={page.get('hint')!r}",
                  f"  facts={page.get('facts')}"]
    for row in rows(state):
        tags = " ".join(f"[{p['text']}]" for p in row["pills"])
        lines.append(f"    {row['clock'] or '':>7} {row['last'] or '':>9} {tags} {row['message'][:110]}")
    other = state.get("other")
    if other:
        lines.append(f"  page heading={other.get('heading')!r}")
    return "\n".join(lines)


def explain(title: str, broken: list[tuple[str, str, str, tuple[int, ...]]], states: list[dict[str, Any]]) -> str:
    """A failure message: each rule broken (name, why, what) with the states that broke it."""
    parts = [f"{title}: {len(broken)} contradiction(s)"]
    for name, why, what, indexes in broken:
        parts += [f"\n== {name}: {what}\n   why: {why}"] + [brief(states[i]) for i in indexes if i < len(states)]
    return "\n".join(parts)


def _vis(part: dict[str, Any] | None) -> str:
    if not part:
        return "-"
    return repr(part.get("text")) if part.get("visible") else "(hidden)"


# -- recording a spawn ---------------------------------------------------------------------

#: how a spawn ended, asked of whatever page the tab shows: false while it runs; "banner"
#: when asked to (the first banner, for its screenshot); else the page it ended on. The live
#: failure counts once the page's own fetch of the timeline came back (it fills the hint).
END = """(wantBanner) => {
  if (document.readyState !== "complete" || !document.body) return false;
  if (document.getElementById("richprogress-failed")) return "failed-page";
  if (document.getElementById("richprogress-pending")) {
    const box = document.getElementById("rp-failure");
    if (box && !box.hidden) {
      const fetched = performance.getEntriesByType("resource").some((e) => e.name.includes("/timeline"));
      return fetched ? "failed-live" : false;
    }
    const live = document.getElementById("rp-live");
    return wantBanner && live && live.checkVisibility() ? "banner" : false;
  }
  if (document.getElementById("spawn_form")) return "spawn-form";
  return /\\/user\\//.test(location.pathname) && !/\\/hub\\//.test(location.pathname) ? "server" : "other";
}"""

SCREENSHOTS = TEST_OUTPUT / "screenshots"
RECORDINGS = TEST_OUTPUT / "contradictions"


def _settle(page: Page) -> None:
    """Wait until the recorder has sampled a few more times (the page's last writes kept)."""
    page.wait_for_load_state("load")
    start = page.evaluate("window.__rpSamples || 0")
    page.wait_for_function("(n) => (window.__rpSamples || 0) > n + 3", arg=start)


def _kept(page: Page) -> int:
    return int(page.evaluate("Number(sessionStorage.getItem('rp-rec-n') || '0')"))


def record_spawn(hub_page: Any, case: Case, name: str, shots: list[Path]) -> Recording:
    """Spawn ``case`` through the spawn form, record every state until it ends, read the
    endpoints, and save screenshots of the most uncertain moment and of the end (into each
    folder of ``shots``)."""
    page, hub = hub_page.page, hub_page.hub
    rec = Recording(case.scenario, hub.speed, hub.start_timeout)
    page.context.add_init_script(RECORDER)
    page.goto(f"{hub.url}hub/spawn")
    page.check(f"#profile-item-{case.scenario}")
    if case.typed is not None:
        select = f"#profile-option-{case.scenario}--image"
        page.select_option(select, "unlisted-choice")
        page.fill(f"{select}--unlisted-choice", case.typed)
    clicked = time.monotonic()
    page.locator("#spawn_form [type=submit]").click()
    page.wait_for_url(lambda url: "/spawn-pending/" in url or "/user/" in url, wait_until="commit")
    # the screenshots of the most uncertain moment: the first banner (or, with a stop, the
    # moment the user clicks), else the longest-lasting state (chosen once it ended)
    banner_shots: list[bytes] = []
    candidates: list[tuple[int, int, bytes]] = []
    if case.stop:
        page.locator(case.stop_when or "").first.wait_for(state="visible")
        banner_shots.append(page.screenshot())
        rec.actions.append(("stop", _kept(page) - 1))
        page.locator("#rp-live-stop" if case.stop == "stop-and-change" else "#stop-server-btn").click()
    deadline = clicked + hub.start_timeout + 90
    ended = None
    while ended is None:
        if time.monotonic() > deadline:
            raise AssertionError(f"{name}: the spawn did not end within {hub.start_timeout + 90:.0f} s")
        try:
            ended = page.wait_for_function(END, arg=not banner_shots, timeout=1000).json_value()
        except PlaywrightTimeoutError:
            pass
        except PlaywrightError as err:  # the page navigated while it was being asked
            if "navigat" not in str(err) and "context was destroyed" not in str(err):
                raise
            continue
        if ended in (None, "banner"):
            try:  # short: a screenshot taken as the page navigates waits for the next page
                before, shot = _kept(page), page.screenshot(timeout=3000)
                if ended == "banner":
                    banner_shots.append(shot)
                else:
                    candidates.append((before, _kept(page), shot))
            except PlaywrightError:
                pass
            ended = None
    rec.ended, rec.seconds = str(ended), time.monotonic() - clicked
    _settle(page)
    end_shots = [("end", page.screenshot())]
    if ended == "failed-live":
        page.reload()
        _settle(page)
        end_shots.append(("failure-page", page.screenshot()))
    if not page.evaluate("Boolean(window.jhdata)"):  # the endpoints are read from a hub page
        page.goto(f"{hub.url}hub/home")
    base = f"{hub.url}hub/api/richprogress/users/{hub_page.user_path}/timeline"
    status, body = fetch_in_page(page, base)
    rec.timeline = json.loads(body) if status == 200 else None
    rec.timeline_text = fetch_in_page(page, base + ".txt")[1]
    rec.states = read_states(page)
    uncertain = banner_shots[0] if banner_shots else _uncertain(rec.states, candidates)
    for folder in shots:
        folder.mkdir(parents=True, exist_ok=True)
        for moment, png in ([("uncertain", uncertain)] if uncertain else []) + end_shots:
            (folder / f"contradictions-{name}-{moment}.png").write_bytes(png)
    return rec


def _signature(state: dict[str, Any]) -> str:
    """A state without its clocks: what the user reads, not how long it has been."""
    keep = {k: v for k, v in state.items() if k not in ("t", "index", "elapsed", "rows", "typical")}
    keep["rows"] = [(r.get("id"), r.get("pills"), r.get("message")) for r in rows(state)]
    keep["typical"] = sorted(typical_lines(state))
    return json.dumps(keep, sort_keys=True)


def _uncertain(states: list[dict[str, Any]], candidates: list[tuple[int, int, bytes]]) -> bytes | None:
    """The screenshot taken during the longest-lasting state of the live page (clocks aside)."""
    spans: list[tuple[float, int, int]] = []
    for i, state in enumerate(states):
        if not live_page(state):
            continue
        if spans and spans[-1][2] == i - 1 and _signature(states[i - 1]) == _signature(state):
            spans[-1] = (spans[-1][0], spans[-1][1], i)
        else:
            spans.append((state["t"], i, i))
    if not spans:
        return None
    def lasted(span: tuple[float, int, int]) -> float:
        end = states[span[2] + 1]["t"] if span[2] + 1 < len(states) else states[span[2]]["t"]
        return end - span[0]
    for _, first, last in sorted(spans, key=lasted, reverse=True):
        for before, after, png in candidates:
            if before - 1 <= last and after - 1 >= first:
                return png
    return candidates[-1][2] if candidates else None


def save_recording(rec: Recording, name: str, broken: list[Any]) -> Path:
    """The recording as JSON, for a person reading why a rule broke."""
    RECORDINGS.mkdir(parents=True, exist_ok=True)
    path = RECORDINGS / f"{name}.json"
    path.write_text(json.dumps({"scenario": rec.scenario, "speed": rec.speed, "ended": rec.ended,
                                "seconds": rec.seconds, "actions": rec.actions, "broken": broken,
                                "timeline": rec.timeline, "timeline_text": rec.timeline_text,
                                "states": rec.states}, indent=1))
    return path
