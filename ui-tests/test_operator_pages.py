"""Operator-based spawns in the browser: the custom resource's events on the page.

The demo hub follows the ``JupyterServer`` custom resource (``followed_objects`` in
``richprogress/demo/jupyterhub_config.py``); the simulated cluster's controller reports on
it before the pod's own events (``operator``) or fails (``operator-error``).
"""

from __future__ import annotations

import re

from playwright.sync_api import expect

#: the operator-error scenario's quota refusal (8Gi asked, 28Gi of 32Gi used), in words
QUOTA_SENTENCE = (
    "The namespace's memory quota (user-quota) is full: 28 GiB of 32 GiB used, and your server asks for 8 GiB"
)

# Keeps what each row's pills said in sessionStorage (same origin, so it outlives the
# redirect to the server): a quick spawn replaces the pending page within a fraction of a
# second, before a test could read the rows.
def test_operator_rows_show_the_custom_object_before_the_pod(make_hub_page, unhurried_hub) -> None:
    # the operator scenario takes 0.2 s at the usual demo speed: often ready before the
    # page's stream opened, and then the page shows no rows to read
    hub_page = make_hub_page(hub=unhurried_hub)
    page = hub_page.page
    hub_page.record_rows()
    hub_page.spawn("operator")
    page.wait_for_url(re.compile(rf"/user/{re.escape(hub_page.user_path)}/"))
    rows = hub_page.seen_rows()
    rows = [row for row in rows if row["message"] != "Server requested"]
    pod = f"jupyter-{hub_page.username}"
    # the controller's four rows and the pod's own (the user's own pod is named once, in the
    # facts, not in a pill on each of its rows), each kind in its own order
    controller = [i for i, row in enumerate(rows) if row["object"] == f"JupyterServer {pod}"]
    own = [i for i, row in enumerate(rows) if row["object"] == ""]
    assert len(controller) == 4 and own and len(controller) + len(own) == len(rows), rows
    assert rows[controller[0]]["message"].startswith(f"The controller is working on JupyterServer {pod}"), rows
    assert rows[controller[1]]["message"].startswith(f"The controller of JupyterServer {pod} created Pod {pod}"), rows
    # the controller spoke first: the pod it created has no event before that row. Where
    # the controller's later rows fall among the pod's is the order in which two watches
    # (one per kind) delivered them, which the machine decides, not the cluster.
    assert controller[:2] == [0, 1], rows
    assert hub_page.dialogs == []


def test_operator_error_is_named_live_and_after_reload(hub_page, images_dir) -> None:
    page = hub_page.page
    hub_page.spawn("operator-error")
    pod = f"jupyter-{hub_page.username}"
    # while pending: the controller's rows, with the custom object in the object pill
    error_row = hub_page.rows().filter(has_text="memory quota (user-quota) is full").first
    expect(error_row).to_be_visible()
    expect(error_row.locator(".rp-pill-object")).to_have_text(f"JupyterServer {pod}")
    expect(error_row).to_contain_text(QUOTA_SENTENCE)
    page.screenshot(path=str(images_dir / "operator-error-pending.png"))

    # the spawn times out; the diagnosis names the controller's error, live and after a reload
    expect(page.locator("#rp-failure")).to_be_visible()
    expect(page.locator("#rp-failure-summary")).to_contain_text("memory quota (user-quota) is full")
    page.reload()
    expect(page.locator("#richprogress-failed")).to_be_visible()
    expect(page.locator("#rp-summary")).to_contain_text(QUOTA_SENTENCE)
    decisive = page.locator("#rp-timeline .rp-decisive")
    expect(decisive).to_have_count(1)
    expect(decisive.locator(".rp-pill-object")).to_have_text(f"JupyterServer {pod}")
    page.screenshot(path=str(images_dir / "operator-error-after-reload.png"))
    assert hub_page.dialogs == []
