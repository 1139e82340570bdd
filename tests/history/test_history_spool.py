"""The spawn history's spool and its SQLite file checks, one behaviour at a time.

What an admin sees: the log lines (a cut spool line, a full spool, a removed file, an
unwritable file), the metric, the rows stored (once each), and the settings refused. The
faults end to end (stalls, restarts, kills) are in ``test_history_faults.py``.
"""

from __future__ import annotations

import logging
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from traitlets import TraitError

from richprogress.history import SpawnHistory
from richprogress.history.database import journal_mode_for, make_engine, mount_fstype
from richprogress.history.spool import SPOOL_EVENTS
from tests.helpers.fault_cases import chattr_works
from tests.helpers.history_store import Clock, counted_spool_events, end_spawn, spool_line


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def spool_events() -> Iterator[list[str]]:
    """The spool events counted during the test (as the metrics' counter sees them)."""
    with counted_spool_events() as seen:
        yield seen


@pytest.fixture
def make_store(tmp_path: Path, clock: Clock) -> Iterator[Callable[..., SpawnHistory]]:
    made: list[SpawnHistory] = []

    def make(**traits: Any) -> SpawnHistory:
        traits.setdefault("url", f"sqlite:///{tmp_path / 'h.sqlite'}")
        store = SpawnHistory(clock=clock, **traits)
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


def rows(tmp_path: Path, name: str = "h.sqlite") -> list[tuple[str, str, str]]:
    engine = sa.create_engine(f"sqlite:///{tmp_path / name}")
    with engine.connect() as conn:
        found = conn.execute(sa.text("SELECT user_name, server_name, spawn_uid FROM richprogress_spawns ORDER BY id")).all()
    engine.dispose()
    return [tuple(r) for r in found]


def until(done: Callable[[], bool], seconds: float = 20.0) -> None:
    """Wait until ``done()`` (a condition, not a guess at how long it takes)."""
    import time

    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "the condition did not come true"
        time.sleep(0.02)


def messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records]


def test_the_spool_sits_beside_the_sqlite_file_and_is_cut_once_all_is_stored(
    make_store: Callable[..., SpawnHistory], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import richprogress.history.spool as spool_module

    store = make_store()
    assert store.spool_path == str(tmp_path / "h.spool")
    end_spawn(store, server="a")
    store.flush()
    assert len(rows(tmp_path)) == 1
    held = (tmp_path / "h.spool").read_bytes()
    # the spawn's line and the line that says it is stored; the file is cut when it is
    # big, or at close
    assert held.count(b"\n") == 2 and held.endswith(b'"stored":"' + rows(tmp_path)[0][2].encode() + b'"}\n')
    monkeypatch.setattr(spool_module, "CUT_BYTES", len(held) + 1)
    end_spawn(store, server="b")
    store.flush()
    assert (tmp_path / "h.spool").read_bytes() == b""  # past CUT_BYTES, all stored: cut
    end_spawn(store, server="c")
    store.close()
    assert (tmp_path / "h.spool").read_bytes() == b""
    assert [server for _, server, _ in rows(tmp_path)] == ["a", "b", "c"]


def test_spawns_left_in_the_spool_are_stored_at_start_in_order_and_once(
    make_store: Callable[..., SpawnHistory], tmp_path: Path, caplog: pytest.LogCaptureFixture,
    spool_events: list[str],
) -> None:
    first = make_store()
    end_spawn(first, server="stored-already")
    first.flush()
    ((_, _, stored_uid),) = rows(tmp_path)
    assert stored_uid
    first.close()
    # what a hub killed after its writes could leave: a line of a stored spawn, two that
    # were not stored, and an append cut short
    spool = tmp_path / "h.spool"
    spool.write_bytes(spool_line(stored_uid, "stored-already") + spool_line("u-1", "one") + spool_line("u-2", "two") + b'{"v": 1, "uid": "u-3", "snap')
    with caplog.at_level(logging.INFO):
        store = make_store()
        store.flush()
        store.wait_spooled()
        store.flush()
    assert [(user, server) for user, server, _ in rows(tmp_path)] == [
        ("alice", "stored-already"), ("alice", "one"), ("alice", "two"),
    ]
    assert [uid for _, _, uid in rows(tmp_path)] == [stored_uid, "u-1", "u-2"]
    rejected = tmp_path / "h.spool.rejected"
    assert any(
        "its last line (28 bytes) was cut short; set aside in " + str(rejected) in m for m in messages(caplog)
    )
    assert rejected.read_bytes() == b'{"v": 1, "uid": "u-3", "snap\n'
    # the cut tail is gone: the three spawns' lines, then the lines saying they are stored
    held = spool.read_bytes().splitlines()
    assert len(held) == 6 and b'"u-3"' not in spool.read_bytes() and spool.read_bytes().endswith(b"\n")
    assert held[3:] == [b'{"v":1,"stored":"%s"}' % uid.encode() for uid in (stored_uid, "u-1", "u-2")]
    store.close()
    assert spool.read_bytes() == b""  # all stored: cut to nothing
    assert spool_events.count("skipped") == 1
    assert spool_events.count("replayed") == 2  # the stored one was found, not stored again


def test_a_full_spool_is_said_once_counted_each_time_and_the_database_still_tried(
    make_store: Callable[..., SpawnHistory], tmp_path: Path, caplog: pytest.LogCaptureFixture,
    spool_events: list[str],
) -> None:
    store = make_store(spool_max_bytes=100)  # smaller than any spawn's line
    with caplog.at_level(logging.ERROR):
        end_spawn(store, server="a")
        end_spawn(store, server="b")
        store.flush()
    full = [m for m in messages(caplog) if "is full" in m]
    assert len(full) == 1 and str(tmp_path / "h.spool") in full[0] and "spool_max_bytes" in full[0]
    assert spool_events.count("full") == 2
    assert [server for _, server, _ in rows(tmp_path)] == ["a", "b"]


def test_spawns_wait_while_the_database_is_locked_and_are_stored_after(
    make_store: Callable[..., SpawnHistory], tmp_path: Path, caplog: pytest.LogCaptureFixture,
    spool_events: list[str],
) -> None:
    import sqlite3

    store = make_store(retry_seconds=0.1)
    end_spawn(store, server="before")
    store.flush()
    holder = sqlite3.connect(str(tmp_path / "h.sqlite"), timeout=1, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    with caplog.at_level(logging.WARNING):
        end_spawn(store, server="during")
        store.flush(60)  # the write waited for the lock, in vain
        assert store.waiting == 1
        assert b'"server_name":"during"' in (tmp_path / "h.spool").read_bytes()
        holder.execute("COMMIT")
        holder.close()
        end_spawn(store, server="after")
        store.flush()
        until(lambda: store.waiting == 0)  # the retry after retry_seconds stores them
    waits = [m for m in messages(caplog) if "waits in the spool" in m]
    assert waits and "alice/during" in waits[0]
    assert spool_events.count("waiting") == len(waits) >= 1
    assert spool_events.count("replayed") == len(waits)
    assert [server for _, server, _ in rows(tmp_path)] == ["before", "during", "after"]


def test_a_removed_file_is_noticed_and_made_again(
    make_store: Callable[..., SpawnHistory], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = make_store()
    end_spawn(store, server="old")
    store.flush()
    for suffix in ("", "-wal", "-shm"):
        (tmp_path / f"h.sqlite{suffix}").unlink(missing_ok=True)
    with caplog.at_level(logging.WARNING):
        end_spawn(store, server="new")
        store.flush()
    assert [server for _, server, _ in rows(tmp_path)] == ["new"]
    assert any(f"the spawn history file {tmp_path / 'h.sqlite'} was removed; opening it anew" in m for m in messages(caplog))


def test_a_file_that_cannot_be_written_is_refused_with_what_to_fix(
    make_store: Callable[..., SpawnHistory], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    if not chattr_works(tmp_path):
        pytest.skip("chattr +i does not work here (needs root and a file system with attributes)")
    first = make_store()
    assert first.available
    first.close()  # no connection holds the files any more
    path = tmp_path / "h.sqlite"
    subprocess.run(["chattr", "+i", str(path)], check=True)
    try:
        with caplog.at_level(logging.ERROR):
            store = make_store()
            assert not store.available
            end_spawn(store)
            store.flush()
        said = [m for m in messages(caplog) if "cannot be used" in m]
        assert len(said) == 1
        assert f"the file {path} cannot be written by the hub" in said[0] and "chattr -i" in said[0]
        assert (tmp_path / "h.spool").read_bytes().count(b"\n") == 1  # the spawn waits there
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


@pytest.mark.parametrize(
    ("fstype", "setting", "mode"),
    [
        ("ext4", "auto", "wal"),
        ("nfs4", "auto", "delete"),
        ("cifs", "auto", "delete"),
        ("fuse.sshfs", "auto", "delete"),
        ("nfs4", "wal", "wal"),
        ("ext4", "delete", "delete"),
    ],
)
def test_the_journal_mode_follows_the_file_system(
    fstype: str, setting: str, mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mounts = tmp_path / "mounts"
    mounts.write_text(f"/dev/vda / ext4 rw 0 0\nserver:/export {tmp_path} {fstype} rw 0 0\n")
    import richprogress.history.database as database

    real = database.mount_fstype
    monkeypatch.setattr(database, "mount_fstype", lambda path: real(path, str(mounts)))
    path = tmp_path / "h.sqlite"
    assert journal_mode_for(str(path), setting) == mode
    engine = make_engine(f"sqlite:///{path}", setting)
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == mode
    engine.dispose()


def test_the_mount_of_a_path_is_its_longest_mount_point(tmp_path: Path) -> None:
    mounts = tmp_path / "mounts"
    mounts.write_text("/dev/vda / ext4 rw 0 0\nsrv:/a /srv nfs4 rw 0 0\nsrv:/b /srv/my\\040hub cifs rw 0 0\n")
    assert mount_fstype("/srv/x/h.sqlite", str(mounts)) == "nfs4"
    assert mount_fstype("/srv/my hub/h.sqlite", str(mounts)) == "cifs"
    assert mount_fstype("/srvx/h.sqlite", str(mounts)) == "ext4"


@pytest.mark.parametrize(
    ("trait", "value", "words"),
    [
        ("spool_max_bytes", -1, "c.SpawnHistory.spool_max_bytes = -1: a whole number of bytes, 0 (no spool) or more"),
        ("sqlite_journal_mode", "fast", "sqlite_journal_mode"),
    ],
)
def test_bad_spool_and_journal_settings_are_refused(trait: str, value: object, words: str) -> None:
    with pytest.raises(TraitError, match=re.escape(words)):
        SpawnHistory(**{trait: value})


def test_the_metric_counts_the_spools_events_from_zero() -> None:
    from prometheus_client import CollectorRegistry

    from richprogress.metrics import SPOOL_EVENTS as METRIC_EVENTS
    from richprogress.metrics import SpawnMetrics, count_spool_event

    assert METRIC_EVENTS == SPOOL_EVENTS
    registry = CollectorRegistry()
    metrics = SpawnMetrics(registry)
    for event in SPOOL_EVENTS:
        assert registry.get_sample_value("richprogress_store_spool_events_total", {"event": event}) == 0
    count_spool_event("full", metrics)
    count_spool_event("nonsense", metrics)
    assert registry.get_sample_value("richprogress_store_spool_events_total", {"event": "full"}) == 1
    assert registry.get_sample_value("richprogress_store_spool_events_total", {"event": "other"}) == 1
