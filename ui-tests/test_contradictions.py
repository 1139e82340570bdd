"""No state of a spawn's pages may contradict another: every demo scenario, at two speeds.

Each test spawns one scenario through the spawn form in Chromium, as a user would, records
every state the pages pass through until the spawn ended (page_states.py), reads the JSON
and text endpoints, and checks ``RULES``: things the pages must never say together, in one
state or in two states one after the other. A failure names the scenario and speed (the
test id), each rule broken, why it matters, and the states that broke it; the recording is
saved to ``test-output/contradictions/<test id>.json``.

Fixture: ``contradiction_hub`` (module, one per speed of ``SPEEDS``): a DemoHub with typical
times for every step (``EXPECTED``, scaled to the speed), so the typical-time lines are
there to contradict, and none from past spawns (``min_samples``), so every run reads alike.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from richprogress.demo.hub import DemoHub, default_start_timeout
from tests.helpers.demo_hub import serve
from tests.helpers.page_states import (
    READY_STATUS,
    READY_STEP,
    SCREENSHOTS,
    Case,
    Recording,
    banner,
    cannot_continue,
    duration,
    explain,
    failed_live,
    last_row_seconds,
    live_page,
    pills,
    record_spawn,
    rows,
    save_recording,
    says_failed,
    says_ready,
    seconds,
    shown,
    spawn_rows,
    stopping,
    typical_lines,
)
from tests.helpers.paths import REPO

#: replay speeds: a quick hub (most scenarios in a few seconds) and a slow one (states last);
#: ``RICHPROGRESS_REPLAY_SPEEDS=10`` replays at one speed only, as the z2jh lane of
#: scripts/lanes.py does (what older versions of the hub could change, one speed shows)
SPEEDS = tuple(float(speed) for speed in os.environ.get("RICHPROGRESS_REPLAY_SPEEDS", "10,3").split(","))
SLOW = min(SPEEDS)
MISSING_IMAGE = "quay.io/jupyter/no-such-notebook:2026-11"
TYPED_IMAGE = "quay.io/someone/my-notebook:2026-01"
DEFAULT_IMAGE = "quay.io/jupyter/base-notebook:latest"
#: typical times on a real cluster, in seconds ([usual, 9 in 10 within]); divided by the speed
EXPECTED = {"total": [60, 180], "requested": [5, 10], "scheduling": [5, 10], "scaling": [120, 240],
            "scheduled": [5, 10], "volume": [20, 40], "image": [20, 40], "starting": [5, 10]}
#: every scenario of the simulated cluster (each is a profile of the demo's spawn form)
SCENARIOS = sorted(p.stem for p in (REPO / "richprogress" / "demo" / "cluster" / "scenarios").glob("*.json"))
SPAWNS = [Case(s, typed=TYPED_IMAGE if s == "custom-image" else None) for s in SCENARIOS]
#: on the slow hub only: the click must come while the spawn is still pending
STOPS = [
    # the banner's own button, once it offers it (the cause will not fix itself)
    Case("no-node-fits", stop="stop-and-change", stop_when="#rp-live-stop"),
    # the stock button, while a machine is being added (a scale-up under way)
    Case("scale-up", stop="stop-server", stop_when="#rp-step:text-is('Adding a machine to the cluster')"),
]


# (fixture params, not a parametrize of the test: one hub per speed for all its tests)
@pytest.fixture(scope="module", params=SPEEDS, ids=lambda speed: f"{speed:g}x")
def contradiction_hub(request: pytest.FixtureRequest) -> Iterator[DemoHub]:
    speed = float(request.param)
    expected = {"*": {k: [round(v / speed, 2) for v in span] for k, span in EXPECTED.items()}}
    extra = f"c.TypicalTimes.expected = {expected!r}\nc.TypicalTimes.min_samples = 1000\n"
    yield from serve(DemoHub(speed=speed, start_timeout=default_start_timeout(speed), extra_config=extra))


# -- the rules --------------------------------------------------------------------------------

State = dict[str, Any]


@dataclass(frozen=True)
class Broken:
    """One place a rule is broken: what, and the states that show it."""

    what: str
    states: tuple[int, ...] = ()


@dataclass(frozen=True)
class Rule:
    name: str
    why: str  # the sentence a failure prints: why the two must never stand together
    check: Callable[[Recording], Iterator[Broken]]


RULES: list[Rule] = []


def rule(name: str, why: str) -> Callable[[Callable[[Recording], Iterator[Broken]]], Any]:
    """A rule over the whole recording."""
    def add(check: Callable[[Recording], Iterator[Broken]]) -> Any:
        RULES.append(Rule(name, why, check))
        return check
    return add


def never(name: str, why: str) -> Callable[[Callable[[State], str | None]], Any]:
    """A rule over one state (the predicate says what is wrong with it, or None), reported
    at the first state that breaks it, with how many do."""
    def add(says: Callable[[State], str | None]) -> Any:
        def check(rec: Recording) -> Iterator[Broken]:
            bad = [(s["index"], what) for s in rec.states if (what := says(s))]
            if bad:
                yield Broken(f"{bad[0][1]} ({len(bad)} states)", (bad[0][0],))
        RULES.append(Rule(name, why, check))
        return says
    return add


def never_then(name: str, why: str, first: Callable[[State], bool], later: Callable[[State], bool]) -> None:
    """A rule over two states: one where ``first`` holds, then a later one where ``later`` does."""
    def check(rec: Recording) -> Iterator[Broken]:
        start = next((s["index"] for s in rec.states if first(s)), None)
        end = next((s["index"] for s in rec.states[start + 1:] if later(s)), None) if start is not None else None
        if start is not None and end is not None:
            yield Broken(f"state {start}, then state {end}", (start, end))
    RULES.append(Rule(name, why, check))


never_then(
    "will-not-fix-itself, then ready",
    "The page said waiting cannot get past the cause (red banner, '(cannot continue)', red "
    "bar), then the server started: the first claim was false, and a user who believed it "
    "may have stopped a start that would have worked.",
    cannot_continue, lambda s: s.get("kind") == "server")
never_then(
    "will-not-fix-itself, then taken back",
    "A cause that 'will not fix itself' fixed itself while the start went on: the page took "
    "back a certainty it should not have claimed.",
    cannot_continue, lambda s: live_page(s) and not cannot_continue(s) and not stopping(s))


@never("typical times beside a failure",
       "'Usually ready in about N' or a step's usual time promises a start that has already failed.")
def _typical_failed(s: State) -> str | None:
    return f"failed, and shows {typical_lines(s)}" if says_failed(s) and typical_lines(s) else None


@never("typical times beside will-not-fix-itself",
       "A usual time (of the start or of the step) says waiting ends it; the page says it will "
       "not. One of the two is wrong.")
def _typical_hopeless(s: State) -> str | None:
    return f"cannot continue, and shows {typical_lines(s)}" if cannot_continue(s) and typical_lines(s) else None


@never("redirect promised beside a failure",
       "'You will be redirected automatically when it is ready' promises a server the page "
       "says cannot start, or did not.")
def _redirect_failed(s: State) -> str | None:
    lead = shown(s.get("lead")) or ""
    return f"{lead!r}" if "redirected" in lead and (says_failed(s) or cannot_continue(s)) else None


@never("server ready beside other words",
       "The step says 'Server ready' while the line under it or the note beside it says "
       "something else ('The server is starting.', 'Waiting will not get past this').")
def _ready_mixed(s: State) -> str | None:
    status, note = shown(s.get("message")), shown(s.get("stepState"))
    if live_page(s) and s.get("step") == READY_STEP and ((status and status != READY_STATUS) or note):
        return f"step {READY_STEP!r}, status {status!r}, note {note!r}"
    return None


@rule("server ready while stopping or after a failure",
      "A start the user is stopping, or stopped, or that failed, is not ready: 'Server ready' "
      "there tells the user the opposite of what happened.")
def _ready_stopped(rec: Recording) -> Iterator[Broken]:
    failed_at = next((s["index"] for s in rec.states if says_failed(s)), None)
    stopped_at = rec.after("stop")
    for s in rec.states:
        when = [w for w, ok in (("while stopping", stopping(s)),
                                ("after the failure", failed_at is not None and s["index"] >= failed_at),
                                ("after the user's stop", stopped_at is not None and s["index"] >= stopped_at)) if ok]
        if says_ready(s) and when:
            yield Broken(f"step {s.get('step')!r} {', '.join(when)}", (s["index"],))
            return


@never("still trying while lost or stopping",
       "'Still trying' says the page knows the cluster is still at it; 'Lost contact with the "
       "hub' says it knows nothing, and 'Stopping...' says the user is ending it.")
def _trying_lost(s: State) -> str | None:
    if banner(s) == "trying" and (shown(s.get("lost")) or stopping(s)):
        return "banner 'Still trying' beside " + ("'Lost contact'" if shown(s.get("lost")) else "'Stopping...'")
    return None


@never("failed during a live step state",
       "'Failed during: X' is over; a live note beside it ('(still trying)', '(cannot "
       "continue)', '(stopped)') says the start is still going on.")
def _failed_live_note(s: State) -> str | None:
    note = shown(s.get("stepState"))
    return f"{s.get('step')!r} {note}" if (s.get("step") or "").startswith("Failed during") and note else None


@never("live banner beside the failure box",
       "The live banner speaks of a start under way; the failure box says it ended.")
def _banner_failed(s: State) -> str | None:
    return f"banner {banner(s)!r} beside the failure box" if failed_live(s) and banner(s) else None


@never("full bar on a failure",
       "A full bar reads as a finished start; the page says it failed during an earlier step.")
def _bar_full(s: State) -> str | None:
    now = (s.get("bar") or {}).get("now")
    return f"bar at {now}% beside {s.get('step')!r}" if failed_live(s) and now == "100" else None


@never("will-not-fix-itself on one sighting",
       "A fatal cause seen once may be a blip (flaky-pull's first 'not found' clears on the "
       "retry): until it held, the page may say it is trying, not that it will not fix itself.")
def _one_sighting(s: State) -> str | None:
    summary = (s.get("live") or {}).get("summary")
    cause = [r for r in rows(s) if r.get("message") == summary]
    if live_page(s) and banner(s) == "hopeless" and cause and not any(pills(r, "count") for r in cause):
        return f"hopeless on {summary!r}, its row seen once"
    return None


@never("resolved beside its own problem",
       "A row marked 'resolved' cannot be the cause of a failure, nor what the live banner "
       "says is still in the way.")
def _resolved_cause(s: State) -> str | None:
    summary = (s.get("live") or {}).get("summary") if banner(s) else None
    for r in rows(s):
        if pills(r, "overcome") and (pills(r, "decisive") or r.get("message") == summary):
            return f"{r['message']!r} is resolved and " + ("the cause" if pills(r, "decisive") else "on the banner")
    return None


@rule("resolved, then not",
      "A problem the page called 'resolved' came back on the same row while the start went "
      "on: 'resolved' was said too soon.")
def _resolved_back(rec: Recording) -> Iterator[Broken]:
    resolved: dict[tuple[Any, str], int] = {}
    for s in rec.states:
        for r in rows(s) if live_page(s) else []:
            key = (s.get("load"), r.get("id") or "")
            if pills(r, "overcome"):
                resolved.setdefault(key, s["index"])
            elif key in resolved:
                yield Broken(f"{r['message']!r} resolved at state {resolved[key]}, not any more", (resolved[key], s["index"]))
                return


@never("row clock ahead of the header clock",
       "No event happened after 'now'. (The header ticks once a second from the hub's clock "
       "at render, so it may trail a row by up to two seconds; more is wrong.)")
def _row_ahead(s: State) -> str | None:
    header, last = seconds(s.get("elapsed")), last_row_seconds(s)
    if live_page(s) and header is not None and last is not None and last > header + 2:
        return f"a row at +{last} s, the header at {s.get('elapsed')}"
    return None


@rule("header clock going back",
      "The clock since the user clicked Start cannot go back while the start is pending.")
def _clock_back(rec: Recording) -> Iterator[Broken]:
    best: tuple[int, int] | None = None
    for s in rec.states:
        now = seconds(s.get("elapsed")) if live_page(s) else None
        if now is not None and best is not None and now < best[0]:
            yield Broken(f"{best[0]} s at state {best[1]}, then {now} s", (best[1], s["index"]))
            return
        best = (now, s["index"]) if now is not None and (best is None or now > best[0]) else best


def _gave_up(s: State) -> int | None:
    """'Gave up after N s' of a failed state (live, or the failure page's facts), in seconds."""
    if failed_live(s):
        return duration(s.get("elapsed"))
    return duration(dict((s.get("page") or {}).get("facts") or []).get("Gave up after")) if s.get("kind") == "failed" else None


@never("gave up before the last row",
       "'Gave up after N s' cannot be earlier than the last thing that happened before it gave up.")
def _gave_up_early(s: State) -> str | None:
    gave_up, last = _gave_up(s), last_row_seconds(s)
    return f"gave up after {gave_up} s, a row at +{last} s" if gave_up is not None and last is not None and gave_up < last else None


@never("event count not the rows",
       "'(N events)' beside the timeline counts the rows under it (not the hub's own 'Server "
       "requested'; a fold counts what it folds).")
def _count(s: State) -> str | None:
    label = (s.get("page") or {}).get("timelineTitle") if s.get("kind") == "failed" else s.get("eventCount")
    match = re.search(r"\((\d+) events?", label or "")
    if not match:
        return None
    folded = sum(int(m.group(1)) for r in rows(s) if "rp-fold" in (r.get("cls") or "")
                 and (m := re.search(r"(\d+) (?:similar|more) events", r.get("message") or "")))
    have = len(spawn_rows(s)) + folded
    return f"{label!r} over {have} rows" if int(match.group(1)) != have else None


#: for a "resolved" row, by the step it is about: the later rows that get past it
SUCCESS_OF = {"scheduling": ("Scheduled",), "scaling": ("Scheduled",), "image": ("Pulled",),
              "volume": ("ProvisioningSucceeded", "SuccessfulAttachVolume")}
STEP_OF_REASON = {"FailedScheduling": "scheduling", "NotTriggerScaleUp": "scaling",
                  "ErrImagePull": "image", "ImagePullBackOff": "image"}


@rule("resolved with no later success",
      "'resolved' says the start got past the problem: a scheduling problem needs a later "
      "'Scheduled' row, an image problem a later 'Pulled' row, anything else a ready server.")
def _resolved_unearned(rec: Recording) -> Iterator[Broken]:
    records = {r.get("id"): r for r in (rec.timeline or {}).get("records") or []}
    ready = (rec.timeline or {}).get("outcome") == "ready" or any(s.get("kind") == "server" for s in rec.states)
    last = {(s.get("load"), s.get("kind")): s for s in rec.states if rows(s)}  # what each page was left showing
    for s in last.values():
        # a row's pill is a word a person reads ("done"); its Kubernetes reason is the record's
        def reason_of(row: dict[str, Any]) -> str:
            return str((records.get(row.get("id")) or {}).get("reason") or "")

        for i, row in enumerate(rows(s)):
            reason = reason_of(row)
            step = (records.get(row.get("id")) or {}).get("phase") or STEP_OF_REASON.get(reason) or ""
            needs, later = SUCCESS_OF.get(step), {reason_of(r) for r in rows(s)[i + 1:]}
            if pills(row, "overcome") and (not later & set(needs) if needs else not ready):
                yield Broken(f"{row['message']!r} ({step}) resolved, with no later "
                             + (" or ".join(needs) + " row" if needs else "ready server"), (s["index"],))
                return


def _report(text: str) -> tuple[dict[str, str], dict[str, str]]:
    """The plain-text report's own lines ("Gave up after: 2 s") and its facts for an admin."""
    head: dict[str, str] = {}
    facts: dict[str, str] = {}
    section = head  # then facts, then the rest (steps, timeline), which is not read
    for line in text.splitlines():
        if line.startswith("Facts for an admin"):
            section = facts
        elif line and not line.startswith(" ") and section is facts:
            section = {}
        if match := re.match(r"^\s*([A-Z][A-Za-z ]+):\s+(.*)$", line):
            section.setdefault(match.group(1), match.group(2).strip())
    return head, facts


def _last(rec: Recording, which: Callable[[State], bool]) -> State | None:
    return next((s for s in reversed(rec.states) if which(s)), None)


def _failure_page(s: State) -> bool:
    return s.get("kind") == "failed"


def _plain(text: str | None, reference: str | None = None) -> str:
    """A sentence compared without its long name (the pages set it on a line of its own),
    "What you can do:", spacing and punctuation."""
    text = (text or "").replace(reference, "") if reference else (text or "")
    return re.sub(r"\W+", "", re.sub(r"^What (?:you|the user) can do:\s*", "", text.strip())).lower()


@rule("facts differ",
      "The failure page, the JSON endpoint and the text report are one spawn: a fact (the "
      "image, the start timeout, how long it took, the step it failed in) reads the same in "
      "each, and as the hub was configured.")
def _facts(rec: Recording) -> Iterator[Broken]:
    json_facts = dict(map(tuple, (rec.timeline or {}).get("facts") or []))
    head, text_facts = _report(rec.timeline_text)
    page, live = _last(rec, _failure_page), _last(rec, failed_live)
    page_facts = dict(map(tuple, (page or {}).get("page", {}).get("facts") or []))
    for label, value in json_facts.items():
        for where, facts in (("the text report", text_facts), ("the failure page", page_facts if page else None)):
            if facts is not None and facts.get(label) != value:
                yield Broken(f"{label}: {value!r} in the JSON, {facts.get(label)!r} in {where}", (page["index"],) if page else ())
    image = {"image-not-found": MISSING_IMAGE, "custom-image": TYPED_IMAGE}.get(rec.scenario, DEFAULT_IMAGE)
    for label, value in (("Images", image), ("Start timeout", f"{int(rec.start_timeout)} s")):
        if json_facts.get(label) != value:
            yield Broken(f"{label}: {json_facts.get(label)!r} in the JSON, the hub has {value!r}")
    for label, live_value in (("Gave up after", (live or {}).get("elapsed")),
                              ("Failed during", ((live or {}).get("step") or "").removeprefix("Failed during: "))):
        for where, value in (("the failure page", page_facts.get(label)), ("the text report", head.get(label))):
            if page and live and value != live_value:
                yield Broken(f"{label}: {live_value!r} on the live page, {value!r} in {where}", (live["index"], page["index"]))


@rule("summaries differ",
      "The live failure box, the failure page, the JSON endpoint and the text report tell one "
      "cause with one hint: a user comparing them, or an admin reading the report, must not "
      "find two stories.")
def _summaries(rec: Recording) -> Iterator[Broken]:
    diagnosis = (rec.timeline or {}).get("diagnosis") or {}
    page, live = _last(rec, _failure_page), _last(rec, failed_live)
    head, _ = _report(rec.timeline_text)
    shown_page, box = (page or {}).get("page") or {}, (live or {}).get("failure") or {}
    summaries = [("the text report", head.get("What went wrong"), None)]
    hints = [("the text report", head.get("What you can do"))]
    if page:
        summaries.append(("the failure page", f"{shown_page.get('summary') or ''} {shown_page.get('ref') or ''}", shown_page.get("ref")))
        hints.append(("the failure page", shown_page.get("hint")))
    if live:
        summaries.append(("the live failure box", f"{box.get('summary') or ''} {box.get('refText') or ''}", box.get("refText")))
        hints.append(("the live failure box", box.get("hint")))
    at = tuple(s["index"] for s in (live, page) if s)
    for where, text, reference in summaries if diagnosis else []:
        if _plain(text, reference) != _plain(diagnosis.get("summary"), reference):
            yield Broken(f"summary {diagnosis.get('summary')!r} in the JSON, {text!r} in {where}", at)
    for where, hint in hints if diagnosis else []:
        if _plain(hint) != _plain(diagnosis.get("hint")):
            yield Broken(f"hint {diagnosis.get('hint')!r} in the JSON, {hint!r} in {where}", at)


#: advice for a start still under way
WAIT_ADVICE = re.compile(r"if the server does not start|\bwait a few minutes", re.IGNORECASE)


@rule("advice to wait after it did not start",
      "'If the server does not start ...' and 'wait a few minutes' are advice for a start "
      "still under way; on a page that says it did not start they read as not knowing what "
      "happened.")
def _conditional_hint(rec: Recording) -> Iterator[Broken]:
    head, _ = _report(rec.timeline_text)
    texts = [("the JSON", ((rec.timeline or {}).get("diagnosis") or {}).get("hint"), ()),
             ("the text report", head.get("What you can do") if head.get("Outcome") == "failed" else None, ())]
    texts += [(s.get("kind"), t, (s["index"],)) for s in rec.states if says_failed(s)
              for t in ((s.get("failure") or {}).get("hint"), (s.get("page") or {}).get("hint"))]
    for where, text, at in texts:
        if text and WAIT_ADVICE.search(text):
            yield Broken(f"hint {text!r} on a failed start ({where})", at)
            return


@rule("still waiting after the failure",
      "'Still waiting for ...' describes a start under way; a row saying it later than the "
      "start gave up, or first shown after the failure, tells the user it is still going.")
def _waiting_late(rec: Recording) -> Iterator[Broken]:
    failed_at = next((s["index"] for s in rec.states if failed_live(s)), None)
    before = {r.get("id") for s in rec.states[:failed_at] if s.get("kind") == "pending" for r in rows(s)}
    for s in rec.states:
        for r in rows(s):
            if not (r.get("message") or "").startswith("Still waiting"):
                continue
            late = (_gave_up(s) is not None and (seconds(r.get("clock")) or 0) > (_gave_up(s) or 0))
            if late or (failed_at is not None and says_failed(s) and r.get("id") not in before):
                yield Broken(f"{r['message']!r} at {r.get('clock')}, "
                             + ("after it gave up" if late else "first shown after the failure"), (s["index"],))
                return
    timeline = rec.timeline or {}
    for record in timeline.get("records") or [] if timeline.get("outcome") == "failed" else []:
        if (record.get("message") or "").startswith("Still waiting") and (record.get("since_spawn") or 0) > (timeline.get("elapsed") or 0):
            yield Broken(f"the JSON has {record['message']!r} at {record['since_spawn']} s, after it gave up at {timeline['elapsed']} s")
            return


@rule("a failure after the user's stop",
      "The user stopped the start: nothing failed. 'could not start', a failure page, or a "
      "report with the outcome 'failed' blames the cluster for the user's own click.")
def _stop_is_not_failure(rec: Recording) -> Iterator[Broken]:
    stopped_at = rec.after("stop")
    failed = next((s for s in rec.states[stopped_at or 0:] if says_failed(s)), None) if stopped_at is not None else None
    if failed:
        yield Broken(f"{failed.get('title') or (failed.get('page') or {}).get('kicker')!r} after the stop", (failed["index"],))
    outcomes = {"the JSON": (rec.timeline or {}).get("outcome"), "the text report": _report(rec.timeline_text)[0].get("Outcome")}
    for where in [w for w, outcome in outcomes.items() if outcome == "failed"] if stopped_at is not None else []:
        yield Broken(f"{where} says outcome 'failed' ({(rec.timeline or {}).get('reason')!r}) after the user's stop")


# -- the test ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", SPAWNS, ids=lambda case: case.name)
def test_no_state_contradicts_another(contradiction_hub, case, make_hub_page, images_dir, request):
    check_spawn(contradiction_hub, case, make_hub_page, images_dir, request.node.callspec.id)


@pytest.mark.parametrize("contradiction_hub", [SLOW], indirect=True, ids=lambda speed: f"{speed:g}x")
@pytest.mark.parametrize("case", STOPS, ids=lambda case: case.name)
def test_stopping_contradicts_nothing(contradiction_hub, case, make_hub_page, images_dir, request):
    check_spawn(contradiction_hub, case, make_hub_page, images_dir, request.node.callspec.id)


def check_spawn(hub: DemoHub, case: Case, make_hub_page: Any, images_dir: Path, name: str) -> None:
    """Record ``case`` on ``hub``, save the recording, and fail on every rule it breaks."""
    hub_page = make_hub_page(hub=hub)
    # every picture in test-output/; the slow hub's into docs/images/ too when refreshing them
    shots = [SCREENSHOTS] + ([images_dir] if images_dir != SCREENSHOTS and hub.speed == SLOW else [])
    rec = record_spawn(hub_page, case, name, shots)
    broken = [(r.name, r.why, b.what, b.states) for r in RULES for b in r.check(rec)]
    save_recording(rec, name, broken)
    print(f"{name}: {rec.seconds:.1f} s to {rec.ended}, {len(rec.states)} states, {len(broken)} broken")
    assert not broken, explain(f"{rec.scenario} at {rec.speed:g}x", broken, rec.states)
    assert hub_page.dialogs == []
