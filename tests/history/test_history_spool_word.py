"""The spool keeps its word: what it calls durable is, and nothing in it breaks the hub.

One behaviour at a time, as an admin sees it (the log line, the counter, the rows stored,
the file on disk, the pages' reads):

- a full disk: a write the file system takes only part of, or refuses (``ENOSPC``), or an
  fsync that fails, leaves the file as it was, and the spawn is said not durable; it is
  spooled once there is room, by the next spawn's end or by the retry; the real kernel's
  file-size limit (``RLIMIT_FSIZE``) in a process then SIGKILLed loses nothing it had
  called durable;
- lines read back one at a time, each judged alone: one nested too deep, of the wrong
  shape, or longer than the bound is set aside (``.rejected``), counted and logged, and
  the rest are stored; none of it stays in memory to break a page; a huge line is never
  read whole;
- exactly once across restarts, even for spawns that retention has deleted since.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from richprogress.history import SpawnHistory, timeline_of
from richprogress.history.spool import Spool, decode
from tests.helpers.fault_cases import ROOT
from tests.helpers.history_store import Clock, counted_spool_events, end_spawn, spool_line

#: a database that refuses connections at once: every spawn waits in the spool
DOWN_URL = "postgresql+psycopg2://rp@127.0.0.1:1/rp"


@pytest.fixture
def spool_events() -> Iterator[list[str]]:
    """The spool events counted during the test (as the metrics' counter sees them)."""
    with counted_spool_events() as seen:
        yield seen


@pytest.fixture
def make_store(tmp_path: Path) -> Iterator[Callable[..., SpawnHistory]]:
    made: list[SpawnHistory] = []

    def make(**traits: Any) -> SpawnHistory:
        traits.setdefault("url", f"sqlite:///{tmp_path / 'h.sqlite'}")
        store = SpawnHistory(clock=Clock(), **traits)
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


def stored(tmp_path: Path) -> list[tuple[int, str, str, str]]:
    """(id, user, server, spawn_uid) of every row, in id order."""
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'h.sqlite'}")
    with engine.connect() as conn:
        found = conn.execute(
            sa.text(
                "SELECT id, user_name, server_name, spawn_uid FROM richprogress_spawns ORDER BY id"
            )
        ).all()
    engine.dispose()
    return [tuple(r) for r in found]  # type: ignore[misc]


def messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records]


def until(done: Callable[[], bool], seconds: float = 20.0) -> None:
    """Wait until ``done()`` (a condition, not a guess at how long it takes)."""
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "the condition did not come true"
        time.sleep(0.02)


def servers_in(path: Path) -> list[str]:
    """The server names of the spawns in a spool file, in file order (every line must read)."""
    found = []
    for line in path.read_bytes().splitlines(keepends=True):
        spawn = decode(line)
        if not isinstance(spawn, str):
            found.append(spawn.snapshot["server_name"])
    return found


class FullDisk:
    """``os.write`` and ``os.fsync`` of a disk with ``room`` bytes left (None: plenty): a write
    gets what fits, then ``ENOSPC``, as Linux answers; ``fsync_error`` fails the next fsync."""

    def __init__(self) -> None:
        self.room: int | None = None
        self.fsync_error: int | None = None

    def write(self, fd: int, data: memoryview) -> int:
        if self.room is None:
            return os.write(fd, data)
        if self.room == 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        taken = os.write(fd, data[: self.room])
        self.room -= taken
        return taken

    def fsync(self, fd: int) -> None:
        if self.fsync_error is not None:
            code, self.fsync_error = self.fsync_error, None
            raise OSError(code, os.strerror(code))
        os.fsync(fd)


def spool_on(path: Path, disk: FullDisk, events: list[str], max_bytes: int = 1 << 30) -> Spool:
    return Spool(
        str(path),
        lambda: max_bytes,
        lambda: logging.getLogger("test-spool"),
        events.append,
        write=disk.write,
        fsync=disk.fsync,
    )


def snap_of(server: str) -> dict[str, Any]:
    spawn = decode(spool_line("x", server))
    assert not isinstance(spawn, str)
    return spawn.snapshot


# -- a full disk ------------------------------------------------------------------------------


def test_a_write_the_disk_takes_only_part_of_leaves_no_half_line(tmp_path: Path) -> None:
    disk, events = FullDisk(), []
    path = tmp_path / "h.spool"
    spool = spool_on(path, disk, events)
    assert spool.append("u-1", snap_of("one"))
    before = path.read_bytes()
    disk.room = 1000  # a line is about 7 kB: the file system takes 1000 bytes of it
    assert not spool.append("u-2", snap_of("two"))
    assert path.read_bytes() == before  # cut back to where the line began
    assert events == ["unwritable"]
    disk.room = 0  # refused outright
    assert not spool.append("u-3", snap_of("three"))
    assert path.read_bytes() == before
    disk.room = None  # room again
    assert spool.append("u-4", snap_of("four"))
    assert servers_in(path) == ["one", "four"]  # whole lines only
    assert events == ["unwritable", "unwritable"]


@pytest.mark.parametrize("code", [errno.EIO, errno.ENOSPC])
def test_a_line_whose_fsync_fails_is_taken_back(tmp_path: Path, code: int) -> None:
    disk, events = FullDisk(), []
    path = tmp_path / "h.spool"
    spool = spool_on(path, disk, events)
    disk.fsync_error = code
    assert not spool.append("u-1", snap_of("one"))
    assert path.read_bytes() == b""
    assert events == ["unwritable"]
    assert spool.append("u-2", snap_of("two"))
    assert servers_in(path) == ["two"]


def test_a_write_that_takes_nothing_is_no_endless_loop(tmp_path: Path) -> None:
    path = tmp_path / "h.spool"
    events: list[str] = []
    spool = Spool(
        str(path),
        lambda: 1 << 30,
        lambda: logging.getLogger("test-spool"),
        events.append,
        write=lambda fd, data: 0,
    )
    assert not spool.append("u-1", snap_of("one"))
    assert events == ["unwritable"] and path.read_bytes() == b""


def test_a_spawn_the_full_disk_refused_is_said_not_durable_and_spooled_when_there_is_room(
    make_store: Callable[..., SpawnHistory],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    spool_events: list[str],
) -> None:
    disk = FullDisk()
    store = make_store(url=DOWN_URL, spool_path=str(tmp_path / "h.spool"), retry_seconds=0.1)
    spool = store.writer._spool
    assert spool is not None
    spool._write, spool._fsync = disk.write, disk.fsync  # the hub's spool, on a full disk
    with caplog.at_level(logging.INFO):
        end_spawn(store, server="before")
        store.wait_spooled()
        disk.room = 500
        end_spawn(store, server="full")
        store.wait_spooled()
        assert servers_in(tmp_path / "h.spool") == ["before"]
        said = [m for m in messages(caplog) if "(id " in m and "is not durable" in m]
        assert len(said) == 1 and "alice/full" in said[0] and "waits in memory only" in said[0]
        assert any(
            "cannot write the spawn spool" in m and "No space left on device" in m
            for m in messages(caplog)
        )
        assert spool_events.count("unwritable") == 1
        disk.room = None  # room again: the retry spools it, with no other spawn ending
        until(lambda: servers_in(tmp_path / "h.spool") == ["before", "full"])
        end_spawn(store, server="after")
        store.wait_spooled()
    assert servers_in(tmp_path / "h.spool") == ["before", "full", "after"]
    assert any("alice/full" in m and "is durable now" in m for m in messages(caplog))
    assert spool_events.count("unwritable") == 1  # counted once per spawn, not per try


def test_the_next_spawn_end_spools_the_refused_one_first(
    make_store: Callable[..., SpawnHistory], tmp_path: Path
) -> None:
    disk = FullDisk()
    store = make_store(url=DOWN_URL, spool_path=str(tmp_path / "h.spool"), retry_seconds=3600)
    spool = store.writer._spool
    assert spool is not None
    spool._write = disk.write
    disk.room = 0
    end_spawn(store, server="refused")
    store.wait_spooled()
    disk.room = None
    end_spawn(store, server="next")
    store.wait_spooled()
    assert servers_in(tmp_path / "h.spool") == ["refused", "next"]  # in the order they ended


CHILD = textwrap.dedent(
    """
    import logging, resource, signal, sys, time
    sys.path[:0] = {paths!r}
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    from pathlib import Path
    from richprogress.history import SpawnHistory
    from tests.helpers.history_store import end_spawn

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the limit, write() fails (EFBIG)
    spool = Path({spool!r})
    store = SpawnHistory(url={url!r}, spool_path=str(spool), retry_seconds=0.1)
    end_spawn(store, server="s1")
    store.wait_spooled()
    line = spool.stat().st_size
    # the kernel lets the file grow by one more line and a half, no more
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(2.5 * line), resource.RLIM_INFINITY))
    for server in ("s2", "s3", "s4"):
        end_spawn(store, server=server)
        store.wait_spooled()
    print("full", spool.stat().st_size, line, flush=True)
    sys.stdin.readline()
    resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    for server in ("s5", "s6"):
        end_spawn(store, server=server)
        store.wait_spooled()
    print("done", flush=True)
    time.sleep(600)
    """
)


def test_a_hub_killed_after_a_full_disk_loses_no_spawn_it_called_durable(
    make_store: Callable[..., SpawnHistory], tmp_path: Path, spool_events: list[str]
) -> None:
    spool = tmp_path / "h.spool"
    code = CHILD.format(paths=[str(ROOT)], spool=str(spool), url=DOWN_URL)
    child_log = tmp_path / "child.log"
    with open(child_log, "w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        said, size, line = proc.stdout.readline().split()
        assert said == "full"
        assert int(size) == 2 * int(line)  # s3's half line was cut back; s4 did not fit
        assert servers_in(spool) == ["s1", "s2"]
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "done"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    log = child_log.read_text()
    assert log.count("is not durable") == 2, log[-3000:]
    assert servers_in(spool) == ["s1", "s2", "s3", "s4", "s5", "s6"]
    store = make_store()  # the hub started again, its database back
    store.flush()
    store.wait_spooled()
    store.flush()
    assert [server for _, _, server, _ in stored(tmp_path)] == ["s1", "s2", "s3", "s4", "s5", "s6"]


# -- reading it back ---------------------------------------------------------------------------


def poison_lines() -> dict[str, bytes]:
    """Lines that no spawn of ours is, each as someone could leave it in the file."""
    good = json.loads(spool_line("p", "poison"))
    lots = json.loads(json.dumps(good))
    lots["uid"], lots["snapshot"]["dropped"] = "lots", "lots"
    no_list = json.loads(json.dumps(good))
    no_list["uid"], no_list["snapshot"]["records"] = "no-list", {"a": 1}
    bad_record = json.loads(json.dumps(good))
    bad_record["uid"] = "bad-record"
    bad_record["snapshot"]["records"][0]["count"] = "many"
    deep_inside = json.loads(json.dumps(good))
    deep_inside["uid"] = "deep-inside"
    nest: Any = "x"
    for _ in range(200):  # deep, yet within what the parser reads
        nest = [nest]
    deep_inside["snapshot"]["facts"] = {"n": nest}
    return {
        "nested too deep": b'{"v":1,"uid":"deep","snapshot":' + b"[" * 200_000 + b"\n",
        "dropped lots": json.dumps(lots).encode() + b"\n",
        "records not a list": json.dumps(no_list).encode() + b"\n",
        "a record's count": json.dumps(bad_record).encode() + b"\n",
        "deep inside": json.dumps(deep_inside).encode() + b"\n",
        "not json": b"\x00\xff garbage\n",
    }


def test_every_line_is_judged_alone_and_the_bad_ones_are_set_aside(
    make_store: Callable[..., SpawnHistory],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    spool_events: list[str],
) -> None:
    poison = poison_lines()
    spool = tmp_path / "h.spool"
    spool.write_bytes(
        spool_line("u-1", "one")
        + b"".join(poison.values())
        + spool_line("u-2", "two")
        + spool_line("u-3", "three")
    )
    with caplog.at_level(logging.WARNING):
        store = make_store()
        store.wait_spooled()
        store.flush()
    assert [(server, uid) for _, _, server, uid in stored(tmp_path)] == [
        ("one", "u-1"),
        ("two", "u-2"),
        ("three", "u-3"),
    ]
    said = [m for m in messages(caplog) if "cannot be read" in m]
    assert [m.split(": ", 2)[2].split(" cannot")[0] for m in said] == [
        f"line {n}" for n in range(2, 8)
    ]
    assert "nested too deep" in said[0] and "dropped is not a count" in said[1]
    assert all(m.endswith(f"set aside in {spool}.rejected") for m in said)
    assert spool_events.count("skipped") == len(poison)
    assert (tmp_path / "h.spool.rejected").read_bytes() == b"".join(poison.values())
    assert b'"poison"' not in spool.read_bytes()  # the spool no longer holds them
    # nothing of them stays in memory for the pages: the server's reads answer
    assert store.last_spawn("alice", "poison") is None
    assert store.list_spawns("alice", "poison") == []
    assert timeline_of(store.last_spawn("alice", "two") or {}).outcome == "failed"
    store.close()
    assert spool.read_bytes() == b""  # all stored: cut at close
    # a second start reads nothing bad again
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        again = make_store()
        again.wait_spooled()
    assert not [m for m in messages(caplog) if "cannot be read" in m]


def test_a_line_longer_than_the_bound_is_skipped_without_being_read_whole(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spool = tmp_path / "h.spool"
    huge = 24 * 1024 * 1024
    with open(spool, "wb") as f:
        f.write(spool_line("u-1", "one"))
        f.write(b'{"v":1,"uid":"huge","snapshot":{"pad":"')
        f.write(b"x" * huge)
        f.write(b'"}}\n')
        f.write(spool_line("u-2", "two"))
    events: list[str] = []
    bound = 1024 * 1024
    reader = Spool(
        str(spool), lambda: bound, lambda: logging.getLogger("test-spool"), events.append
    )
    with caplog.at_level(logging.WARNING):
        tracemalloc.start()
        try:
            spawns = reader.load()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert [s.snapshot["server_name"] for s in spawns] == ["one", "two"]
    # a few times the bound (the reader's buffers), whatever the line's size
    assert peak < 6 * bound, f"loading took {peak / 1e6:.1f} MB for a {huge / 1e6:.0f} MB line"
    assert events == ["skipped"]
    assert any(
        f"line 2 ({huge + 43} bytes) is longer than its bound ({bound} bytes); skipped" in m
        for m in messages(caplog)
    )
    assert not (tmp_path / "h.spool.rejected").exists()  # too big to keep
    assert spool.stat().st_size < 2 * len(spool_line("u-1", "one")) + 100  # rewritten without it


def test_a_spool_past_its_bound_is_read_only_up_to_it(tmp_path: Path) -> None:
    spool = tmp_path / "h.spool"
    lines = [spool_line(f"u-{n}", f"s{n}") for n in range(1, 6)]
    spool.write_bytes(b"".join(lines))
    events: list[str] = []
    bound = sum(map(len, lines[:3]))
    reader = Spool(
        str(spool), lambda: bound, lambda: logging.getLogger("test-spool"), events.append
    )
    assert [s.uid for s in reader.load()] == ["u-1", "u-2", "u-3"]
    assert events == ["skipped", "skipped"]
    assert (tmp_path / "h.spool.rejected").read_bytes() == lines[3] + lines[4]


# -- exactly once across restarts ----------------------------------------------------------------


def test_a_restart_does_not_store_again_what_retention_deleted(
    make_store: Callable[..., SpawnHistory], tmp_path: Path
) -> None:
    first = make_store(keep_per_server=2)
    for _ in range(3):
        end_spawn(first)
    first.flush()
    before = stored(tmp_path)
    assert len(before) == 2  # the oldest went to retention
    # a hub killed now (no close: the spool keeps its lines), started twice more
    for _ in range(2):
        again = make_store(keep_per_server=2)
        again.wait_spooled()
        again.flush()
        assert stored(tmp_path) == before  # the same rows, the same ids


def test_a_clean_stop_cuts_the_spool_and_a_restart_stores_nothing_again(
    make_store: Callable[..., SpawnHistory], tmp_path: Path
) -> None:
    first = make_store()
    for server in ("a", "b", "c"):
        end_spawn(first, server=server)
    first.close()
    assert (tmp_path / "h.spool").read_bytes() == b""
    rows_before = stored(tmp_path)
    again = make_store()
    again.wait_spooled()
    again.flush()
    assert stored(tmp_path) == rows_before and len(rows_before) == 3
