"""Typical start times loaded from the real spawn-history store (SQLite and PostgreSQL).

The store's ``typical_summaries`` is the typical-time cache's loader at hub start: only
ready spawns within the window, the newest N per profile, with their seconds per step from
the ``steps`` column (schema 2), or from the payload for rows written before it. Spawns are
ended through ``spawn_events.spawn_ended`` as the spawner ends them; time is a clock.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import sqlalchemy as sa

from richprogress.history import SpawnHistory
from richprogress.history.schema import SCHEMA_VERSION
from richprogress.typical.cache import TypicalCache, TypicalTimes
from richprogress.typical.words import usually_ready
from tests.helpers import history_store as stored
from tests.helpers.history_store import T0, Clock
from tests.helpers.old_schema import as_old_schema
from tests.helpers.typical_store import end, fill

# the store's fixtures (a SQLite file, and a throwaway PostgreSQL), shared with its tests
postgres_url = stored.postgres_url
store_url = stored.store_url
clock = stored.clock
make_store = stored.make_store


def cache_of(store: SpawnHistory, clock: Clock, **settings: Any) -> TypicalCache:
    times = TypicalTimes(**settings)
    cache = TypicalCache(
        lambda: store.typical_summaries(clock.now - times.window, times.max_samples),
        settings=times,
        clock=clock,
    )
    cache.reload()
    return cache


def test_the_loader_reads_ready_spawns_in_the_window_newest_per_profile(
    make_store: Callable[..., SpawnHistory], clock: Clock
) -> None:
    store = make_store(keep_per_server=5)
    clock.now = T0 + timedelta(days=1)
    known = fill(store, clock)

    rows = store.typical_summaries(clock.now - timedelta(days=14), 5)
    by_profile: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_profile.setdefault(row["profile_slug"], []).append(row)
    # no failures, nothing outside the window, at most 5 per profile, the newest ones
    assert sorted(len(v) for v in by_profile.values()) == [5, 5]
    assert sorted(r["elapsed"] for r in by_profile["gpu"]) == [130.0, 140.0, 150.0, 160.0, 170.0]
    newest = [r for r in by_profile["gpu"] if r["elapsed"] == 170.0]
    assert newest[0]["steps"] == known["steps"] != {}

    cache = cache_of(store, clock)
    gpu = cache.get("gpu")
    assert gpu is not None and gpu["samples"] == 8 and gpu["source"] == "history"
    assert usually_ready(gpu) == "Usually ready in about 2 min (9 in 10 within 3 min)"
    assert cache.get("cpu") is not None and cache.get("nope") is None


def test_rows_written_before_schema_2_are_read_from_their_payload(
    make_store: Callable[..., SpawnHistory], clock: Clock, store_url: str
) -> None:
    first = make_store()
    clock.now = T0 + timedelta(days=1)
    known = fill(first, clock)
    first.close()
    # make it a database as schema 1 wrote it: no steps column (nor schema 3's name keys)
    as_old_schema(store_url, 1)

    store = make_store()
    rows = store.typical_summaries(clock.now - timedelta(days=14), 500)
    assert len(rows) == 14
    newest = [r for r in rows if r["profile_slug"] == "gpu" and r["elapsed"] == 170.0]
    assert newest[0]["steps"] == known["steps"] != {}
    engine = sa.create_engine(store_url)
    with engine.connect() as conn:
        version = conn.execute(sa.text("SELECT value FROM richprogress_meta WHERE key = 'schema_version'")).scalar()
    engine.dispose()
    assert version == str(SCHEMA_VERSION)


def test_a_background_load_keeps_spawns_that_ended_meanwhile(
    make_store: Callable[..., SpawnHistory], clock: Clock
) -> None:
    store = make_store()
    clock.now = T0 + timedelta(days=1)
    fill(store, clock)
    times = TypicalTimes(expected={"*": {"total": 600}})
    cache = TypicalCache(
        lambda: store.typical_summaries(clock.now - times.window, times.max_samples),
        settings=times,
        clock=clock,
        background=True,
    )
    # the first look does not wait for the database: configured times until it is loaded
    first = cache.get("gpu")
    assert first is not None
    cache.wait_loaded(10)
    got = cache.get("gpu")
    assert got is not None and got["source"] in ("history", "history+config")
    assert got["samples"] == 8


def test_setup_makes_the_store_the_hubs_loader(tmp_path: Any, monkeypatch: Any) -> None:
    """``richprogress.setup(c)`` wires the store as the hub cache's loader; the loader
    reads the store of the spawners' config with the cache's settings."""
    from traitlets.config import Config

    import richprogress
    from richprogress import history
    from richprogress.typical import cache as typical_cache

    monkeypatch.setattr(typical_cache, "_default_cache", None)
    monkeypatch.setattr(history, "_current", None)
    c = Config()
    c.SpawnHistory.url = f"sqlite:///{tmp_path / 'h.sqlite'}"
    c.TypicalTimes.max_samples = 3
    richprogress.setup(c)
    cache = typical_cache.default_cache(c)  # as typical_for_spawner calls it
    assert cache.loader is history.typical_loader and cache.background

    store = history.history_for(c)
    now = typical_cache.utcnow()
    try:
        for i in range(6):
            end(store, user=f"u{i}", profile="gpu", started=now - timedelta(minutes=60 - i), seconds=60.0 + i, subscribed=True)
        store.flush()
        rows = history.typical_loader()
        assert sorted(r["elapsed"] for r in rows) == [63.0, 64.0, 65.0]
    finally:
        store.close()
        monkeypatch.setattr(history, "_current", None)
