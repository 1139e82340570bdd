"""The spawn-history store's fixtures and spawns, for every module that tests a store.

Fixtures (a test module takes them as ``clock = history_store.clock`` and so on):

- ``store_url``: parametrized, a SQLite file (``sqlite``) and a real PostgreSQL
  (``postgresql``, the module's throwaway server ``postgres_url``, emptied after each test);
- ``clock``: a ``Clock`` at ``T0`` the test moves (``clock.now = ...``);
- ``make_store(**traits)``: a ``SpawnHistory`` on ``store_url`` and ``clock``, closed after
  the test.

Spawns: ``end_spawn(store, user=..., outcome=..., started=..., seconds=...)`` ends a real
``SpawnTimeline`` through ``spawn_events.spawn_ended`` as the spawner ends it, filled with
``image_not_found_records()`` (what the real formatter made of
``tests/data/image-not-found.events.json``), from ``fake_spawner(user, server, profile)``;
``spool_line(uid, server, user)``: the spool line the writer writes for such a spawn.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import sqlalchemy as sa

from richprogress.history import SpawnHistory, count_spool_with
from richprogress.history.rows import snapshot
from richprogress.history.spool import encode
from richprogress.model.timeline import SpawnTimeline
from richprogress.stream import spawn_end as spawn_events
from richprogress.wording.formatter import EventFormatter
from tests.helpers.paths import DATA
from tests.helpers.postgres import postgres_server

T0 = datetime(2026, 11, 29, 9, 0, 0, tzinfo=timezone.utc)



@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url



@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'history.sqlite'}"
        return
    url = request.getfixturevalue("postgres_url")
    yield url
    engine = sa.create_engine(url)
    with engine.begin() as conn:  # each test starts from an empty database
        conn.execute(sa.text("DROP TABLE IF EXISTS richprogress_spawns, richprogress_meta"))
    engine.dispose()



class Clock:
    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now



@pytest.fixture
def clock() -> Clock:
    return Clock()



@pytest.fixture
def make_store(store_url: str, clock: Clock, tmp_path: Path) -> Iterator[Callable[..., SpawnHistory]]:
    made: list[SpawnHistory] = []

    def make(**traits: Any) -> SpawnHistory:
        traits.setdefault("url", store_url)
        # the test's own spool (PostgreSQL's default is the working folder, shared by tests)
        traits.setdefault("spool_path", str(tmp_path / "history.spool"))
        store = SpawnHistory(clock=clock, **traits)
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()



def image_not_found_records() -> list[dict[str, Any]]:
    events = json.loads((DATA / "image-not-found.events.json").read_text())
    items = events["items"] if isinstance(events, dict) else events
    formatter = EventFormatter()
    return [dict(formatter.format_event(event)) for event in items]



def fake_spawner(
    user: str = "alice",
    server: str = "",
    profile: str = "gpu",
    account: tuple[int, datetime | None] | None = None,
) -> SimpleNamespace:
    """A spawner of ``user``; ``account``: its JupyterHub account (``orm.User``'s id and
    creation time), else a user without one."""
    owner = SimpleNamespace(name=user)
    if account is not None:
        owner.id, owner.created = account
    return SimpleNamespace(
        user=owner,
        name=server,
        namespace="jhub",
        pod_name=f"jupyter-{user}",
        image="quay.io/jupyter/no-such-notebook:2026-11",
        cpu_guarantee=0.5,
        cpu_limit=2.0,
        mem_guarantee="1G",
        mem_limit="4G",
        extra_resource_limits={"nvidia.com/gpu": "1"},
        user_options={"profile": profile},
        profile_list=[{"slug": "cpu", "display_name": "CPU only"}, {"slug": "gpu", "display_name": "One GPU"}],
    )



def end_spawn(
    store: SpawnHistory,
    *,
    user: str = "alice",
    server: str = "",
    outcome: str = "failed",
    started: datetime = T0,
    seconds: float = 30.0,
    records: list[dict[str, Any]] | None = None,
    message: str | None = "",
    account: tuple[int, datetime | None] | None = None,
) -> SpawnTimeline:
    """A spawn that began at ``started`` and ended ``seconds`` later, kept by ``store``;
    ``account``: the user's JupyterHub account (id, creation time), else none."""
    finished = started + timedelta(seconds=seconds)
    timeline = SpawnTimeline(server_name=server, started_at=started, clock=lambda: finished)
    for record in image_not_found_records() if records is None else records:
        timeline.add(record)
    if outcome == "ready":
        timeline.finish("ready")
    elif outcome == "stopped":
        timeline.finish("failed", "The server was stopped before it was ready.")
    else:
        timeline.finish("failed", message)
    unsubscribe = spawn_events.subscribe(store.record)
    try:
        spawn_events.spawn_ended(fake_spawner(user, server, account=account), timeline)
    finally:
        unsubscribe()
    return timeline


def spool_line(uid: str, server: str = "", user: str = "alice") -> bytes:
    """A spool line as the writer writes it, for a failed spawn of ``user``'s ``server``."""
    finished = T0 + timedelta(seconds=30)
    timeline = SpawnTimeline(server_name=server, started_at=T0, clock=lambda: finished)
    for record in image_not_found_records():
        timeline.add(record)
    timeline.finish("failed", "")
    return encode(uid, snapshot(spawn_events.SpawnEnd(fake_spawner(user, server), timeline, "failed")))


@contextmanager
def counted_spool_events() -> Iterator[list[str]]:
    """The spool events counted while the block runs (as the metrics' counter sees them)."""
    seen: list[str] = []
    active = [True]

    def counter(event: str) -> None:
        if active[0]:
            seen.append(event)

    count_spool_with(counter)
    try:
        yield seen
    finally:
        active[0] = False
