"""static/richprogress.js agrees with richprogress/records.py and builds no HTML from strings.

The browser module keeps its own copy of the severities and phases (it ships without a
build step); these tests fail when the two drift apart. Where node is installed, the
module's clock formatting is also run and compared with the Python one.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from node_module import node_json

from richprogress.model.records import PHASES, SEVERITIES
from richprogress.model.times import format_clock, parse_timestamp
from richprogress.web.views.rows import row_moment

REPO = Path(__file__).resolve().parents[1]
JS = REPO / "static" / "richprogress.js"
TEMPLATES = REPO / "templates"


def js_constant(name: str) -> object:
    """The JSON value of ``export const NAME = [...];`` in the module."""
    source = JS.read_text()
    match = re.search(rf"export const {name} = (\[.*?\]);\n", source, re.DOTALL)
    assert match, f"{name} not found in {JS.name}"
    literal = re.sub(r",(\s*[\]}])", r"\1", match.group(1))  # JS allows trailing commas
    return json.loads(literal)


def test_severities_match_python() -> None:
    assert js_constant("SEVERITIES") == list(SEVERITIES)


def test_phases_match_python() -> None:
    assert js_constant("PHASES") == [list(phase) for phase in PHASES]


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
@pytest.mark.parametrize("module", sorted(p.name for p in (REPO / "static").glob("*.js")))
def test_module_builds_no_html_from_strings(pattern: str, module: str) -> None:
    # every module the page imports, not only the entry point (rows, details, breaks, ...)
    source = (REPO / "static" / module).read_text()
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("//"))
    assert not re.search(pattern, code)


def test_templates_never_mark_text_safe() -> None:
    for template in TEMPLATES.rglob("*.html"):
        assert not re.search(r"\|\s*safe\b", template.read_text()), template


def test_documented_ids_exist_in_templates_or_module() -> None:
    source = JS.read_text()
    header = source.split("// -- the vocabulary")[0]
    ids = set(re.findall(r"#([a-z][\w-]+)", header))
    assert {"progress-bar", "progress-log", "rp-elapsed", "rp-step", "rp-summary"} <= ids
    markup = "\n".join(t.read_text() for t in TEMPLATES.rglob("*.html"))
    for ident in sorted(ids):
        assert f'id="{ident}"' in markup or f'"{ident}"' in source, ident


CLOCKS = [0, 0.4, 7, 59.9, 60, 151, 3599, 3600, 3723]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_js_clock_matches_python_clock() -> None:
    script = (
        f"import {{ formatClock }} from {json.dumps(JS.as_uri())};"
        f"console.log(JSON.stringify({json.dumps(CLOCKS)}.map(formatClock)));"
    )
    assert node_json(script) == [format_clock(s) for s in CLOCKS]


STARTED = "2026-11-29T21:33:20.349Z"
MOMENTS = [
    # (count, first_timestamp, timestamp, since_spawn)
    (1, "2026-11-29T21:33:21.604Z", "2026-11-29T21:33:21.604Z", 1.255),
    (5, "2026-11-29T21:33:20Z", "2026-11-29T21:33:29Z", 9.19),  # first stamp before start
    (3, "2026-11-29T21:33:25Z", "2026-11-29T21:33:40Z", 20.0),
    (2, None, "2026-11-29T21:33:40Z", 20.0),
    (1, None, None, None),
]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_js_row_moment_matches_python() -> None:
    records = [
        {"count": c, "first_timestamp": f, "timestamp": t, "since_spawn": s} for c, f, t, s in MOMENTS
    ]
    script = (
        f"import {{ rowMoment }} from {json.dumps(JS.as_uri())};"
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


def test_the_resolved_pill_reads_the_same_live_and_after_a_reload() -> None:
    match = re.search(r'export const OVERCOME_PILL = "([^"]+)";', JS.read_text())
    assert match, "OVERCOME_PILL not found"
    rows = (TEMPLATES / "richprogress" / "rows.html").read_text()
    assert f'<span class="rp-pill rp-pill-overcome">{match.group(1)}</span>' in rows
