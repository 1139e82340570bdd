"""The pending page's typical times: static/typical-times.js and richprogress/typical_words.py
say the same, case by case (the JS only adds the clock to Python's sentences and moves the
bar by the same formula)."""

from __future__ import annotations

import json
import shutil

import pytest

from richprogress.model.records import PHASE_NAMES
from richprogress.typical.statistics import Span, Typical
from richprogress.typical.words import (
    is_longer_than_usual,
    page_view,
    progress_in_step,
    step_usually,
)
from richprogress.web.views.vocabulary import vocabulary
from tests.helpers.node import node_json
from tests.helpers.paths import STATIC

TYPICAL = Typical(
    samples=40,
    total=Span(p50=170.0, p90=290.0, samples=40),
    steps={
        "scaling": Span(p50=120.0, p90=240.0, samples=12),
        "image": Span(p50=20.0, p90=40.0, samples=40),
        "starting": Span(p50=4.0, p90=9.0, samples=40),
    },
    source="history",
)

# (step, seconds in the step, seconds since the start)
CASES = [
    (step, in_step, in_step + 30.0)
    for step in PHASE_NAMES
    for in_step in (0.0, 0.4, 5.0, 19.9, 20.0, 80.0, 119.0, 120.0, 241.0, 3599.0, 3725.0, 86400.0)
]


def test_the_page_gets_sentences_not_numbers_to_word() -> None:
    view = page_view(TYPICAL)
    assert view is not None
    assert view["usually"] == "Usually ready in about 3 min (9 in 10 within 5 min)"
    assert view["steps"]["scaling"]["text"] == "Adding a machine usually takes 2-4 min"
    assert set(view["steps"]) == {"scaling", "image", "starting"}
    # nothing known: nothing for the page (it reads as before)
    assert page_view(None) is None


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_js_agrees_with_python() -> None:
    view = page_view(TYPICAL)
    assert view is not None
    module = json.dumps((STATIC / "typical-times.js").as_uri())
    js = node_json(
        f"import {{ stepLine, progressInStep, isLongerThanUsual }} from {module};"
        f"const PHASES = {json.dumps(vocabulary()['phases'])};"
        f"const view = {json.dumps(view)}, cases = {json.dumps(CASES)};"
        "console.log(JSON.stringify(cases.map(([step, inStep, total]) => {"
        "  const s = view.steps[step] || null;"
        "  return [stepLine(s, inStep), progressInStep(PHASES, s, step, inStep),"
        "          isLongerThanUsual(s, inStep, view.total_late, total)];"
        "})));"
    )
    expected = [
        [
            step_usually(TYPICAL, step, in_step),
            progress_in_step(TYPICAL, step, in_step),
            is_longer_than_usual(TYPICAL, step=step, step_elapsed=in_step, total_elapsed=total),
        ]
        for step, in_step, total in CASES
    ]
    assert js == expected
    # the cases reach the interesting places: a line with its clock, a bar between steps,
    # and both answers to "longer than usual?"
    assert "Adding a machine usually takes 2-4 min; 1:20 so far" in [row[0] for row in js]
    assert {row[2] for row in js} == {True, False}
