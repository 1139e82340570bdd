"""The spawn history store against real databases: a SQLite file and a real PostgreSQL.

Every test runs on both (``store_url``, parametrized); PostgreSQL is a throwaway server
started once per module (``tests.helpers.postgres``). Spawns are real ``SpawnTimeline``s
filled with records the real formatter made from recorded events
(``tests/data/image-not-found.events.json``), ended through ``spawn_events.spawn_ended``
as the spawner ends them. Time is an injectable clock.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
import sqlalchemy as sa

from richprogress.history import SpawnHistory, spawn_facts, timeline_of
from richprogress.history.schema import SCHEMA_VERSION
from richprogress.story.diagnosis import diagnose
from tests.helpers import history_store as stored
from tests.helpers.history_store import T0, Clock, end_spawn, fake_spawner

# the store's fixtures (a SQLite file, and a throwaway PostgreSQL), shared with the other
# modules that test a store
postgres_url = stored.postgres_url
store_url = stored.store_url
clock = stored.clock
make_store = stored.make_store


def test_a_failed_spawn_is_kept_with_its_story(make_store: Callable[..., SpawnHistory]) -> None:
    store = make_store()
    timeline = end_spawn(store)
    store.flush()
    spawn = store.last_spawn("alice", "")
    assert spawn is not None
    expected = diagnose(timeline.records(), "")
    assert spawn["outcome"] == "failed"
    assert spawn["id"] > 0
    assert spawn["summary"] == expected["summary"]
    assert spawn["hint"] == expected["hint"]
    assert spawn["phase"] == expected["phase"] == "image"
    assert spawn["record_id"] == expected["record_id"]
    assert spawn["cause"] == "image-not-found"
    assert spawn["requested_at"] == "2026-11-29T09:00:00.000Z"
    assert spawn["finished_at"] == "2026-11-29T09:00:30.000Z"
    assert spawn["elapsed"] == 30.0
    assert spawn["records"] == timeline.records()
    assert [s["label"] for s in spawn["steps"]][-1] == "Downloading the software image"
    assert spawn["profile_slug"] == "gpu" and spawn["profile_name"] == "One GPU"
    assert spawn["facts"] == {
        "namespace": "jhub",
        "pod": "jupyter-alice",
        "node": None,
        "images": ["quay.io/jupyter/no-such-notebook:2026-11"],
        "requests": {"cpu": "0.5", "memory": "1G"},
        "limits": {"cpu": "2", "memory": "4G", "nvidia.com/gpu": "1"},
        "profile_slug": "gpu",
        "profile_name": "One GPU",
    }
    # the rebuilt timeline tells the same story as the one that ended
    rebuilt = timeline_of(spawn)
    assert rebuilt.to_dict() == timeline.to_dict()


def test_the_history_outlives_the_store_object(make_store: Callable[..., SpawnHistory]) -> None:
    """A hub restart: a new store on the same database reads what the old one wrote."""
    first = make_store()
    end_spawn(first, server="gpu")
    first.close()
    again = make_store()
    spawn = again.last_spawn("alice", "gpu")
    assert spawn is not None and spawn["cause"] == "image-not-found"
    assert again.last_spawn("alice", "") is None


@pytest.mark.parametrize(
    ("outcome", "cause", "summary"),
    [("ready", None, None), ("stopped", "stopped", "set"), ("failed", "image-not-found", "set")],
    ids=["ready", "stopped-before-ready", "failed"],
)
def test_every_ending_is_kept(
    make_store: Callable[..., SpawnHistory], outcome: str, cause: str | None, summary: str | None
) -> None:
    store = make_store()
    end_spawn(store, outcome=outcome)
    store.flush()
    spawn = store.last_spawn("alice")
    assert spawn is not None
    assert spawn["outcome"] == outcome
    assert spawn["cause"] == cause
    assert (spawn["summary"] is not None) == (summary is not None)


def test_spawns_beyond_keep_per_server_are_deleted_for_that_server_only(
    make_store: Callable[..., SpawnHistory],
) -> None:
    store = make_store(keep_per_server=3)
    end_spawn(store, user="bob", records=[])
    for n in range(5):
        end_spawn(store, started=T0 + timedelta(minutes=n), records=[])
    store.flush()
    kept = store.list_spawns("alice", "", limit=10)
    assert [s["requested_at"][11:16] for s in kept] == ["09:04", "09:03", "09:02"]
    assert len(store.list_spawns("bob", "")) == 1


def test_spawns_older_than_the_age_limit_are_deleted(
    make_store: Callable[..., SpawnHistory], clock: Clock
) -> None:
    store = make_store(max_age_days=7, sweep_seconds=0)
    end_spawn(store, user="old", started=T0 - timedelta(days=8), records=[])
    end_spawn(store, user="recent", started=T0 - timedelta(days=6), records=[])
    store.flush()
    assert store.list_spawns("old") == []
    assert len(store.list_spawns("recent")) == 1
    clock.now = T0 + timedelta(days=2)  # the recent one is now 8 days old
    end_spawn(store, user="new", started=clock.now, records=[])
    store.flush()
    assert store.list_spawns("recent") == []


def test_lists_are_newest_first_and_page_by_id(make_store: Callable[..., SpawnHistory]) -> None:
    store = make_store()
    for n in range(5):
        end_spawn(store, started=T0 + timedelta(minutes=n), outcome="ready" if n % 2 else "failed", records=[])
    store.flush()
    first = store.list_spawns("alice", limit=2)
    second = store.list_spawns("alice", limit=2, before=first[-1]["id"])
    third = store.list_spawns("alice", limit=2, before=second[-1]["id"])
    minutes = [s["requested_at"][14:16] for s in first + second + third]
    assert minutes == ["04", "03", "02", "01", "00"]
    assert [s["outcome"] for s in first] == ["failed", "ready"]


def test_failures_across_users_filter_and_count_by_cause(
    make_store: Callable[..., SpawnHistory], clock: Clock
) -> None:
    store = make_store()
    clock.now = T0 + timedelta(days=10)
    end_spawn(store, user="e", started=clock.now - timedelta(days=9))  # older than a week
    end_spawn(store, user="a", started=clock.now - timedelta(hours=2))  # image-not-found, today
    end_spawn(store, user="b", started=clock.now - timedelta(days=3))  # image-not-found, this week
    end_spawn(store, user="c", started=clock.now - timedelta(hours=1), records=[], message="The server did not start within 30 seconds.")
    end_spawn(store, user="d", started=clock.now - timedelta(hours=1), outcome="ready")
    store.flush()
    assert [f["user_name"] for f in store.recent_failures()] == ["c", "b", "a", "e"]
    assert [f["user_name"] for f in store.recent_failures(cause="timeout")] == ["c"]
    assert store.cause_counts(clock.now - timedelta(days=1)) == {"timeout": 1, "image-not-found": 1}
    assert store.cause_counts(clock.now - timedelta(days=7)) == {"image-not-found": 2, "timeout": 1}


def test_last_by_server_gives_each_servers_last_spawn(make_store: Callable[..., SpawnHistory]) -> None:
    store = make_store()
    end_spawn(store, server="", outcome="failed")
    end_spawn(store, server="", outcome="ready", started=T0 + timedelta(minutes=5), records=[])
    end_spawn(store, server="gpu", outcome="failed")
    end_spawn(store, user="bob", server="gpu", outcome="ready")
    store.flush()
    last = store.last_by_server("alice")
    assert {name: s["outcome"] for name, s in last.items()} == {"": "ready", "gpu": "failed"}


def test_a_spawn_is_readable_before_its_write_is_done(make_store: Callable[..., SpawnHistory]) -> None:
    store = make_store()
    gate = threading.Event()
    store.writer.after_writes(gate.wait, 30)  # hold the writer thread
    end_spawn(store)
    spawn = store.last_spawn("alice")
    assert spawn is not None and spawn["id"] < 0  # from memory, not yet written
    assert spawn["cause"] == "image-not-found"
    assert store.list_spawns("alice")[0]["id"] == spawn["id"]
    gate.set()
    store.flush()
    written = store.last_spawn("alice")
    assert written is not None and written["id"] > 0


def test_the_schema_is_versioned(make_store: Callable[..., SpawnHistory], store_url: str) -> None:
    store = make_store()
    assert store.available
    engine = sa.create_engine(store_url)
    with engine.connect() as conn:
        version = conn.execute(sa.text("SELECT value FROM richprogress_meta WHERE key = 'schema_version'")).scalar()
    engine.dispose()
    assert version == str(SCHEMA_VERSION)


def test_a_database_from_a_newer_release_is_left_alone(
    make_store: Callable[..., SpawnHistory], store_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    first = make_store()
    assert first.available  # creates the tables
    first.close()
    engine = sa.create_engine(store_url)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE richprogress_meta SET value = '99' WHERE key = 'schema_version'"))
    engine.dispose()
    store = make_store()
    with caplog.at_level(logging.ERROR):
        end_spawn(store)
        store.flush()
    assert "schema version 99" in caplog.text
    spawn = store.last_spawn("alice")
    assert spawn is not None and spawn["id"] < 0  # served from memory
    engine = sa.create_engine(store_url)
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM richprogress_spawns")).scalar() == 0
    engine.dispose()


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:////nonexistent-folder/for/sure/history.sqlite",
        "postgresql+psycopg2://rp@127.0.0.1:9/rp?connect_timeout=2",
    ],
    ids=["sqlite-no-folder", "postgres-nobody-listening"],
)
def test_a_broken_database_is_logged_once_and_memory_serves(
    url: str, clock: Clock, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    store = SpawnHistory(clock=clock, url=url, spool_path=str(tmp_path / "history.spool"))
    try:
        with caplog.at_level(logging.ERROR):
            end_spawn(store, server="a")
            end_spawn(store, server="b")
            store.flush()
        errors = [r for r in caplog.records if "spawn history database" in r.getMessage()]
        assert len(errors) == 1, caplog.text
        assert errors[0].getMessage().endswith("finished spawns wait until it can")
        for server in ("a", "b"):
            spawn = store.last_spawn("alice", server)
            assert spawn is not None and spawn["cause"] == "image-not-found"
        assert store.recent_failures() == []  # lists need the database
    finally:
        store.close()


def test_jupyterhubs_own_database_is_refused() -> None:
    from traitlets import TraitError

    with pytest.raises(TraitError, match="JupyterHub's own database"):
        SpawnHistory(url="sqlite:///jupyterhub.sqlite")


def test_spawn_facts_of_a_spawner_that_has_none() -> None:
    facts = spawn_facts(object())
    assert facts == {
        "namespace": None, "pod": None, "node": None, "images": [], "requests": {},
        "limits": {}, "profile_slug": None, "profile_name": None,
    }


def test_spawn_facts_read_the_node_from_the_pod() -> None:
    spawner = fake_spawner()
    spawner.pod_reflector = SimpleNamespace(pods={"jhub/jupyter-alice": {"spec": {
        "nodeName": "node-7",
        "initContainers": [{"image": "busybox:1"}],
        "containers": [{"image": "quay.io/x:1"}, {"image": "quay.io/x:1"}],
    }}})
    facts = spawn_facts(spawner)
    assert facts["node"] == "node-7"
    assert facts["images"] == ["busybox:1", "quay.io/x:1"]


def test_a_page_never_waits_long_for_a_database_that_does_not_answer(clock: Clock, tmp_path: Path) -> None:
    """A server that accepts connections and never speaks (a hung PostgreSQL): the pages'
    reads return within ``read_timeout`` with what memory holds, saying the database did
    not answer, and ending a spawn does not wait at all."""
    import asyncio
    import socket
    import time

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    port = silent.getsockname()[1]
    store = SpawnHistory(
        clock=clock,
        url=f"postgresql+psycopg2://rp@127.0.0.1:{port}/rp",
        read_timeout=0.5,
        spool_path=str(tmp_path / "h.spool"),
    )
    try:
        t = time.monotonic()
        end_spawn(store)  # queues the write; the writer thread is the one that hangs
        assert time.monotonic() - t < 0.2
        t = time.monotonic()
        spawn = asyncio.run(store.read_last_spawn("alice", account=None)).value
        assert time.monotonic() - t < 1.0
        assert spawn is not None and spawn["id"] < 0  # from memory
        t = time.monotonic()
        found = asyncio.run(store.read_last_by_server("bob", account=None))
        assert time.monotonic() - t < 1.0
        assert (found.value, found.reason) == ({}, "timeout")
        # the read is still stuck on the connection: the next one does not wait for it
        t = time.monotonic()
        assert asyncio.run(store.read_last_by_server("bob", account=None)).reason == "stalled"
        assert time.monotonic() - t < 0.2
    finally:
        silent.close()
        store.close()
