"""Databases as older releases of the spawn history left them, for the migration tests.

``as_old_schema(url, version)`` turns a database the current store wrote into one of
schema ``version`` (1, 2 or 3), as those releases made it: for 3, no account columns
(``user_id``, ``user_created``); for 1 and 2 also names as ``VARCHAR(255)`` found
by the ``(user_name, server_name, id)`` index, none of the later columns (the name keys,
a unique spawn id), and for version 1 no ``steps`` column. Rows keep their ids and names (names of more than 255 characters
must not be there: the old releases cut them). SQLite and PostgreSQL.
"""

from __future__ import annotations

import sqlalchemy as sa


def as_old_schema(url: str, version: int) -> None:
    """Make the database at ``url`` one of schema ``version`` (1, 2 or 3)."""
    assert version in (1, 2, 3)
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            columns = {c["name"] for c in sa.inspect(conn).get_columns("richprogress_spawns")}
            for column in ("user_id", "user_created"):  # schema 4's accounts
                if column in columns:
                    conn.execute(sa.text(f"ALTER TABLE richprogress_spawns DROP COLUMN {column}"))
            if version == 3:
                conn.execute(
                    sa.text("UPDATE richprogress_meta SET value = '3' WHERE key = 'schema_version'")
                )
                return
            if "spawn_uid" in columns:  # a later schema's unique spawn id: not in 1 or 2
                conn.execute(sa.text("DROP INDEX ux_rp_spawns_uid"))
                conn.execute(sa.text("ALTER TABLE richprogress_spawns DROP COLUMN spawn_uid"))
            conn.execute(sa.text("DROP INDEX ix_rp_spawns_owner"))
            for column in ("user_key", "server_key"):
                conn.execute(sa.text(f"ALTER TABLE richprogress_spawns DROP COLUMN {column}"))
            if conn.dialect.name == "postgresql":
                for column in ("user_name", "server_name"):
                    conn.execute(
                        sa.text(f"ALTER TABLE richprogress_spawns ALTER COLUMN {column} TYPE VARCHAR(255)")
                    )
            conn.execute(
                sa.text("CREATE INDEX ix_rp_spawns_server ON richprogress_spawns (user_name, server_name, id)")
            )
            if version < 2:
                conn.execute(sa.text("ALTER TABLE richprogress_spawns DROP COLUMN steps"))
            conn.execute(
                sa.text("UPDATE richprogress_meta SET value = :v WHERE key = 'schema_version'"),
                {"v": str(version)},
            )
    finally:
        engine.dispose()


def copy_row_as(url: str, spawn_id: int, user_name: str) -> int:
    """Copy stored spawn ``spawn_id`` as a spawn of ``user_name`` (in an old schema, whose
    rows have no name keys); the copy's id."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            columns = [
                c for c in sa.inspect(conn).get_columns("richprogress_spawns") if c["name"] != "id"
            ]
            names = ", ".join(c["name"] for c in columns)
            picked = ", ".join(":user" if c["name"] == "user_name" else c["name"] for c in columns)
            conn.execute(
                sa.text(f"INSERT INTO richprogress_spawns ({names}) SELECT {picked} FROM richprogress_spawns WHERE id = :id"),
                {"user": user_name, "id": spawn_id},
            )
            return int(conn.execute(sa.text("SELECT MAX(id) FROM richprogress_spawns")).scalar_one())
    finally:
        engine.dispose()
