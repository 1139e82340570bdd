"""Reading the spawn history on a bad day: a stalled database, an odd request, names
longer than a column, a database an older release wrote, and hostile stored text.

- The store on SQLite and a real PostgreSQL (``test_history_store``'s fixtures): names
  of 255 and 300 characters stay apart; a database of schema 2 is migrated with its rows;
  a query a database refuses fails that one read, and the history stays up.
- A real hub on SQLite (``hub_history``): ids and names that are not fit for the
  database are 400 naming what is wrong, and everyone's lists work after them; the home
  page and the admin's failures page show stored hostile text escaped and cut.
- A real hub on a real PostgreSQL that is then SIGSTOPped (``test_a_stalled_postgresql_
  never_freezes_the_hub``): every page and API answer comes within 1 s, the pages say the
  history is unavailable, the list says 503, and all is back once PostgreSQL goes on.
"""

from __future__ import annotations

import asyncio
import html
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import quote

import pytest
import requests
import sqlalchemy as sa
from traitlets import TraitError

from richprogress.history import SpawnHistory
from richprogress.history.read_pool import Read, ReadPool
from richprogress.history.rows import Account, account_of, build_row
from richprogress.history.schema import SCHEMA_VERSION, spawns_table
from tests.helpers import history_store as stored
from tests.helpers.history_hub import history_hub_process, spawns_path, start, wait_stored
from tests.helpers.history_store import end_spawn
from tests.helpers.hub import Hub
from tests.helpers.old_schema import as_old_schema, copy_row_as
from tests.helpers.postgres import postgres_server

# the store's fixtures (a SQLite file, and a throwaway PostgreSQL), shared with its tests
postgres_url = stored.postgres_url
store_url = stored.store_url
clock = stored.clock
make_store = stored.make_store

SHORT, LONG = "x" * 255, "x" * 300


# -- the store -------------------------------------------------------------------------------


def test_a_name_cut_to_255_characters_is_not_another_users(make_store: Callable[..., SpawnHistory]) -> None:
    """Two users whose names agree in their first 255 characters: each lists, reads and
    counts only their own spawns (a server name alike)."""
    store = make_store()
    end_spawn(store, user=LONG, server=LONG + "-gpu")
    store.flush()
    mine = store.list_spawns(LONG, LONG + "-gpu")
    assert [s["user_name"] for s in mine] == [LONG]  # kept whole
    assert store.list_spawns(SHORT, LONG + "-gpu") == []
    assert store.list_spawns(LONG, (LONG + "-gpu")[:255]) == []
    assert store.last_spawn(SHORT, LONG + "-gpu") is None
    assert store.get_spawn(SHORT, LONG + "-gpu", mine[0]["id"]) is None
    assert store.last_by_server(SHORT) == {}
    assert list(store.last_by_server(LONG)) == [LONG + "-gpu"]
    end_spawn(store, user=SHORT, server=LONG + "-gpu", outcome="ready")
    store.flush()
    assert [s["outcome"] for s in store.list_spawns(SHORT, LONG + "-gpu")] == ["ready"]
    assert [s["outcome"] for s in store.list_spawns(LONG, LONG + "-gpu")] == ["failed"]
    # the page reads agree
    assert asyncio.run(store.read_last_by_server(SHORT, account=None)).value[LONG + "-gpu"]["outcome"] == "ready"


def test_a_database_of_schema_2_keeps_its_rows(
    make_store: Callable[..., SpawnHistory], store_url: str
) -> None:
    """An older release's database: its spawns are read after the upgrade, except a row
    whose name has exactly 255 characters (the old release may have cut it from a longer
    name), which is nobody's; new spawns are kept whole."""
    first = make_store()
    end_spawn(first, user="alice")
    end_spawn(first, user="bob", server="gpu", outcome="ready")
    first.flush()
    alice = first.last_spawn("alice")
    assert alice is not None
    first.close()
    as_old_schema(store_url, 2)
    cut = copy_row_as(store_url, alice["id"], SHORT)  # as the old release wrote LONG's spawn

    store = make_store()
    assert store.last_spawn("alice") == alice
    assert store.get_spawn("alice", "", alice["id"]) == alice
    assert [s["outcome"] for s in store.list_spawns("bob", "gpu")] == ["ready"]
    assert store.list_spawns(SHORT) == [] and store.list_spawns(LONG) == []
    assert store.get_spawn(SHORT, "", cut) is None
    # the admin's list across users still shows it
    assert {s["id"] for s in store.recent_failures()} == {alice["id"], cut}
    end_spawn(store, user=LONG)
    store.flush()
    assert [s["user_name"] for s in store.list_spawns(LONG)] == [LONG]
    assert store.list_spawns(SHORT) == []
    engine = sa.create_engine(store_url)
    with engine.connect() as conn:
        version = conn.execute(sa.text("SELECT value FROM richprogress_meta WHERE key = 'schema_version'")).scalar()
    engine.dispose()
    assert version == str(SCHEMA_VERSION)


def test_a_query_the_database_refuses_fails_that_read_only(
    make_store: Callable[..., SpawnHistory], store_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A number SQLite cannot hold, a NUL byte PostgreSQL refuses: that one read fails
    (logged), and the history stays in use for the next one."""
    store = make_store()
    end_spawn(store, user="bob")
    store.flush()
    odd = (lambda: store.get_spawn("alice", "", 10**20)) if store_url.startswith("sqlite") else (
        lambda: store.list_spawns("alice", "x\x00")
    )
    with pytest.raises((OverflowError, ValueError, sa.exc.DataError)):
        odd()
    assert "refused one read" in caplog.text
    assert [s["user_name"] for s in store.list_spawns("bob")] == ["bob"]
    assert asyncio.run(store.read_list_spawns("bob", account=None)).available


def test_a_database_that_cannot_be_opened_is_down_for_reads(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A database that fails to open: the pages' reads say "down" (the first one after
    trying, the next ones without trying), and memory still answers for its spawns."""
    store = SpawnHistory(url=f"sqlite:///{tmp_path / 'no-such-folder' / 'history.sqlite'}")
    try:
        end_spawn(store, user="alice")
        store.flush()
        first = asyncio.run(store.read_list_spawns("bob", account=None))
        assert (first.value, first.reason) == ([], "down")
        t = time.monotonic()
        assert asyncio.run(store.read_last_by_server("bob", account=None)).reason == "down"
        assert time.monotonic() - t < 0.1
        alice = asyncio.run(store.read_last_spawn("alice", account=None))
        assert alice.available and alice.value is not None and alice.value["id"] < 0
        assert "cannot be used" in caplog.text
    finally:
        store.close()


def test_read_timeout_is_checked() -> None:
    with pytest.raises(TraitError, match=r"^c\.SpawnHistory\.read_timeout = 0\.0: seconds, from 0\.05 to 60$"):
        SpawnHistory(read_timeout=0)
    assert SpawnHistory(read_timeout=0.5).read_timeout == 0.5


def test_reads_stuck_on_the_database_hold_two_threads_and_the_rest_fail_fast() -> None:
    """Reads that never come back (a gate stands for a stalled database): the first is
    given up on at its deadline, every later one answers at once from the fallback, the
    threads stay two however many pages ask, and reads go through again once it ends."""
    gate = threading.Event()
    pool = ReadPool(workers=2, max_waiting=4)

    async def scenario() -> list[Read[str]]:
        first = await pool.read(lambda: (gate.wait(), "db")[1], lambda: "memory", 0.1)
        later = await asyncio.gather(*(pool.read(lambda: "db", lambda: "memory", 0.1) for _ in range(50)))
        return [first, *later]

    def page_threads() -> int:
        return sum(t.name.startswith("rp-history-page") for t in threading.enumerate())

    before = page_threads()  # other stores' threads, if any are still going
    try:
        t = time.monotonic()
        reads = asyncio.run(scenario())
        assert time.monotonic() - t < 1.0
        assert [(r.value, r.reason) for r in reads[:2]] == [("memory", "timeout"), ("memory", "stalled")]
        assert {r.reason for r in reads[1:]} == {"stalled"}
        assert reads[1].why == "an earlier read is still waiting for its database"
        assert page_threads() <= before + 2  # the pool's two, made at its first read; never one per page
        gate.set()
        for _ in range(100):
            if not pool.stuck(0.1):
                break
            time.sleep(0.01)
        again = asyncio.run(pool.read(lambda: "db", lambda: "memory", 1.0))
        assert (again.value, again.available) == ("db", True)
    finally:
        gate.set()
        pool.close()


def test_too_many_waiting_reads_fail_fast() -> None:
    """Both threads busy (not yet past the deadline) and ``max_waiting`` reads queued:
    one more is not queued, it answers at once."""
    gate = threading.Event()
    pool = ReadPool(workers=2, max_waiting=2)

    async def scenario() -> list[Read[str]]:
        slow = [asyncio.ensure_future(pool.read(lambda: (gate.wait(), "db")[1], lambda: "memory", 5.0)) for _ in range(4)]
        await asyncio.sleep(0.2)  # two run, two wait
        extra = await pool.read(lambda: "db", lambda: "memory", 5.0)
        gate.set()
        return [extra, *await asyncio.gather(*slow)]

    try:
        extra, *slow = asyncio.run(scenario())
        assert (extra.value, extra.reason) == ("memory", "busy")
        assert [r.value for r in slow] == ["db"] * 4
    finally:
        gate.set()
        pool.close()


# -- a hub on SQLite: odd requests, hostile stored text -----------------------------------------

#: text stored by whoever named a server or wrote an event: a right-to-left override, a
#: terminal escape, and 100 kB
HOSTILE_SERVER = "gpu\u202eexe.txt\x1b[2J"
HOSTILE_SUMMARY = "The image quay.io/x/\u202egnp.exe does not exist. \x07" + "A" * 100_000


@pytest.fixture(scope="module")
def hub_history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    """A hub on SQLite where alice's and bob's default servers failed once, and visitor
    has a stored failure of a server named with hostile text."""
    work = tmp_path_factory.mktemp("reads-hub")
    with history_hub_process(work) as hub:
        start(hub, "alice")
        start(hub, "bob")
        wait_stored(hub, "alice")
        wait_stored(hub, "bob")
        store_hostile_failure(
            f"sqlite:///{work / 'richprogress_history.sqlite'}", "visitor", hub_account(work, "visitor")
        )
        yield hub


def hub_account(work: Path, user: str) -> Account:
    """``user``'s account in the hub's own database (``work/hub.sqlite``), read only."""
    engine = sa.create_engine(f"sqlite:///{work / 'hub.sqlite'}")
    with engine.connect() as conn:
        user_id, created = conn.execute(
            sa.text("SELECT id, created FROM users WHERE name = :name"), {"name": user}
        ).one()
    engine.dispose()
    return account_of(SimpleNamespace(id=user_id, created=datetime.fromisoformat(created)))


def store_hostile_failure(url: str, user: str, account: Account) -> None:
    """A failed spawn of ``user``'s ``account`` with hostile text in its server name,
    summary and cause, written into the hub's history database as a store would."""
    now = datetime.now(timezone.utc)
    row = build_row(
        {
            "user_name": user,
            "user_id": account.id,
            "user_created": account.created,
            "server_name": HOSTILE_SERVER,
            "requested_at": now - timedelta(minutes=1),
            "finished_at": now,
            "outcome": "failed",
            "failure_message": "",
            "records": [],
            "dropped": 0,
            "progress": 60,
            "facts": {},
            "shown_facts": [],
            "stopped_early": None,
        }
    )
    row.update(summary=HOSTILE_SUMMARY, cause="bad\u2066cause\x1b]8;;")
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(spawns_table.insert().values(**row))
    engine.dispose()


def words(markup: str) -> str:
    """The text a person reads in ``markup`` (tags dropped, entities read)."""
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


ODD = [
    pytest.param("/spawns/" + "9" * 4301, "spawn id must be a whole number", id="4301-digit-id"),
    pytest.param("/spawns/99999999999999999999", "spawn id must be a whole number", id="past-int64"),
    pytest.param(f"/spawns/{2**63}", "spawn id must be a whole number", id="2**63"),
    pytest.param("/spawns/0", "spawn id must not be 0", id="id-0"),
    pytest.param("/servers/x%00/spawns", "server name holds a control character", id="nul-in-name"),
    pytest.param("/servers/x%1b%5b2J/spawns/1", "server name holds a control character", id="escape-in-name"),
    pytest.param("/servers/" + "n" * 2000 + "/spawns", "server name is longer than 1024", id="long-name"),
    pytest.param("/spawns?before=" + "1" * 4301, "before must be a whole number", id="4301-digit-before"),
]


ODD_USERS = [
    pytest.param("x%00", "/spawns", "user name holds a control character", id="nul-in-user"),
    pytest.param("u" * 1100, "/spawns/1", "user name is longer than 1024", id="long-user"),
]


@pytest.mark.parametrize(("user", "path", "said"), [*(pytest.param("alice", *p.values, id=p.id) for p in ODD), *ODD_USERS])
def test_an_odd_request_is_400_and_the_history_stays_up(hub_history: Hub, user: str, path: str, said: str) -> None:
    # as admin: the scope check passes for any user name, so the name itself is checked
    r = requests.get(
        hub_history.url + f"hub/api/richprogress/users/{user}" + path,
        headers={"Authorization": f"token {hub_history.tokens['admin']}"},
        timeout=10,
    )
    assert r.status_code == 400, r.text
    assert said in r.json()["message"]
    assert "Traceback" not in r.text
    # everyone's history still answers, and nothing was taken for an outage
    listed = hub_history.api(spawns_path("bob"), "bob")
    assert listed.status_code == 200 and [s["user_name"] for s in listed.json()["spawns"]] == ["bob"]
    assert "cannot be used" not in hub_history.log.read_text()


def test_the_failures_page_shows_stored_text_escaped_and_cut(hub_history: Hub) -> None:
    page = hub_history.page("richprogress/failures", "admin").text
    rows = [r for r in re.findall(r'<tr class="rp-failure-row".*?</tr>', page, re.S) if ">visitor<" in r]
    assert len(rows) == 1, page[:3000]
    row = rows[0]
    text = words(row)
    for raw in ("\u202e", "\u2066", "\x1b", "\x07"):
        assert raw not in page
    assert "gpu\\u202eexe.txt\\x1b[2J" in text  # the server name, as the failure page shows it
    assert "\\u202egnp.exe" in text and "more characters)" in text
    assert "bad\\u2066cause\\x1b]8;;" in text
    assert len(page) < 30_000  # not the 100 kB summary
    causes = html.unescape(page[page.index('id="rp-causes"') :])
    assert "bad\\u2066cause" in causes
    # the link still leads to the server's own page
    assert "failed/visitor/" + quote(HOSTILE_SERVER, safe="") in row


def test_the_home_notice_shows_stored_text_escaped_and_cut(hub_history: Hub) -> None:
    page = hub_history.page("home", "visitor").text
    notice = re.search(r'<div class="alert alert-warning[^"]*rp-notice".*?</div>', page, re.S)
    assert notice, page[:3000]
    text = words(notice.group(0))
    assert "\u202e" not in page and "\x1b" not in page and "\x07" not in page
    assert "gpu\\u202eexe.txt\\x1b[2J" in text
    assert "\\u202egnp.exe does not exist. \\x07" in text and "more characters)" in text
    assert len(page) < 30_000
    assert "rp-history-note" not in page  # the history answered


# -- a hub on PostgreSQL, stalled -------------------------------------------------------------


def postgres_pids(port: int) -> list[int]:
    """The postmaster listening on ``port`` and its children (the backends)."""
    master = None
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmd and cmd[0].endswith(b"postgres") and str(port).encode() in cmd:
            master = int(pid)
    assert master is not None, f"no postgres on port {port}"
    children = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == master:
                children.append(int(pid))
    return [master, *children]


@contextmanager
def stopped(pids: list[int]) -> Iterator[None]:
    """PostgreSQL frozen (SIGSTOP) for the block: it accepts nothing and answers nothing."""
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)


def timed(get: Callable[[], requests.Response]) -> tuple[float, requests.Response]:
    t = time.monotonic()
    r = get()
    return time.monotonic() - t, r


NOTE = "Spawn history is unavailable right now; showing what the hub remembers."


def test_a_stalled_postgresql_never_freezes_the_hub(tmp_path: Path) -> None:
    with postgres_server() as url:
        port = int(re.search(r":(\d+)/", url).group(1))  # type: ignore[union-attr]
        with history_hub_process(tmp_path, history_url=url, read_timeout=0.5) as hub:
            start(hub, "alice")
            wait_stored(hub, "alice")
            alice = hub.login("alice")
            bob = hub.login("bob")
            admin = hub.login("admin")
            assert NOTE not in alice.get(hub.url + "hub/home", timeout=10).text
            times: dict[str, float] = {}
            with stopped(postgres_pids(port)):
                # a page read while a ping is made: the ping does not wait for the page
                pinged: list[float] = []
                pinger = threading.Thread(
                    target=lambda: (time.sleep(0.1), pinged.append(timed(lambda: requests.get(hub.url + "hub/api/", timeout=10))[0]))
                )
                pinger.start()
                times["home, first"], home = timed(lambda: alice.get(hub.url + "hub/home", timeout=10))
                pinger.join()
                times["api ping during it"] = pinged[0]
                assert home.status_code == 200 and NOTE in home.text
                # a spawn that ends now: the hub remembers it, and says so
                start(hub, "bob")
                for _ in range(100):
                    page = bob.get(hub.url + "hub/home", timeout=10).text
                    if "rp-notice-link" in page:
                        break
                    time.sleep(0.1)
                assert "rp-notice-link" in page and NOTE in page, page[:3000]
                times["home, again"], home = timed(lambda: alice.get(hub.url + "hub/home", timeout=10))
                assert NOTE in home.text
                times["spawn form"], form = timed(lambda: alice.get(hub.url + "hub/spawn", timeout=10))
                assert form.status_code == 200 and NOTE in form.text and "anything" in form.text
                times["failure page"], failed = timed(lambda: alice.get(hub.url + "hub/richprogress/failed/alice", timeout=10))
                assert NOTE in failed.text
                times["spawns list"], listed = timed(lambda: hub.api(spawns_path("alice"), "alice"))
                assert listed.status_code == 503, listed.text
                assert listed.json()["message"].startswith("The spawn history cannot be read right now:")
                times["admin page"], admin_page = timed(lambda: admin.get(hub.url + "hub/richprogress/failures", timeout=10))
                assert "Spawn history is unavailable right now" in admin_page.text
                times["api ping"], ping = timed(lambda: requests.get(hub.url + "hub/api/", timeout=10))
                assert ping.status_code == 200
            print("answer times with PostgreSQL stopped:", {k: round(v, 3) for k, v in times.items()})
            assert max(times.values()) < 1.0, times
            # PostgreSQL goes on: the history is read again, without a restart
            found = hub.wait_api(spawns_path("alice"), lambda data: bool(data["spawns"]), "the history is back", every=0.2, settle=0)
            assert found["spawns"][0]["outcome"] == "failed"
            assert NOTE not in alice.get(hub.url + "hub/home", timeout=10).text
