"""static/live-diagnosis.js: its ids exist, it builds no HTML, and it is announced once.

The live states and their words reach the module in the page's data (``data.vocabulary``,
richprogress/web/views/vocabulary.py; tests/web/test_vocabulary_js.py checks them): it keeps no copy.
"""

from __future__ import annotations

import re

import pytest

from tests.helpers.paths import REPO

JS = REPO / "static" / "live-diagnosis.js"
TEMPLATES = REPO / "templates"


def test_the_module_keeps_no_copy_of_the_live_states() -> None:
    source = JS.read_text()
    for name in ("LIVE_STATES", "KICKERS", "STEP_STATES"):
        assert f"const {name}" not in source, name


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
