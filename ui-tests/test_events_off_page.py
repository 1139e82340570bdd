"""With events off (``c.KubeSpawner.events_enabled = False``), the pending page's bar and
step still move, from the pod's status, and the page draws no event row. Real hub, proxy,
simulated cluster (at twice a real cluster's pace, so the page is open while the pod moves),
Chromium. The ``demo_hub`` fixture is overridden here, so ``hub_page`` logs in to this hub.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from richprogress.demo.hub import DemoHub
from tests.helpers.browser import START_TIMEOUT
from tests.helpers.demo_hub import serve

# Keeps, across the redirect to the server, the values the bar showed (in order) and the
# ids of the rows drawn.
_WATCH = """
(() => {
  const keep = (key, value) => sessionStorage.setItem(key, JSON.stringify(value));
  const read = (key, empty) => JSON.parse(sessionStorage.getItem(key) || empty);
  new MutationObserver(() => {
    const bar = document.getElementById("progress-bar");
    if (!bar) return;
    const values = read("rp-bar", "[]");
    const now = Number(bar.getAttribute("aria-valuenow")) || 0;
    if (values[values.length - 1] !== now) keep("rp-bar", [...values, now]);
    const ids = [...document.querySelectorAll("#progress-log .rp-event")].map((row) => row.dataset.recordId);
    keep("rp-ids", [...new Set([...read("rp-ids", "[]"), ...ids])]);
  }).observe(document, {childList: true, subtree: true, attributes: true});
})();
"""


@pytest.fixture(scope="module")
def demo_hub() -> Iterator[DemoHub]:
    yield from serve(DemoHub(speed=2.0, start_timeout=START_TIMEOUT, extra_config="c.KubeSpawner.events_enabled = False\n"))


def test_the_bar_moves_with_events_off_and_no_event_row_is_drawn(hub_page) -> None:
    page = hub_page.page
    page.context.add_init_script(_WATCH)
    hub_page.spawn("happy-path")
    page.wait_for_url(lambda url: "/spawn-pending/" not in url, timeout=60_000)
    values = page.evaluate("JSON.parse(sessionStorage.getItem('rp-bar') || '[]')")
    ids = page.evaluate("JSON.parse(sessionStorage.getItem('rp-ids') || '[]')")
    print(f"\nevents off: the bar showed {values}; rows {ids}")
    # the bar moved through the steps from the pod's status alone, before the hub's ready
    assert values == sorted(values)
    assert {35, 80} & set(values), values
    # the only rows: the hub's "Server requested" and "still waiting" lines, no event's
    assert ids and all(i.startswith(("message:", "patience-")) for i in ids), ids
