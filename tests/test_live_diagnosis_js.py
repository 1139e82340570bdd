"""static/live-diagnosis.js agrees with richprogress/hopeless.py and builds no HTML.

The module ships without a build step, so it keeps its own copy of the live states.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from richprogress.story.fail_fast import LIVE_STATES

REPO = Path(__file__).resolve().parents[1]
JS = REPO / "static" / "live-diagnosis.js"
TEMPLATES = REPO / "templates"


def test_live_states_match_python() -> None:
    match = re.search(r"export const LIVE_STATES = (\[.*?\]);\n", JS.read_text(), re.DOTALL)
    assert match
    assert json.loads(match.group(1)) == list(LIVE_STATES)


def test_every_state_has_words() -> None:
    source = JS.read_text()
    for block in ("KICKERS", "STEP_STATES"):
        body = source.split(f"{block} = {{", 1)[1].split("};", 1)[0]
        assert re.findall(r"^\s*(\w+):", body, re.MULTILINE) == list(LIVE_STATES), block


@pytest.mark.parametrize("pattern", [r"\.innerHTML\b", r"\.outerHTML\b", r"insertAdjacentHTML",
                                     r"document\.write", r"\beval\(", r"createContextualFragment"])
def test_module_builds_no_html_from_strings(pattern: str) -> None:
    code = "\n".join(line for line in JS.read_text().splitlines() if not line.lstrip().startswith("//"))
    assert not re.search(pattern, code)


def test_documented_ids_exist() -> None:
    source = JS.read_text()
    header = source.split("/**", 1)[0]
    ids = set(re.findall(r"#([a-z][\w-]+)", header))
    assert {"rp-live", "rp-live-summary", "rp-live-stop", "progress-bar"} <= ids
    markup = "\n".join(t.read_text() for t in TEMPLATES.rglob("*.html"))
    for ident in sorted(ids):
        assert f'id="{ident}"' in markup or f'"{ident}"' in source, ident


def test_the_banner_is_announced_politely_and_once() -> None:
    template = (TEMPLATES / "spawn_pending.html").read_text()
    banner = re.search(r'<div id="rp-live"[^>]*>', template)
    assert banner and 'aria-live="polite"' in banner.group(0) and 'aria-atomic="true"' in banner.group(0)
