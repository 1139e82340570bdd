"""Who reads a stored spawn, and names no database keeps, on a real JupyterHub whose spawn
history is a SQLite file or a real PostgreSQL.

- A user deleted and made again under the same name is another account: it sees none of
  the old account's failures (the failure page, the home page's notice, the timeline and
  the spawns endpoints); an admin still does, and the failure page tells them whose it is.
  On JupyterHub's SQLite database (these hubs') the new account even gets the old one's
  ``orm.User.id``.
- A NUL (``%00``) in a name on any route is a 400 before any query: PostgreSQL would
  refuse it (an ERROR in the hub's log, a store error counted for an alert).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import requests

from richprogress.web.views.history import OTHER_ACCOUNT_NOTE
from tests.helpers.history_hub import history_hub_process, spawns_path, start, wait_stored
from tests.helpers.hub import Hub
from tests.helpers.postgres import postgres_server

#: the failed start's sentence on the failure page (the test spawner's image is missing)
FAILED = 'id="rp-summary"'


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def hub(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    work = tmp_path_factory.mktemp(f"owner-{request.param}")
    if request.param == "sqlite":
        with history_hub_process(work) as running:
            yield running
        return
    with postgres_server() as url, history_hub_process(work, history_url=url) as running:
        yield running


def as_admin(hub: Hub, method: str, path: str) -> requests.Response:
    return requests.request(
        method,
        hub.url + "hub/api/" + path,
        headers={"Authorization": f"token {hub.tokens['admin']}"},
        timeout=10,
    )


def new_account(hub: Hub, name: str) -> str:
    """Make the user ``name`` (as the admin, through JupyterHub's API); a token of it."""
    assert as_admin(hub, "POST", f"users/{name}").status_code == 201
    made = as_admin(hub, "POST", f"users/{name}/tokens")
    assert made.status_code == 201, made.text
    return str(made.json()["token"])


def get(hub: Hub, path: str, token: str) -> requests.Response:
    """``hub/{path}`` with a token (the API), or a page as a logged-in browser with
    ``user:`` and the name (pages take cookies, not tokens)."""
    if token.startswith("user:"):
        return hub.page(path, token.removeprefix("user:"))
    return requests.get(
        hub.url + "hub/" + path, headers={"Authorization": f"token {token}"}, timeout=10
    )


def store_errors(hub: Hub) -> str:
    """The store-error lines of the hub's /hub/metrics."""
    text = get(hub, "metrics", hub.tokens["admin"]).text
    return "\n".join(
        line for line in text.splitlines() if line.startswith("richprogress_store_errors_total")
    )


def test_a_user_made_again_under_a_deleted_users_name_sees_none_of_its_failures(hub: Hub) -> None:
    first = new_account(hub, "dora")
    hub.tokens["dora"] = first
    start(hub, "dora")
    [stored] = wait_stored(hub, "dora")
    assert FAILED in get(hub, "richprogress/failed/dora", "user:dora").text  # the owner sees it

    assert as_admin(hub, "DELETE", "users/dora").status_code == 204
    again = new_account(hub, "dora")
    hub.tokens["dora"] = again
    spawns = get(hub, "api/" + spawns_path("dora"), again)
    assert spawns.status_code == 200 and spawns.json()["spawns"] == []
    assert (
        get(hub, "api/" + spawns_path("dora", suffix=f"/{stored['id']}"), again).status_code == 404
    )
    assert get(hub, "api/richprogress/users/dora/timeline", again).status_code == 404
    page = get(hub, "richprogress/failed/dora", "user:dora")
    assert (
        page.status_code == 200 and FAILED not in page.text and OTHER_ACCOUNT_NOTE not in page.text
    )
    assert "rp-notice" not in get(hub, "home", "user:dora").text

    # an admin still sees the old account's failure, and is told whose it is
    assert [s["id"] for s in hub.api(spawns_path("dora"), "admin").json()["spawns"]] == [
        stored["id"]
    ]
    page = hub.page("richprogress/failed/dora", "admin").text
    assert FAILED in page and OTHER_ACCOUNT_NOTE in page
    # the new account's own failure is its own
    start(hub, "dora")
    wait_stored(hub, "dora", count=2)
    assert len(get(hub, "api/" + spawns_path("dora"), again).json()["spawns"]) == 1
    page = get(hub, "richprogress/failed/dora", "user:dora").text
    assert FAILED in page and OTHER_ACCOUNT_NOTE not in page
    assert "rp-notice" in get(hub, "home", "user:dora").text


#: (path below hub/, as whom) with a NUL in a name, on every route that takes one
NUL_PATHS = [
    "richprogress/failed/alice/x%00",
    "richprogress/failed/x%00",
    "richprogress/failed/x%00/gpu",
    "api/richprogress/users/alice/servers/x%00/timeline",
    "api/richprogress/users/alice/servers/x%00/timeline.txt",
    "api/richprogress/users/x%00/timeline",
    "api/richprogress/users/x%00/timeline.txt?format=json",
    "api/richprogress/users/alice/servers/x%00/spawns",
    "api/richprogress/users/x%00/spawns/1",
    "api/richprogress/users/alice/servers/x%00/spawns/1",
]


def test_a_nul_in_any_name_is_400_before_any_query(hub: Hub) -> None:
    start(hub, "alice")
    wait_stored(hub, "alice")
    errors_before = store_errors(hub)
    log_before = hub.log.stat().st_size
    for path in NUL_PATHS:
        for who in ("alice", "admin"):
            r = get(
                hub, path, "user:" + who if path.startswith("richprogress/") else hub.tokens[who]
            )
            assert r.status_code == 400, (path, who, r.status_code, r.text[:500])
            assert "name holds a control character (U+0000)" in r.text, (path, r.text[:500])
    assert store_errors(hub) == errors_before
    with open(hub.log, encoding="utf-8", errors="replace") as log:
        log.seek(log_before)
        said = log.read()
    assert not re.search(r"\[E |ERROR|Traceback", said), said[-3000:]
    # the history still answers
    assert hub.api(spawns_path("alice"), "alice").status_code == 200
