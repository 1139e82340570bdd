"""The spawn history's parts where ``test_history_store.py`` does not reach them: the
outage and its end (``history/database.py``), the memory's bound and its place in lists
(``history/memory.py``), and counts since two moments (``history/reads.py``).

Spawns are ended the way ``test_history_store.py`` ends them (real timelines, real
records); its fixtures give a SQLite file and a throwaway PostgreSQL. No test sleeps: an
outage is a SQLite file in a folder that does not exist yet, and ``retry_seconds`` says
whether the store may try again at once (0) or not for an hour.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from richprogress.history import SpawnHistory
from richprogress.history.database import driver_url, safe_url
from tests.helpers import history_store as stored
from tests.helpers.history_store import T0, Clock, end_spawn

postgres_url = stored.postgres_url
store_url = stored.store_url
clock = stored.clock
make_store = stored.make_store


def outage_store(tmp_path: Path, clock: Clock, retry_seconds: float) -> tuple[SpawnHistory, Path]:
    """A store whose SQLite file is in a folder that does not exist yet (the outage)."""
    folder = tmp_path / "not-yet"
    return SpawnHistory(clock=clock, url=f"sqlite:///{folder / 'h.sqlite'}", retry_seconds=retry_seconds), folder


def down_then_back(store: SpawnHistory, folder: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Server "before" ends while the database is down, "after" once its folder exists."""
    with caplog.at_level(logging.INFO):
        end_spawn(store, server="before")
        store.flush()
        folder.mkdir()  # the database could be used again
        end_spawn(store, server="after")
        store.flush()


def history_log(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "spawn history database" in r.getMessage()]


def test_a_database_that_comes_back_is_used_again_and_said_so(
    tmp_path: Path, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    store, folder = outage_store(tmp_path, clock, retry_seconds=0)
    try:
        down_then_back(store, folder, caplog)
        assert [m.split(" (")[0] for m in history_log(caplog)] == [
            f"richprogress: the spawn history database sqlite:///{folder / 'h.sqlite'} cannot be used",
            "richprogress: the spawn history database is reachable again",
        ]
        after = store.last_spawn("alice", "after")
        assert after is not None and after["id"] > 0  # written
        before = store.last_spawn("alice", "before")
        assert before is not None and before["id"] > 0  # waited, then written first
        assert [s["server_name"] for s in store.recent_failures()] == ["after", "before"]
    finally:
        store.close()


def test_within_retry_seconds_the_database_is_left_alone(
    tmp_path: Path, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    store, folder = outage_store(tmp_path, clock, retry_seconds=3600)
    try:
        down_then_back(store, folder, caplog)
        assert len(history_log(caplog)) == 1  # the outage, said once; no retry yet
        assert not (folder / "h.sqlite").exists()
        after = store.last_spawn("alice", "after")
        assert after is not None and after["id"] < 0
        assert not store.available
    finally:
        store.close()


def test_memory_keeps_the_last_spawn_of_memory_servers_servers(tmp_path: Path, clock: Clock) -> None:
    store, _ = outage_store(tmp_path, clock, retry_seconds=3600)
    store.memory_servers = 2
    try:
        for server in ("a", "b", "c"):
            end_spawn(store, server=server)
        store.flush()
        kept = {server: store.last_spawn("alice", server) is not None for server in ("a", "b", "c")}
        assert kept == {"a": False, "b": True, "c": True}  # the oldest server dropped
        assert sorted(store.last_by_server("alice")) == ["b", "c"]
    finally:
        store.close()


def test_a_newer_spawn_of_the_same_server_replaces_the_one_in_memory(tmp_path: Path, clock: Clock) -> None:
    store, _ = outage_store(tmp_path, clock, retry_seconds=3600)
    try:
        end_spawn(store, outcome="failed")
        end_spawn(store, outcome="ready", started=T0 + timedelta(minutes=5), records=[])
        store.flush()
        last = store.last_spawn("alice")
        assert last is not None and last["outcome"] == "ready"
        assert [s["outcome"] for s in store.list_spawns("alice")] == ["ready"]
        assert store.get_spawn("alice", "", last["id"]) == last
        assert store.get_spawn("alice", "", last["id"] + 1) is None  # the replaced one
        assert store.get_spawn("bob", "", last["id"]) is None  # another server's id
    finally:
        store.close()


def test_the_unwritten_spawn_leads_the_first_page_only(make_store: Callable[..., SpawnHistory]) -> None:
    store = make_store()
    for minutes in (0, 5, 10):
        end_spawn(store, started=T0 + timedelta(minutes=minutes))
    store.flush()
    gate = threading.Event()
    store.writer.after_writes(gate.wait, 30)  # hold the writer thread
    try:
        end_spawn(store, started=T0 + timedelta(minutes=15), outcome="ready", records=[])
        first = store.list_spawns("alice", limit=2)
        assert first[0]["id"] < 0 and first[0]["outcome"] == "ready"
        assert len(first) == 2 and first[1]["id"] > 0
        later = store.list_spawns("alice", limit=2, before=first[1]["id"])
        assert [s["id"] > 0 for s in later] == [True, True]
        assert [s["requested_at"] for s in later] == sorted((s["requested_at"] for s in later), reverse=True)
    finally:
        gate.set()
    store.flush()
    assert [s["id"] > 0 for s in store.list_spawns("alice", limit=2)] == [True, True]


def test_counts_since_a_week_and_a_day_in_one_query(
    make_store: Callable[..., SpawnHistory], clock: Clock
) -> None:
    store = make_store()
    clock.now = T0 + timedelta(days=10)
    now = clock.now
    for age, outcome, records in [
        (timedelta(hours=2), "failed", None),  # image-not-found
        (timedelta(hours=3), "failed", []),  # timeout
        (timedelta(hours=5), "ready", []),
        (timedelta(days=3), "failed", None),
        (timedelta(days=4), "failed", None),
        (timedelta(days=5), "stopped", []),
        (timedelta(days=6), "ready", []),
        (timedelta(days=9), "failed", None),  # older than a week: not counted
    ]:
        end_spawn(store, user=f"u{age.total_seconds():.0f}", outcome=outcome, started=now - age,
                  records=records, message="" if records is None else "The server did not start within 30 seconds.")
    store.flush()
    week, day = now - timedelta(days=7), now - timedelta(days=1)
    assert store.cause_counts_since(week, day) == {"image-not-found": (3, 1), "timeout": (1, 1)}
    assert store.cause_counts(day) == {"image-not-found": 1, "timeout": 1}
    assert store.outcome_counts_since(week, day) == {"failed": (4, 2), "ready": (2, 1), "stopped": (1, 0)}
    assert store.outcome_counts_since(week) == {"failed": (4,), "ready": (2,), "stopped": (1,)}


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://rp:s3cret@db:5432/rp", "postgresql://rp:***@db:5432/rp"),
        ("sqlite:////srv/hub/h.sqlite", "sqlite:////srv/hub/h.sqlite"),
        ("::not a url::", "(unparsable URL)"),
    ],
    ids=["password-hidden", "sqlite-as-is", "unparsable"],
)
def test_the_log_never_shows_the_password(url: str, shown: str) -> None:
    assert safe_url(url) == shown


def test_driver_url_leaves_other_databases_alone() -> None:
    assert driver_url("sqlite:///h.sqlite") == "sqlite:///h.sqlite"
    assert driver_url("mysql+pymysql://u@h/db") == "mysql+pymysql://u@h/db"


def store_errors(operation: str) -> float:
    """``richprogress_store_errors_total{operation}`` as the hub's /hub/metrics serves it."""
    from prometheus_client import REGISTRY

    from richprogress.history import count_errors_with
    from richprogress.metrics import count_store_error, default_metrics

    default_metrics()  # registered at hub start by setup(c); here by the first test asking
    count_errors_with(count_store_error)  # as setup(c) wires the store to the metrics
    return REGISTRY.get_sample_value("richprogress_store_errors_total", {"operation": operation}) or 0.0


def test_a_database_that_cannot_be_reached_counts_connect_errors(tmp_path: Path, clock: Clock) -> None:
    store, _ = outage_store(tmp_path, clock, retry_seconds=0)
    before = store_errors("connect")
    try:
        end_spawn(store, server="a")
        end_spawn(store, server="b")
        store.flush()
        assert store_errors("connect") - before == 2  # each write tried, each failed
    finally:
        store.close()


@pytest.mark.parametrize("operation", ["read", "write"])
def test_a_table_gone_counts_read_and_write_errors(tmp_path: Path, clock: Clock, operation: str) -> None:
    import sqlalchemy as sa

    url = f"sqlite:///{tmp_path / 'h.sqlite'}"
    store = SpawnHistory(clock=clock, url=url, retry_seconds=0)
    try:
        assert store.available  # the tables exist
        engine = sa.create_engine(url)
        with engine.begin() as conn:
            conn.execute(sa.text("DROP TABLE richprogress_spawns"))
        engine.dispose()
        before = {op: store_errors(op) for op in ("connect", "read", "write", "prune")}
        if operation == "read":
            assert store.recent_failures() == []
        else:
            end_spawn(store)
            store.flush()
            spawn = store.last_spawn("alice")
            assert spawn is not None and spawn["id"] < 0  # kept in memory
        after = {op: store_errors(op) - before[op] for op in before}
        assert after == {"connect": 0, "read": 0, "write": 0, "prune": 0, operation: 1}
    finally:
        store.close()
