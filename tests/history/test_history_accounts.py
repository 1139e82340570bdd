"""Whose spawns a store read gives: the account that made them, not the user name, on a
SQLite file and a real PostgreSQL; and text no database keeps, replaced before a spawn is
stored.

A user deleted and made again under the same name is another JupyterHub account (on
JupyterHub's SQLite database it may even get the same ``orm.User.id``: the last test shows
it with JupyterHub's own tables). Spawns are real ``SpawnTimeline``s ended as the spawner
ends them (``tests.helpers.history_store``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime

import pytest
import sqlalchemy as sa

from richprogress.history import SpawnHistory
from richprogress.history.rows import Account, account_of
from tests.helpers import history_store as stored
from tests.helpers.history_store import end_spawn, image_not_found_records
from tests.helpers.old_schema import as_old_schema

postgres_url = stored.postgres_url
store_url = stored.store_url
clock = stored.clock
make_store = stored.make_store

#: the first account named "alice", and the one made under her name once she was deleted
#: (JupyterHub's SQLite table gave it the same id: only the creation time differs)
OLD = (7, datetime(2026, 11, 1, 8, 0, 0, 123456))
NEW = (7, datetime(2026, 11, 29, 8, 30, 0, 654321))
OLD_ACCOUNT = Account(7, "2026-11-01T08:00:00")
NEW_ACCOUNT = Account(7, "2026-11-29T08:30:00")


def test_a_new_account_of_the_same_name_reads_none_of_the_old_ones_spawns(
    make_store: Callable[..., SpawnHistory],
) -> None:
    store = make_store()
    end_spawn(store, user="alice", account=OLD)
    end_spawn(store, user="alice", server="gpu", account=OLD)
    # before the write: the spawn in memory is the old account's too
    assert store.last_spawn("alice", account=NEW_ACCOUNT) is None
    store.flush()
    old = store.last_spawn("alice", account=OLD_ACCOUNT)
    assert old is not None and old["outcome"] == "failed"

    assert store.last_spawn("alice", account=NEW_ACCOUNT) is None
    assert store.list_spawns("alice", account=NEW_ACCOUNT) == []
    assert store.get_spawn("alice", "", old["id"], account=NEW_ACCOUNT) is None
    assert store.last_by_server("alice", account=NEW_ACCOUNT) == {}
    assert asyncio.run(store.read_last_spawn("alice", account=NEW_ACCOUNT)).value is None
    assert asyncio.run(store.read_spawn("alice", "", old["id"], account=NEW_ACCOUNT)).value is None
    assert asyncio.run(store.read_last_by_server("alice", account=NEW_ACCOUNT)).value == {}
    assert asyncio.run(store.read_list_spawns("alice", account=NEW_ACCOUNT)).value == []
    # an account the hub does not know owns nothing
    assert store.list_spawns("alice", account=Account(None, None)) == []
    # an admin (no account) sees both accounts' spawns under the name
    assert set(store.last_by_server("alice", account=None)) == {"", "gpu"}
    assert store.last_spawn("alice", account=None) == old

    end_spawn(store, user="alice", outcome="ready", account=NEW)
    new = store.last_spawn("alice", account=NEW_ACCOUNT)  # from memory, not yet written
    assert new is not None and new["outcome"] == "ready"
    store.flush()
    assert [s["outcome"] for s in store.list_spawns("alice", account=NEW_ACCOUNT)] == ["ready"]
    assert [s["outcome"] for s in store.list_spawns("alice", account=None)] == ["ready", "failed"]
    assert list(store.last_by_server("alice", account=NEW_ACCOUNT)) == [""]


def test_a_spawn_stored_before_accounts_were_is_for_admins_only(
    make_store: Callable[..., SpawnHistory], store_url: str
) -> None:
    """A database of schema 3 gets the account columns; its rows have none, so no account
    reads them, and the admin's views (no account, the failures list) still do."""
    first = make_store()
    end_spawn(first, user="alice", account=OLD)
    first.flush()
    first.close()
    as_old_schema(store_url, 3)

    store = make_store()
    assert store.list_spawns("alice", account=OLD_ACCOUNT) == []
    assert [s["user_name"] for s in store.list_spawns("alice", account=None)] == ["alice"]
    assert [s["user_name"] for s in store.recent_failures()] == ["alice"]
    end_spawn(store, user="alice", account=NEW)
    store.flush()
    assert len(store.list_spawns("alice", account=NEW_ACCOUNT)) == 1
    engine = sa.create_engine(store_url)
    with engine.connect() as conn:
        columns = {c["name"] for c in sa.inspect(conn).get_columns("richprogress_spawns")}
        version = conn.execute(
            sa.text("SELECT value FROM richprogress_meta WHERE key = 'schema_version'")
        ).scalar()
    engine.dispose()
    assert {"user_id", "user_created"} <= columns and version == "4"


@pytest.mark.parametrize("odd", ["\x00", "\ud800", "\udfff"])
def test_text_no_database_keeps_is_replaced_before_the_spawn_is_stored(
    make_store: Callable[..., SpawnHistory], odd: str
) -> None:
    """An image name and a failure message holding a NUL or a lone surrogate (the JSON
    API's "\\ud800"): the spawn is stored, with U+FFFD in their place."""
    store = make_store()
    records = image_not_found_records()
    records[-1] = {
        **records[-1],
        "message": f"The image quay.io/x{odd}y does not exist",
        "raw_message": f"x{odd}y",
    }
    end_spawn(
        store, user="alice", records=records, message=f"Spawn failed: quay.io/x{odd}y", account=NEW
    )
    store.flush()
    assert store.waiting == 0
    spawn = store.last_spawn("alice", account=NEW_ACCOUNT)
    assert spawn is not None and spawn["id"] > 0, "the spawn was not stored"
    assert spawn["failure_message"] == "Spawn failed: quay.io/x\ufffdy"
    assert spawn["records"][-1]["message"] == "The image quay.io/x\ufffdy does not exist"
    assert spawn["records"][-1]["raw_message"] == "x\ufffdy"


def test_jupyterhubs_sqlite_gives_a_deleted_users_id_to_the_next_user() -> None:
    """Why an account is its id and its creation time: JupyterHub's ``users`` table on
    SQLite (its default database) reuses the id of the newest user once deleted."""
    from jupyterhub import orm

    session = orm.new_session_factory("sqlite://")()
    session.add(orm.User(name="bob"))
    first = orm.User(name="alice", created=datetime(2026, 11, 1, 8, 0, 0))
    session.add(first)
    session.commit()
    before = account_of(first)
    session.delete(first)
    session.commit()
    again = orm.User(name="alice", created=datetime(2026, 11, 29, 8, 30, 0))
    session.add(again)
    session.commit()
    after = account_of(again)
    session.close()
    assert before.id == after.id  # the same id...
    assert before != after  # ...and another account
