"""A hook's own row, and a recorded spawn replayed, on the live pending page in Chromium.

One module hub: the demo with ``--replay``'s dump (tests/data's image-not-found events, as
``kubectl get events -o json`` writes them) as its default profile, and a
``pre_spawn_hook`` that calls ``richprogress.note``, as an admin's
``--config my_jupyterhub_config.py`` would. The page's rows are read as the user sees them.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import expect

from richprogress.demo.hub import DemoHub
from tests.helpers.demo_hub import serve
from tests.helpers.paths import DATA

DUMP = DATA / "image-not-found.events.json"

HOOK = textwrap.dedent(
    """
    import asyncio
    import richprogress

    async def _hook(spawner):
        richprogress.note(spawner, "Copying your course files <b>now</b>")
        # the work the note is about; the page shows the row while it runs
        await asyncio.sleep(1.5)

    c.KubeSpawner.pre_spawn_hook = _hook
    """
)


@pytest.fixture(scope="module")
def replay_hub() -> Iterator[DemoHub]:
    yield from serve(DemoHub(speed=4.0, start_timeout=30.0, replay=DUMP, extra_config=HOOK))


def test_a_note_and_the_replayed_events_show_as_rows(make_hub_page: Callable[..., object], replay_hub: DemoHub):
    hub_page = make_hub_page(hub=replay_hub)
    page = hub_page.page  # type: ignore[attr-defined]
    hub_page.record_rows()  # type: ignore[attr-defined]
    page.goto(f"{replay_hub.url}hub/spawn")
    # the replay is the form's first profile, chosen by default
    expect(page.locator("#profile-item-replay")).to_be_checked()
    expect(page.locator("label[for=profile-item-replay]")).to_contain_text("Replay: image-not-found.events.json")
    page.locator("#spawn_form [type=submit]").click()
    page.wait_for_url("**/hub/spawn-pending/**")
    rows = hub_page.rows()  # type: ignore[attr-defined]
    # the note, as text (never HTML), live while the hook still runs
    note = rows.filter(has_text="Copying your course files")
    expect(note).to_have_count(1)
    expect(note).to_contain_text("Copying your course files <b>now</b>")
    assert page.locator("#progress-log b").count() == 0
    # then the recorded events, re-pointed at this user's pod, worded by the hub's rules
    expect(rows.filter(has_text="jupyter/does-not-exist:latest").first).to_be_visible()
    seen = [row["message"] for row in hub_page.seen_rows()]  # type: ignore[attr-defined]
    # after the hub's own "Server requested", before the cluster's events, as it happened
    assert seen[1].startswith("Copying your course files <b>now</b>"), seen
    assert any("jupyter/does-not-exist:latest" in message for message in seen), seen
    assert hub_page.dialogs == []  # type: ignore[attr-defined]
