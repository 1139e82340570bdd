"""The spawn history's tables, and the schema version that lets a later release migrate them.

Define the two tables and bring a database to ``SCHEMA_VERSION``.

- ``richprogress_meta`` holds one row per key; ``schema_version`` is the version of the
  tables below. A database without it is new: the tables are created and the version set.
- ``richprogress_spawns`` holds one row per finished spawn. What pages filter and sort by
  is in columns (with the indexes those queries use); the rest (records, steps, facts) is
  one column of zlib-compressed JSON, read only when a single spawn is shown. Since
  version 2, a ready spawn's seconds per step are also a small JSON column (``steps``),
  which the typical start times load at hub start.
- **Identities whole.** Since version 3 a user's and a server's name are kept whole (no
  length limit) and found by ``user_key`` and ``server_key``, the SHA-256 of each name
  (``rows.identity_key``): a bounded, indexable value that two different names never
  share, so a name cut to fit a column can no longer match another user's name.
  Version 3 also gives each row its spawn's id (``spawn_uid``, unique), so a spawn stored
  again from the spool after a crash or an outage is found instead of stored twice.
- **Accounts, not names.** Since version 4 each row holds the account that made it
  (``user_id``: JupyterHub's ``orm.User.id``, and ``user_created``: when that account was
  made, as ``rows.Account`` tells why), so a user deleted and made again under the same
  name does not read the old account's spawns. Older rows have neither: only admins see
  them.

Upgrades: a release that changes the tables raises ``SCHEMA_VERSION`` and adds a function
to ``MIGRATIONS`` that takes a connection from version N to N + 1 (in one transaction).
``ensure_schema`` runs the missing steps in order at the first use after the upgrade. A
database newer than this code is refused (the store then keeps to memory) rather than
written with an old layout.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import (
    Column,
    DateTime,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    select,
    text,
)
from sqlalchemy.engine import Connection, Engine

#: the version of the tables this code writes
SCHEMA_VERSION = 4

#: versions 1 and 2 cut names to this many characters: a name this long may be the
#: start of a longer one
OLD_NAME_LIMIT = 255

metadata = MetaData()

meta_table = Table(
    "richprogress_meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", String(255), nullable=False),
)

spawns_table = Table(
    "richprogress_spawns",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    # whole names (schema 3; versions 1 and 2 cut them to 255 characters)
    Column("user_name", Text, nullable=False),
    Column("server_name", Text, nullable=False, default=""),
    # schema 3: SHA-256 (hex) of each name, what reads compare and index by; NULL on a
    # row from before schema 3 whose name may have been cut (no one's reads find it)
    Column("user_key", String(64)),
    Column("server_key", String(64)),
    # schema 4: the account that made the spawn (rows.Account): JupyterHub's orm.User.id
    # and that account's creation time, naive UTC ISO 8601 to the second; NULL before
    # schema 4 (no account's: admins only)
    Column("user_id", Integer),
    Column("user_created", String(32)),
    # naive UTC datetimes: every database compares them alike
    Column("requested_at", DateTime, nullable=False),
    Column("finished_at", DateTime, nullable=False),
    Column("outcome", String(16), nullable=False),
    Column("profile_slug", String(255)),
    Column("profile_name", String(255)),
    Column("summary", Text),
    Column("hint", Text),
    Column("phase", String(32)),
    Column("record_id", String(255)),
    # the decisive rule's id, or "timeout" / "unknown" for a failure: what the admin page
    # counts by (a small set, never free text)
    Column("cause", String(255)),
    Column("failure_message", Text),
    Column("elapsed", Float),
    # schema 2: seconds per step of a ready spawn, as small JSON ({"scaling": 95.2, ...}),
    # so typical start times load without unpacking payloads (NULL before schema 2)
    Column("steps", Text),
    # schema 3: the spawn's id, made when it ended (a uuid): storing it again is a no-op
    # (NULL before schema 3; NULLs do not collide in a unique index)
    Column("spawn_uid", String(64)),
    # records, steps, facts, dropped, progress: zlib-compressed JSON, read only when one
    # spawn is shown
    Column("payload", LargeBinary, nullable=False),
    # a server's spawns, newest first (lists, the failure page, retention per server)
    Index("ix_rp_spawns_owner", "user_key", "server_key", "id"),
    # the admin page: newest failures (by id, as it pages), newest of one cause, and the
    # counts by cause over a time range, from an index alone: SQLite's planner takes the
    # one in GROUP BY order (without it, it read table rows: 50 ms at 100k spawns),
    # PostgreSQL the one in time order (a range scan)
    Index("ix_rp_spawns_outcome_id", "outcome", "id"),
    Index("ix_rp_spawns_outcome_cause_id", "outcome", "cause", "id"),
    Index("ix_rp_spawns_outcome_cause_time", "outcome", "cause", "finished_at"),
    Index("ix_rp_spawns_outcome_time_cause", "outcome", "finished_at", "cause"),
    # the age limit
    Index("ix_rp_spawns_time", "finished_at"),
    # one row per spawn, whatever the spool replays
    Index("ux_rp_spawns_uid", "spawn_uid", unique=True),
)

def _add_steps_column(conn: Connection) -> None:
    """1 -> 2: the ``steps`` column (typical start times). Rows written before keep NULL;
    the loader unpacks their payload instead, and they age out with ``max_age_days``."""
    conn.execute(text("ALTER TABLE richprogress_spawns ADD COLUMN steps TEXT"))


def _whole_names(conn: Connection) -> None:
    """2 -> 3: names kept whole and found by their keys (``user_key``, ``server_key``).

    The old rows get the keys of their names, except where a name has exactly
    ``OLD_NAME_LIMIT`` characters: it may be a longer name cut, so it is nobody's for
    sure, and its rows get no key (the admin page still lists them; they age out). The
    index by name makes way for one by key, and the name columns become TEXT where the
    database knows lengths (SQLite does not).
    """
    from richprogress.history.rows import identity_key

    conn.execute(text("ALTER TABLE richprogress_spawns ADD COLUMN user_key VARCHAR(64)"))
    conn.execute(text("ALTER TABLE richprogress_spawns ADD COLUMN server_key VARCHAR(64)"))
    pairs = conn.execute(text("SELECT DISTINCT user_name, server_name FROM richprogress_spawns")).all()
    for user, server in pairs:
        if len(user) >= OLD_NAME_LIMIT or len(server) >= OLD_NAME_LIMIT:
            continue
        conn.execute(
            text(
                "UPDATE richprogress_spawns SET user_key = :uk, server_key = :sk "
                "WHERE user_name = :u AND server_name = :s"
            ),
            {"uk": identity_key(user), "sk": identity_key(server), "u": user, "s": server},
        )
    dialect = conn.dialect.name
    if dialect == "mysql":
        conn.execute(text("DROP INDEX ix_rp_spawns_server ON richprogress_spawns"))
        for column in ("user_name", "server_name"):
            conn.execute(text(f"ALTER TABLE richprogress_spawns MODIFY {column} TEXT NOT NULL"))
    else:
        conn.execute(text("DROP INDEX ix_rp_spawns_server"))
        if dialect == "postgresql":
            for column in ("user_name", "server_name"):
                conn.execute(text(f"ALTER TABLE richprogress_spawns ALTER COLUMN {column} TYPE TEXT"))
    conn.execute(
        text("CREATE INDEX ix_rp_spawns_owner ON richprogress_spawns (user_key, server_key, id)")
    )


def _add_spawn_uid(conn: Connection) -> None:
    """2 -> 3: the unique ``spawn_uid`` column (the spool's replays store a spawn once).
    Rows written before keep NULL."""
    conn.execute(text("ALTER TABLE richprogress_spawns ADD COLUMN spawn_uid VARCHAR(64)"))
    conn.execute(text("CREATE UNIQUE INDEX ux_rp_spawns_uid ON richprogress_spawns (spawn_uid)"))


def _to_version_3(conn: Connection) -> None:
    """2 -> 3: names kept whole, and each spawn's id (both came in one release)."""
    _whole_names(conn)
    _add_spawn_uid(conn)


def _add_account(conn: Connection) -> None:
    """3 -> 4: the account that made each spawn (``user_id``, ``user_created``). Rows
    written before keep NULL: no account is sure to be theirs (the name may be a deleted
    account's), so only admins see them; they age out."""
    conn.execute(text("ALTER TABLE richprogress_spawns ADD COLUMN user_id INTEGER"))
    conn.execute(text("ALTER TABLE richprogress_spawns ADD COLUMN user_created VARCHAR(32)"))


#: step N -> N + 1, run in order by ``ensure_schema``
MIGRATIONS: dict[int, Callable[[Connection], None]] = {
    1: _add_steps_column,
    2: _to_version_3,
    3: _add_account,
}


class SchemaTooNew(RuntimeError):
    """The database was written by a newer richprogress; we do not touch it."""


def stored_version(conn: Connection) -> int | None:
    """The schema version recorded in the database, or None for a database without ours."""
    if not conn.dialect.has_table(conn, "richprogress_meta"):
        return None
    value = conn.execute(
        select(meta_table.c.value).where(meta_table.c.key == "schema_version")
    ).scalar()
    return int(value) if value is not None else None


def ensure_schema(engine: Engine) -> int:
    """Create the tables on first use, or migrate them to ``SCHEMA_VERSION``; the version."""
    with engine.begin() as conn:
        version = stored_version(conn)
        if version is None:
            metadata.create_all(conn)
            conn.execute(meta_table.insert().values(key="schema_version", value=str(SCHEMA_VERSION)))
            return SCHEMA_VERSION
        if version > SCHEMA_VERSION:
            raise SchemaTooNew(
                f"the spawn history database has schema version {version}; this richprogress "
                f"knows versions up to {SCHEMA_VERSION}: upgrade richprogress"
            )
        while version < SCHEMA_VERSION:
            MIGRATIONS[version](conn)
            version += 1
            conn.execute(
                meta_table.update()
                .where(meta_table.c.key == "schema_version")
                .values(value=str(version))
            )
        return version
