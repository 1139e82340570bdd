"""Long names in live rows break only after "/", ":" or "." (never at a hyphen), on a
phone-sized page: checked where the lines really start, character by character.

breaks.js builds a name's pieces with as few elements as it can (for render speed); this is what
that must keep. The page is the render benchmark's, fed by its stand-in stream.
"""

from __future__ import annotations

import json

from playwright.sync_api import expect

from benchmarks import render_rows

NAMES = [
    "registry.example-cloud.io/team-data-science/gpu-notebook-with-cuda-12:2026-11-30-ubuntu-22-04",
    "quay.io/jupyter/scipy-notebook:2026-11-0000",
    "gke-cluster-one-user-pool-n2-highmem-8-7f3c9b2a-x1z9",
    "123456789012.dkr.ecr.eu-west-1.amazonaws.com/a_b/c@sha256:0123456789abcdef0123",
]

#: for each row's sentence: its text, and the index of every character that starts a line
LINE_STARTS = """() => [...document.querySelectorAll("#progress-log .rp-message")].map((message) => {
  const starts = [];
  let offset = 0;
  let lastTop = null;
  const walker = document.createTreeWalker(message, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.data.length; i++, offset++) {
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const rect = range.getClientRects()[0];
      if (!rect || !node.data[i].trim()) continue;  // a space at a line's end has no box
      if (lastTop !== null && rect.top > lastTop + 2) starts.push(offset);
      lastTop = rect.top;
    }
  }
  return [message.textContent, starts];
})"""


def test_long_names_wrap_only_after_separators_on_a_narrow_page(browser) -> None:
    context, page = render_rows.open_page(browser, render_rows.static_files(None))
    try:
        page.set_viewport_size({"width": 360, "height": 800})
        events = []
        for i, name in enumerate(NAMES):
            event = json.loads(render_rows.make_events(len(NAMES))[i])
            event["record"]["message"] = f"Back-off pulling image {name} (attempt {i + 1})"
            events.append(json.dumps(event))
        render_rows.send(page, events)
        expect(page.locator("#progress-log .rp-message")).to_have_count(len(NAMES))
        wrapped = 0
        for (text, starts), name in zip(page.evaluate(LINE_STARTS), NAMES, strict=True):
            assert text == f"Back-off pulling image {name} (attempt {NAMES.index(name) + 1})"
            first = text.index(name)
            inside = [s for s in starts if first < s < first + len(name)]
            wrapped += len(inside)
            for start in inside:
                # the line starts right after a separator, never inside a piece
                assert text[start - 1] in "/:.", (name, text[start - 8 : start], text[start:])
        # the page is narrow enough that the names had to wrap somewhere
        assert wrapped >= len(NAMES)
    finally:
        context.close()
