"""The pages' vocabulary comes from Python, and static/ builds no HTML from strings.

The browser modules ship without a build step. The severities, the spawn's steps, the live
states and the words the page says about them reach the page in its JSON data
(``richprogress/web/views/vocabulary.py``, ``data.vocabulary``) instead of being copied into
the JavaScript; these tests check that the vocabulary covers every name, that static/
keeps no copy of it, and (where node is installed) that the modules' clock and row
placement read as the Python ones do.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from richprogress.model.records import PHASES, SEVERITIES
from richprogress.model.times import format_clock, format_duration, parse_timestamp
from richprogress.story.verdict import STATES
from richprogress.web.views.rows import row_moment
from richprogress.web.views.vocabulary import vocabulary
from tests.helpers.node import node_json
from tests.helpers.paths import REPO, STATIC

MODULES = sorted(STATIC.rglob("*.js"))
TEMPLATES = REPO / "templates"


def test_the_vocabulary_is_pythons() -> None:
    words = vocabulary()
    assert words["severities"] == list(SEVERITIES)
    assert [list(phase) for phase in json.loads(json.dumps(words["phases"]))] == [list(p) for p in PHASES]
    assert list(words["verdicts"]) == list(STATES)


def test_every_step_and_verdict_state_has_its_words() -> None:
    words = vocabulary()
    assert list(words["stepStates"]) == [name for name, _, _ in PHASES]
    assert all(text.strip() for text in words["stepStates"].values())
    for state, row in words["verdicts"].items():
        # a banner needs its first line
        assert not row["show"]["banner"] or row["words"]["kicker"], state


def test_static_keeps_no_copy_of_the_vocabulary() -> None:
    words = vocabulary()
    sentences = [label for _, label, _ in PHASES] + list(words["stepStates"].values()) + [
        text for row in words["verdicts"].values() for text in row["words"].values() if text
    ]
    for module in MODULES:
        # comments may quote the words; code must read them from data.vocabulary
        code = re.sub(r"/\*.*?\*/", "", module.read_text(), flags=re.DOTALL)
        source = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith("//"))
        for sentence in sentences:
            assert f'"{sentence}"' not in source, (module.name, sentence)


@pytest.mark.parametrize(
    "pattern",
    [
        pytest.param(r"\.innerHTML\b", id="innerHTML"),
        pytest.param(r"\.outerHTML\b", id="outerHTML"),
        pytest.param(r"insertAdjacentHTML", id="insertAdjacentHTML"),
        pytest.param(r"document\.write", id="document.write"),
        pytest.param(r"\beval\(", id="eval"),
        pytest.param(r"createContextualFragment", id="createContextualFragment"),
        pytest.param(r"\.html\(", id="jquery-html"),
    ],
)
@pytest.mark.parametrize("module", [p.relative_to(STATIC).as_posix() for p in MODULES])
def test_module_builds_no_html_from_strings(pattern: str, module: str) -> None:
    # every module the pages import, not only the entry points (rows, details, breaks, ...)
    source = (STATIC / module).read_text()
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("//"))
    assert not re.search(pattern, code)


def test_templates_never_mark_text_safe() -> None:
    for template in TEMPLATES.rglob("*.html"):
        assert not re.search(r"\|\s*safe\b", template.read_text()), template


def header(source: str) -> str:
    """A module's leading comment block: where it documents the ids it uses."""
    lines = []
    for line in source.splitlines():
        if not line.startswith("//"):
            break
        lines.append(line)
    return "\n".join(lines)


def test_documented_ids_exist_in_templates_or_module() -> None:
    sources = "\n".join(module.read_text() for module in MODULES)
    ids = set()
    for module in MODULES:
        ids |= set(re.findall(r"#([a-z][\w-]+)", header(module.read_text())))
    assert {"progress-bar", "progress-log", "rp-elapsed", "rp-step", "rp-summary"} <= ids
    markup = "\n".join(t.read_text() for t in TEMPLATES.rglob("*.html"))
    for ident in sorted(ids):
        assert f'id="{ident}"' in markup or f'"{ident}"' in sources, ident


CLOCKS = [0, 0.4, 1.6, 7, 59.9, 60, 119.5, 151, 3599, 3599.9, 3600, 3723, -2]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_js_clock_and_durations_match_python() -> None:
    script = (
        f"import {{ formatClock, formatDuration }} from {json.dumps((STATIC / 'clock.js').as_uri())};"
        f"const s = {json.dumps(CLOCKS)};"
        "console.log(JSON.stringify([s.map(formatClock), s.map(formatDuration)]));"
    )
    assert node_json(script) == [[format_clock(s) for s in CLOCKS], [format_duration(s) for s in CLOCKS]]


def test_durations_are_cut_to_the_second_like_the_clock() -> None:
    # "Gave up after 2 s" beside "Stopped early, at +0:01" was 1.6 s rounded one way and cut
    # the other: every figure is a stopwatch's, rounded down
    assert (format_clock(1.6), format_duration(1.6)) == ("+0:01", "1 s")
    assert (format_clock(119.5), format_duration(119.5)) == ("+1:59", "1 min 59 s")
    assert format_duration(3599.9) == "59 min 59 s"


STARTED = "2026-11-29T21:33:20.349Z"
MOMENTS = [
    # (count, first_timestamp, timestamp, since_spawn)
    (1, "2026-11-29T21:33:21.604Z", "2026-11-29T21:33:21.604Z", 1.255),
    (5, "2026-11-29T21:33:20Z", "2026-11-29T21:33:29Z", 9.19),  # first stamp before start
    (3, "2026-11-29T21:33:25Z", "2026-11-29T21:33:40Z", 20.0),
    (2, None, "2026-11-29T21:33:40Z", 20.0),
    (1, None, None, None),
    # seen once, a whole-second stamp: up to a second before the hub's reading
    (1, "2026-11-29T21:33:22Z", "2026-11-29T21:33:22Z", 2.4),
    # a cluster clock ahead of the hub's: the hub's reading, never later than the page's clock
    (1, "2026-11-29T21:33:25.900Z", "2026-11-29T21:33:25.900Z", 4.2),
    (1, "not a time", None, 3.0),
]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_js_row_moment_matches_python() -> None:
    records = [
        {"count": c, "first_timestamp": f, "timestamp": t, "since_spawn": s} for c, f, t, s in MOMENTS
    ]
    script = (
        f"import {{ rowMoment }} from {json.dumps((STATIC / 'rows.js').as_uri())};"
        f"console.log(JSON.stringify({json.dumps(records)}.map(r => rowMoment(r, {json.dumps(STARTED)}))));"
    )
    out = subprocess.run(
        ["node", "--input-type=module", "-e", script],
        check=True,
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout
    started = parse_timestamp(STARTED)
    expected = [list(row_moment(r, started)) for r in records]
    got = json.loads(out)
    assert [g[1] for g in got] == [e[1] for e in expected]
    assert [None if g[0] is None else round(g[0], 3) for g in got] == [
        None if e[0] is None else round(e[0], 3) for e in expected
    ]
    # a repeat shows its first occurrence, never before the start
    assert got[1] == [0, "2026-11-29T21:33:20Z"]
    assert round(got[2][0], 3) == 4.651
    # the smaller of the hub's reading and the first stamp less the start
    assert [round(g[0], 3) for g in got[5:]] == [1.651, 4.2, 3.0]


def test_the_resolved_pill_reads_the_same_live_and_after_a_reload() -> None:
    # the one word still written twice: the failure page's template renders it itself
    rows = (TEMPLATES / "richprogress" / "rows.html").read_text()
    assert f'<span class="rp-pill rp-pill-overcome">{vocabulary()["overcomePill"]}</span>' in rows
