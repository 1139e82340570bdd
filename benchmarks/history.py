"""Benchmark the spawn history store: what a finished spawn costs, and reading at 100k spawns.

Run from the repository root::

    python benchmarks/history.py            # SQLite and a throwaway PostgreSQL, 100k spawns
    python benchmarks/history.py --quick    # 10k spawns, fewer samples
    python benchmarks/history.py --no-postgres    # or --no-sqlite

Prints, for SQLite (a file in a temporary folder) and PostgreSQL (started like the tests'
one, ``tests/helpers/postgres.py``):

- write: the time ``SpawnHistory.record()`` takes on the event loop per finished spawn
  (snapshot and queue: what the spawn's end waits for), and the writer threads' time per
  spawn (diagnosis, JSON, insert, per-server retention), p50/p99, with the spool (the
  JSON line appended and fsynced first) and without it (``spool_max_bytes = 0``), with
  their ratio, and the spool's append + fsync alone;
- loop: the worst lateness of a 1 ms asyncio ticker while 200 spawns end at 50 per
  second (how long the hub's loop is blocked);
- with N stored spawns (default 100,000: 20,000 users x 5 spawns, a third failed): the
  failure page from the store (last spawn query + rebuilt timeline + page data + Jinja
  render of not_running.html), the admin page (data for the first page, unfiltered and
  filtered by cause, + render), p50/p99 over repeated calls;
- typical start times: the loader's query at hub start and the cache's first
  load, a pending-page view afterwards, and the admin page's day/week words alone;
- disk bytes per stored spawn (SQLite file size / spawns; PostgreSQL's
  ``pg_total_relation_size`` / spawns).

Spawns are real timelines: records the real formatter made from kubespawner #910's
captured events (``invalid-pod-image`` for failures, ``aws-pod-requires-scale-up`` for
successes). Numbers vary from run to run: run it on your own machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).absolute().parents[1]
sys.path.insert(0, str(ROOT))

import sqlalchemy as sa  # noqa: E402
from jinja2 import ChoiceLoader, Environment, FileSystemLoader, PrefixLoader  # noqa: E402
from jupyterhub.app import DATA_FILES_PATH  # noqa: E402
from traitlets.config import Config  # noqa: E402

from richprogress.history import SpawnHistory, history_for  # noqa: E402
from richprogress.history.database import mount_fstype  # noqa: E402
from richprogress.history.rows import identity_key  # noqa: E402
from richprogress.history.schema import spawns_table  # noqa: E402
from richprogress.history.store import build_row, snapshot, timeline_of  # noqa: E402
from richprogress.hub_setup import template_path  # noqa: E402
from richprogress.model.timeline import SpawnTimeline  # noqa: E402
from richprogress.stream.spawn_end import SpawnEnd  # noqa: E402
from richprogress.web import template_helpers  # noqa: E402
from richprogress.web.views.failure import failure_view  # noqa: E402
from richprogress.web.views.history import failures_page_data  # noqa: E402
from richprogress.wording.formatter import EventFormatter  # noqa: E402

PEER = ROOT / "tests" / "data" / "kubespawner-pr910"
T0 = datetime.now(timezone.utc) - timedelta(days=6)


def records_of(name: str) -> list[dict[str, Any]]:
    data = json.loads((PEER / f"{name}.events.json").read_text())
    items = data["items"] if isinstance(data, dict) else data
    formatter = EventFormatter()
    return [dict(formatter.format_event(e)) for e in items]


FAILED = records_of("invalid-pod-image")
READY = records_of("aws-pod-requires-scale-up")


def spawner(user: str, server: str = "") -> SimpleNamespace:
    return SimpleNamespace(
        user=SimpleNamespace(name=user), name=server, namespace="jhub",
        pod_name=f"jupyter-{user}", image="quay.io/jupyter/scipy-notebook:2026-11",
        cpu_guarantee=0.5, cpu_limit=2, mem_guarantee="2G", mem_limit="4G",
        user_options={"profile": "default"}, profile_list=[{"slug": "default", "display_name": "Default"}],
    )


def end(user: str, failed: bool, started: datetime) -> SpawnEnd:
    finished = started + timedelta(seconds=95)
    timeline = SpawnTimeline(started_at=started, clock=lambda: finished)
    for record in FAILED if failed else READY:
        timeline.add(record)
    if failed:
        timeline.finish("failed", "")
    else:
        timeline.finish("ready")
    return SpawnEnd(spawner(user), timeline, "failed" if failed else "ready")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(values: list[float]) -> str:
    return f"p50 {statistics.median(values) * 1000:.2f} ms, p99 {pct(values, 0.99) * 1000:.2f} ms"


def measure_writes(store: SpawnHistory, plain: SpawnHistory, n: int) -> None:
    """``store`` has the spool, ``plain`` (same database) has none; their writes alternate,
    so both see the same database state and the same machine noise."""
    from richprogress.history.spool import Spool

    on_loop: list[float] = []
    for i in range(n):
        e = end(f"w{i}", i % 3 == 0, T0 + timedelta(seconds=i))
        t = time.perf_counter()
        store.record(e)
        on_loop.append(time.perf_counter() - t)
    store.flush(300)
    spooled: list[float] = []
    unspooled: list[float] = []
    for i in range(n):
        for target, times, prefix in ((store, spooled, "v"), (plain, unspooled, "u")):
            snap = snapshot(end(f"{prefix}{i}", i % 3 == 0, T0 + timedelta(seconds=i)))
            t = time.perf_counter()
            target.writer.write_now((f"{prefix}{i}", ""), snap)
            times.append(time.perf_counter() - t)
    folder = tempfile.mkdtemp(prefix="rp-spool-bench-")
    spool = Spool(os.path.join(folder, "bench.spool"), lambda: 1 << 40, lambda: store.log)
    snap = snapshot(end("s", True, T0))
    appends: list[float] = []
    for i in range(n):
        t = time.perf_counter()
        spool.append(f"uid-{i}", snap)
        appends.append(time.perf_counter() - t)
    line = os.path.getsize(spool.path) / n
    spool.close()
    shutil.rmtree(folder, ignore_errors=True)
    ratio = statistics.median(spooled) / statistics.median(unspooled)
    print(f"  write, on the event loop (record): {ms(on_loop)}")
    print(f"  write, on the writer threads, with the spool:    {ms(spooled)}")
    print(f"  write, on the writer threads, without the spool: {ms(unspooled)}")
    print(f"  the spool's cost per spawn: x{ratio:.2f} the write without it (p50); its append + "
          f"fsync alone {ms(appends)}, {line / 1000:.1f} kB per failed spawn's line")


def loop_lateness(store: SpawnHistory | None, n: int = 200, rate: float = 50.0) -> tuple[float, float]:
    """Worst and p99 lateness of a 1 ms ticker while ``n`` spawns end (none: a baseline)."""

    async def run() -> list[float]:
        late: list[float] = []
        done = False

        async def ticker() -> None:
            loop = asyncio.get_running_loop()
            while not done:
                t = loop.time()
                await asyncio.sleep(0.001)
                late.append(max(0.0, loop.time() - t - 0.001))

        tick = asyncio.ensure_future(ticker())
        for i in range(n):
            if store is not None:
                store.record(end(f"lag{i}", i % 3 == 0, T0))
            await asyncio.sleep(1 / rate)
        if store is not None:
            await asyncio.get_running_loop().run_in_executor(None, store.flush, 300)
        done = True
        await tick
        return late

    late = asyncio.run(run())
    return max(late), pct(late, 0.99)


def measure_loop_lag(store: SpawnHistory, n: int = 200, rate: float = 50.0) -> None:
    base_worst, base_p99 = loop_lateness(None, n, rate)
    worst, p99 = loop_lateness(store, n, rate)
    print(
        f"  loop: lateness of a 1 ms ticker while {n} spawns end at {rate:g}/s: "
        f"p99 {p99 * 1000:.2f} ms, worst {worst * 1000:.2f} ms "
        f"(same ticker, no spawns: p99 {base_p99 * 1000:.2f} ms, worst {base_worst * 1000:.2f} ms)"
    )


def populate(store: SpawnHistory, url: str, total: int) -> None:
    """``total`` spawns: users x 5, a third failed, over the last 6 days (bulk insert)."""
    failed_row = build_row(snapshot(end("x", True, T0)))
    ready_row = build_row(snapshot(end("x", False, T0)))
    engine = sa.create_engine(url)
    batch: list[dict[str, Any]] = []
    users = total // 5
    with engine.begin() as conn:
        for i in range(total):
            user, n = f"user{i % users}", i // users
            row = dict(failed_row if (i % 3 == 0) else ready_row)
            started = T0 + timedelta(seconds=i * 5)
            row.update(user_name=user, server_name="", user_key=identity_key(user), requested_at=started.replace(tzinfo=None),
                       finished_at=(started + timedelta(seconds=95)).replace(tzinfo=None),
                       profile_slug=f"profile{i % 10}")  # 10 profiles (typical times)
            if n == 4 and i % users == 7:
                row["cause"] = "timeout"
            batch.append(row)
            if len(batch) == 5000:
                conn.execute(sa.insert(spawns_table), batch)
                batch = []
        if batch:
            conn.execute(sa.insert(spawns_table), batch)
    engine.dispose()


def jinja() -> Environment:
    stock = os.path.join(DATA_FILES_PATH, "templates")
    loader = ChoiceLoader([
        PrefixLoader({"templates": FileSystemLoader([stock])}, "/"),
        FileSystemLoader([template_path(), stock]),
    ])
    # as JupyterHub renders pages: async, so the spawn-history helpers are awaited
    return Environment(loader=loader, autoescape=True, enable_async=True)


def measure_reads(store: SpawnHistory, config: Config, total: int, samples: int) -> None:
    """The failure page as the hub renders it for a server whose spawner holds no timeline
    (after the spawn form or a restart): the real template, helpers and store."""
    env = jinja()
    users = total // 5
    # a user's last spawn is number 4 * users + u (see populate): failed when that is % 3 == 0
    failed_users = [f"user{u}" for u in range(users) if (4 * users + u) % 3 == 0][:samples]
    page = env.get_template("not_running.html")
    data_times, page_times = [], []
    for name in failed_users:
        user = SimpleNamespace(
            name=name, escaped_name=name, json_escaped_name=name, spawners={},
            spawner=SimpleNamespace(options_form=None), settings={"config": config},
        )
        t = time.perf_counter()
        spawn = store.last_spawn(name, "")
        assert spawn is not None and spawn["outcome"] == "failed"
        failure_view(name, "", timeline_of(spawn), spawn["failure_message"], hub_base_url="/hub/", viewer_name=name)
        data_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        html = page.render(
            user=user, server_name="", failed=False, base_url="/hub/", prefix="/",
            login_url="/hub/login", logout_url="/hub/logout",
            static_url=lambda p, include_version=True: "/hub/static/" + p, version_hash="",
            services=[], parsed_scopes=set(), expanded_scopes=set(), xsrf="x", xsrf_token="x",
            spawn_url="/hub/spawn/" + name, richprogress=template_helpers(user),
        )
        page_times.append(time.perf_counter() - t)
        assert 'id="rp-summary"' in html
    print(f"  failure page from the store, data (query + timeline + view): {ms(data_times)}")
    print(f"  failure page from the store, whole page render:             {ms(page_times)}")
    admin_all, admin_cause = [], []
    for _ in range(max(5, samples // 10)):
        t = time.perf_counter()
        failures_page_data(store, cause=None, before=None, limit=50, hub_base_url="/hub/")
        admin_all.append(time.perf_counter() - t)
        t = time.perf_counter()
        failures_page_data(store, cause="timeout", before=None, limit=50, hub_base_url="/hub/")
        admin_cause.append(time.perf_counter() - t)
    print(f"  admin page data, all causes (50 rows + day/week counts + words): {ms(admin_all)}")
    print(f"  admin page data, one cause:                              {ms(admin_cause)}")
    measure_typical(store, config, samples)


def measure_typical(store: SpawnHistory, config: Config, samples: int) -> None:
    """The typical-time loader at hub start (the store's one query + the cache's
    first computation), a page view afterwards, and the admin page's day/week words."""
    from richprogress.model.times import utcnow
    from richprogress.typical.cache import TypicalCache, TypicalTimes
    from richprogress.typical.start_stats import start_stats
    from richprogress.web.views.pending import typical_page_view

    settings = TypicalTimes(config=config)
    loads, rows = [], 0
    for _ in range(3):
        cache = TypicalCache(
            lambda: store.typical_summaries(utcnow() - settings.window, settings.max_samples),
            settings=settings,
        )
        t = time.perf_counter()
        rows = len(store.typical_summaries(utcnow() - settings.window, settings.max_samples))
        query = time.perf_counter() - t
        t = time.perf_counter()
        cache.reload()
        cache.get("profile3")
        loads.append((query, time.perf_counter() - t))
    best = min(loads)
    print(f"  typical times at hub start: the store's query {best[0] * 1000:.0f} ms ({rows} rows: the "
          f"500 newest of each profile), load + first page's numbers {best[1] * 1000:.0f} ms")
    import richprogress.typical.cache as tc

    tc._default_cache = cache
    cache.settings = settings
    spawner = SimpleNamespace(config=config, user_options={"profile": "profile3"})
    views = []
    for _ in range(samples):
        t = time.perf_counter()
        typical_page_view(spawner)
        views.append(time.perf_counter() - t)
    print(f"  per pending-page view (cache lookup + words):  {ms(views)}")
    stats = []
    for _ in range(max(5, samples // 10)):
        t = time.perf_counter()
        start_stats(store, utcnow())
        stats.append(time.perf_counter() - t)
    print(f"  admin page words (day/week starts, usual time, causes): {ms(stats)}")


def run(label: str, url: str, total: int, writes: int, samples: int, disk: Any, folder: str) -> None:
    print(f"\n== {label}")
    config = Config()
    config.SpawnHistory.url = url
    config.SpawnHistory.keep_per_server = 20
    config.SpawnHistory.max_age_days = 0
    config.SpawnHistory.spool_path = os.path.join(folder, f"{label}.spool")
    store = history_for(config)  # the store the pages find, as in a hub
    assert store.available, "database not reachable"
    plain = SpawnHistory(url=url, keep_per_server=20, max_age_days=0, spool_max_bytes=0)
    print(f"  spool: {store.spool_path} (on {mount_fstype(folder)})")
    measure_writes(store, plain, writes)
    plain.close()
    measure_loop_lag(store)
    t = time.perf_counter()
    populate(store, url, total)
    # what autovacuum (PostgreSQL) would have done on a live database by now; SQLite's
    # planner also reads the statistics ANALYZE gathers
    engine = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql("ANALYZE" if url.startswith("sqlite") else "VACUUM ANALYZE richprogress_spawns")
    engine.dispose()
    print(f"  stored {total} spawns in {time.perf_counter() - t:.1f} s (bulk insert, then ANALYZE)")
    measure_reads(store, config, total, samples)
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        count = conn.execute(sa.text("SELECT count(*) FROM richprogress_spawns")).scalar() or 1
        size = disk(conn)
    engine.dispose()
    print(f"  disk: {size / count:.0f} bytes per stored spawn ({count} spawns, {size / 1e6:.1f} MB)")
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--no-sqlite", action="store_true")
    args = parser.parse_args()
    total = 10_000 if args.quick else 100_000
    writes = 100 if args.quick else 500
    samples = 50 if args.quick else 200
    print(f"failed spawn: {len(FAILED)} records; ready spawn: {len(READY)} records")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "history.sqlite"

        def sqlite_disk(conn: Any) -> int:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
            return path.stat().st_size

        if not args.no_sqlite:
            run("SQLite", f"sqlite:///{path}", total, writes, samples, sqlite_disk, folder)
    if not args.no_postgres:
        from tests.helpers.postgres import postgres_server

        def pg_disk(conn: Any) -> int:
            return int(conn.execute(sa.text("SELECT pg_total_relation_size('richprogress_spawns')")).scalar())

        with postgres_server() as url, tempfile.TemporaryDirectory() as folder:
            run("PostgreSQL", url, total, writes, samples, pg_disk, folder)


if __name__ == "__main__":
    main()
