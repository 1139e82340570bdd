"""The container's last log lines in a real JupyterHub: who sees them, where, and that a
token in them never gets out.

The hub's spawner is ``LastWordsSpawner`` (``tests.helpers.last_words``): RichProgressMixin
over a spawner whose start fails, with ``_rp_last_words`` giving the kept log from a text
that holds a hub token, through the same ``story.container_log`` (cut and redacted) that
``RichKubeSpawner`` uses on what the Kubernetes API answers
(``tests/kube/test_container_log.py`` reads it from the simulated cluster). The mixin's own failure path stores the spawn.

Its ``show_container_log`` comes from the server's name, as a profile's
``kubespawner_override`` can set it: the default server keeps the default (``owner``),
``adm`` is ``admins``, ``hide`` is ``nobody``. Users (``tests.helpers.hub``): ``alice`` owns
the servers, ``admin`` is an admin, ``reader`` holds ``read:servers`` on alice's servers
without being an admin, ``bob`` is anyone else.
"""

from __future__ import annotations

import json
import os
import sqlite3
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.helpers.config import refused_when_loaded
from tests.helpers.endpoints import timeline_path
from tests.helpers.hub import Hub, hub_process
from tests.helpers.last_words import EXTRA_CONFIG, LAST_LINE, SECRET, SPAWNER_CODE, TOKEN, USERS
from tests.helpers.refused_hub import refused_at_start


@pytest.fixture(scope="module")
def failed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    """The hub, once alice's default, ``adm`` and ``hide`` servers have failed."""
    work = tmp_path_factory.mktemp("lastwords")
    tokens = {user: f"token-{i}-{os.urandom(8).hex()}" for i, user in enumerate(USERS)}
    with hub_process(
        work, SPAWNER_CODE, spawner_class="LastWordsSpawner", users=USERS, tokens=tokens, extra_config=EXTRA_CONFIG
    ) as hub:
        for server in ("", "adm", "hide"):
            hub.start_server("alice", server)
        for server in ("", "adm", "hide"):
            hub.wait_api(
                timeline_path("alice", server),
                lambda data: data["outcome"] == "failed",
                f"alice/{server} did not fail",
                every=0.1,
                settle=0.3,
            )
        yield hub


# -- who sees it ---------------------------------------------------------------------------

SEES = [
    # viewer, server, sees the lines (None: no access at all)
    pytest.param("alice", "", True, id="owner-default"),
    pytest.param("admin", "", True, id="admin-default"),
    pytest.param("reader", "", False, id="read-scope-not-admin-default"),
    pytest.param("bob", "", None, id="another-user"),
    pytest.param("alice", "adm", False, id="owner-when-admins-only"),
    pytest.param("admin", "adm", True, id="admin-when-admins-only"),
    pytest.param("reader", "adm", False, id="read-scope-when-admins-only"),
    pytest.param("alice", "hide", False, id="owner-when-nobody"),
    pytest.param("admin", "hide", False, id="admin-when-nobody"),
]


@pytest.mark.parametrize(("viewer", "server", "sees"), SEES)
def test_the_json_and_text_follow_the_setting(failed: Hub, viewer: str, server: str, sees: bool | None) -> None:
    r = failed.api(timeline_path("alice", server), viewer)
    text = failed.api(timeline_path("alice", server, "timeline.txt"), viewer)
    if sees is None:
        assert r.status_code == 404 and text.status_code == 404
        return
    assert r.status_code == 200 and text.status_code == 200
    shown = r.json()["container_log"]
    if sees:
        assert shown["container"] == "notebook" and shown["previous"] is True
        assert shown["lines"][-1] == LAST_LINE
        assert "JUPYTERHUB_API_TOKEN=[redacted]" in shown["lines"][0]
        assert "Last lines of the server's log (container notebook" in text.text and LAST_LINE in text.text
    else:
        assert shown is None
        assert "Last lines of the server's log" not in text.text and "PermissionError" not in text.text
    for answer in (r.text, text.text):
        assert TOKEN not in answer and SECRET not in answer


@pytest.mark.parametrize(("viewer", "server", "sees"), SEES)
def test_the_failure_page_shows_the_block_to_whom_the_setting_says(
    failed: Hub, viewer: str, server: str, sees: bool | None
) -> None:
    # JupyterHub's own failure page wants more than read:servers: a reader opens ours
    page_of = "richprogress/failed/alice" if viewer == "reader" else "spawn-pending/alice"
    page = failed.page(page_of + (f"/{server}" if server else ""), viewer)
    if sees is None:
        assert page.status_code in (403, 404)
        return
    # JupyterHub answers a failed spawn's page with 500 (and our page in it)
    assert page.status_code in (200, 500) and 'id="rp-summary"' in page.text
    has_block = 'id="rp-log-details"' in page.text
    assert has_block is sees
    if sees:
        block = page.text.split('id="rp-log-details"', 1)[1].split("</details>", 1)[0]
        assert "<details" not in block and "open" not in block.split(">", 1)[0]  # closed at first
        assert "Last lines of the server&#39;s log" in block
        # text only: the log's markup is escaped, never a tag
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in block and "<script>alert" not in block
        assert "Permission denied: &#39;/home/jovyan/work&#39;" in block
        # "Copy details" copies it too
        report = page.text.split('id="rp-report">', 1)[1].split("</pre>", 1)[0]
        assert "Last lines of the server&#39;s log" in report
    else:
        assert "PermissionError" not in page.text
    assert TOKEN not in page.text and SECRET not in page.text


def test_the_stored_failure_page_and_spawn_follow_it_too(failed: Hub) -> None:
    stored = failed.page("richprogress/failed/alice", "alice")
    assert stored.status_code == 200 and 'id="rp-log-details"' in stored.text
    assert 'id="rp-log-details"' not in failed.page("richprogress/failed/alice", "reader").text
    spawns = failed.api("richprogress/users/alice/spawns", "admin").json()["spawns"]
    newest = spawns[0]["id"] if spawns[0]["server_name"] == "" else next(s["id"] for s in spawns if s["server_name"] == "")
    one = failed.api(f"richprogress/users/alice/spawns/{newest}", "alice").json()
    assert one["container_log"]["lines"][-1] == LAST_LINE
    assert failed.api(f"richprogress/users/alice/spawns/{newest}", "reader").json()["container_log"] is None


# -- what never gets out ----------------------------------------------------------------------


def test_the_store_keeps_the_lines_redacted(failed: Hub) -> None:
    db = sqlite3.connect(failed.work / "richprogress_history.sqlite")
    try:
        rows = db.execute("SELECT server_name, payload FROM richprogress_spawns WHERE user_name = 'alice'").fetchall()
    finally:
        db.close()
    payloads = {server: json.loads(zlib.decompress(blob)) for server, blob in rows}
    assert set(payloads) == {"", "adm", "hide"}
    for payload in payloads.values():
        kept = payload["container_log"]
        assert kept["lines"][-1] == LAST_LINE and "DB_PASSWORD=[redacted]" in kept["lines"][1]
    for _server, blob in rows:
        assert TOKEN.encode() not in zlib.decompress(blob) and SECRET.encode() not in zlib.decompress(blob)


def test_the_metrics_never_carry_it(failed: Hub) -> None:
    r = requests.get(failed.url + "hub/metrics", headers={"Authorization": f"token {failed.tokens['admin']}"}, timeout=10)
    assert r.status_code == 200 and "richprogress_" in r.text
    assert TOKEN not in r.text and SECRET not in r.text and "PermissionError" not in r.text


def test_the_hub_log_never_carries_the_secrets(failed: Hub) -> None:
    log = failed.log.read_text()
    assert TOKEN not in log and SECRET not in log


# -- a bad setting stops the hub ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "setting", "value", "allowed"),
    [
        pytest.param('c.RichKubeSpawner.show_container_log = "everyone"\n', "c.RichKubeSpawner.show_container_log",
                     "'everyone'", "'owner' (owner and admins), 'admins' or 'nobody'", id="show-unknown"),
        pytest.param("c.RichKubeSpawner.container_log_timeout = -1\n", "c.RichKubeSpawner.container_log_timeout",
                     "= -1", "seconds, 0 (do not read) to 30", id="timeout-negative"),
    ],
)  # fmt: skip
def test_a_bad_log_setting_is_refused_when_the_config_loads(
    tmp_path: Path, lines: str, setting: str, value: str, allowed: str
) -> None:
    refused_when_loaded(tmp_path, lines, setting, value, allowed)


def test_a_real_hub_with_a_bad_show_container_log_does_not_start(tmp_path: Path) -> None:
    refused_at_start(
        tmp_path,
        'c.RichKubeSpawner.show_container_log = "everyone"\n',
        "richprogress: c.RichKubeSpawner.show_container_log = 'everyone': 'owner' (owner and admins), 'admins' or 'nobody'",
    )
