"""How a row reads, on both pages: richprogress/web/views/rows.py (failure page, Jinja) and
static/breaks.js + static/rows.js + static/headline.js (live page) must agree, case by case."""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest

from richprogress.web.views.rows import breakable_parts, for_viewer, headline_parts, shown_pills
from tests.helpers.node import node_json
from tests.helpers.paths import STATIC

TEXTS = [
    "Downloading quay.io/jupyter/no-such-notebook:2026-11",
    "Assigned to ip-192-168-1-23.ec2.internal",
    "No machine has enough free memory.",
    "short a-b/c:d words",
    '<img src=x onerror=alert(1)> and "quay.io/a/b:c" quoted',
    "",
]

HEADLINES = [
    "The image quay.io/jupyter/no-such-notebook:2026-11 does not exist.",
    "Failed to pull docker.io/library/python:3.11.",
    "quay.io/jupyter/no-such-notebook:2026-11 is not allowed",
    "No machine has enough free memory.",
    "The image <img src=x onerror=alert(1)> does not exist.",
    "The image quay.io/x/<img src=x onerror=alert(1)>:1 does not exist",
]

OBJ = {"kind": "Pod", "name": "jupyter-alice", "container": "notebook", "field_path": None}
PILLS: list[tuple[dict[str, Any], str | None]] = [
    ({"type": "Warning", "object": OBJ}, "jupyter-alice"),
    ({"type": "Normal", "object": {**OBJ, "container": "block-cloud-metadata"}}, "jupyter-alice"),
    ({"type": "Custom", "object": None}, "jupyter-alice"),
    ({"type": "Audit", "object": {**OBJ, "kind": "PersistentVolumeClaim", "name": "claim-alice", "container": None}}, "jupyter-alice"),
    ({"type": "Normal", "object": {**OBJ, "kind": "Node", "name": "ip-10-0-0-1", "container": None}}, None),
    ({"type": "Warning", "object": OBJ}, None),
]


def test_long_names_break_only_after_slash_colon_and_dot() -> None:
    parts = breakable_parts("Downloading quay.io/jupyter/no-such-notebook:2026-11 now")
    assert parts == [
        ("Downloading ", False),
        ("quay.", True),
        ("io/", True),
        ("jupyter/", True),
        ("no-such-notebook:", True),
        ("2026-11", True),
        (" now", False),
    ]
    # nothing lost: the parts read as the text did
    for text in TEXTS:
        assert "".join(p for p, _ in breakable_parts(text)) == text


def test_headline_takes_the_image_out_only_when_the_sentence_keeps_its_subject() -> None:
    assert headline_parts(HEADLINES[0]) == (
        "The image does not exist.",
        "quay.io/jupyter/no-such-notebook:2026-11",
    )
    assert headline_parts(HEADLINES[2]) == (HEADLINES[2], "")
    assert headline_parts(HEADLINES[3]) == (HEADLINES[3], "")
    # a name no registry could hold (spaces, markup) is not cut in two: the sentence stays whole
    assert headline_parts(HEADLINES[5]) == (HEADLINES[5], "")


def test_own_pod_and_container_and_plain_types_are_not_repeated_on_rows() -> None:
    assert shown_pills(PILLS[0][0], "jupyter-alice") == {"type": "", "object": "", "container": ""}
    # another container of the user's pod (an init container) is worth naming
    assert shown_pills(PILLS[1][0], "jupyter-alice")["container"] == "block-cloud-metadata"
    # another object (the volume claim) and a custom type are worth naming
    assert shown_pills(PILLS[3][0], "jupyter-alice") == {
        "type": "Audit",
        "object": "PersistentVolumeClaim claim-alice",
        "container": "",
    }


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_js_agrees_with_python() -> None:
    breaks = json.dumps((STATIC / "breaks.js").as_uri())
    rows = json.dumps((STATIC / "rows.js").as_uri())
    headline = json.dumps((STATIC / "headline.js").as_uri())
    js = node_json(
        f"import {{ breakableParts, headlineParts }} from {breaks};"
        f"import {{ shownPills }} from {rows}; import {{ forViewer }} from {headline};"
        f"const texts = {json.dumps(TEXTS)}, heads = {json.dumps(HEADLINES)}, pills = {json.dumps(PILLS)};"
        "console.log(JSON.stringify({"
        "  breaks: texts.map(breakableParts),"
        "  heads: heads.map(headlineParts),"
        "  pills: pills.map(([r, own]) => shownPills(r, own)),"
        "  viewer: heads.map((h) => [forViewer('Your server: ' + h, false), forViewer('your server ' + h, true)]),"
        "}));"
    )
    assert js["breaks"] == [[list(p) for p in breakable_parts(t)] for t in TEXTS]
    assert js["heads"] == [list(headline_parts(h)) for h in HEADLINES]
    assert js["pills"] == [shown_pills(r, own) for r, own in PILLS]
    assert js["viewer"] == [
        [for_viewer("Your server: " + h, False), for_viewer("your server " + h, True)] for h in HEADLINES
    ]
