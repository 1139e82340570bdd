"""The questions the pages ask the spawn history, as queries on one database connection.

Read stored spawns. Each function takes an open SQLAlchemy
connection and returns plain dicts (``rows.full_spawn`` for one spawn shown whole,
``rows.summary_of`` for lists); none knows of memory, threads or outages
(``SpawnHistory`` wraps them with those). Every query is served by an index of
``schema.spawns_table``: per server (user key, server key, id), by outcome and time, by
id. A user's or server's rows are found by the keys of the whole names and the whole
names themselves (``owned_by``): never by a name cut to fit a column. The reads of one
user's spawns take the ``account`` asking (``rows.Account``): only the rows that account
made; ``None`` (an admin) every row of the name, a deleted account's and the rows stored
before accounts were (schema 4) included.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, case, false, func, select
from sqlalchemy.engine import Connection

from richprogress.history.rows import (
    SUMMARY_COLUMNS,
    Account,
    full_spawn,
    identity_key,
    naive_utc,
    step_totals,
    summary_of,
)
from richprogress.history.schema import spawns_table

__all__ = [
    "cause_counts_since",
    "get_spawn",
    "last_by_server",
    "last_spawn",
    "list_spawns",
    "outcome_counts_since",
    "owned_by",
    "ready_seconds_since",
    "recent_failures",
    "typical_summaries",
]

t = spawns_table
#: the columns a summary is made of
_summary = [t.c[c] for c in SUMMARY_COLUMNS]


def owned_by(user: str, server: str | None = None, account: Account | None = None) -> ColumnElement[bool]:
    """The rows of ``user`` (of its ``server`` when given), by key (the index) and by
    whole name; of those, only the ones ``account`` made when given (an account the hub
    does not know, id None, made none)."""
    where = [t.c.user_key == identity_key(user), t.c.user_name == user]
    if server is not None:
        where += [t.c.server_key == identity_key(server), t.c.server_name == server]
    if account is not None:
        if account.id is None:
            return false()
        where.append(t.c.user_id == account.id)
        # an account the hub keeps no creation time of matches rows without one
        where.append(
            t.c.user_created.is_(None) if account.created is None else t.c.user_created == account.created
        )
    return and_(*where)


def last_spawn(
    conn: Connection, user: str, server: str, account: Account | None = None
) -> dict[str, Any] | None:
    """The server's last stored spawn (full) that ``account`` made (None: any), or None."""
    row = (
        conn.execute(
            select(t)
            .where(owned_by(user, server, account))
            .order_by(t.c.id.desc())
            .limit(1)
        )
        .mappings()
        .first()
    )
    return full_spawn(dict(row)) if row is not None else None


def last_by_server(
    conn: Connection, user: str, limit: int, account: Account | None = None
) -> dict[str, dict[str, Any]]:
    """The last stored spawn (summary) of each of a user's servers (at most ``limit``
    servers) that ``account`` made (None: any), by server name."""
    latest = (
        select(t.c.server_key, func.max(t.c.id).label("id"))
        .where(owned_by(user, None, account))
        .group_by(t.c.server_key)
        .limit(limit)
        .subquery()
    )
    rows = conn.execute(select(*_summary).join(latest, t.c.id == latest.c.id)).mappings()
    return {r["server_name"]: summary_of(dict(r)) for r in rows}


def list_spawns(
    conn: Connection,
    user: str,
    server: str,
    *,
    limit: int,
    before: int | None,
    account: Account | None = None,
) -> list[dict[str, Any]]:
    """A server's stored spawns that ``account`` made (None: any), newest first
    (summaries); ``before`` pages by id."""
    query = select(*_summary).where(owned_by(user, server, account))
    if before is not None:
        query = query.where(t.c.id < before)
    rows = conn.execute(query.order_by(t.c.id.desc()).limit(limit)).mappings()
    return [summary_of(dict(r)) for r in rows]


def get_spawn(
    conn: Connection, user: str, server: str, spawn_id: int, account: Account | None = None
) -> dict[str, Any] | None:
    """One stored spawn of that server (full) that ``account`` made (None: any), or None
    (another server's id, or another account's spawn, gives None)."""
    row = (
        conn.execute(
            select(t).where(t.c.id == spawn_id, owned_by(user, server, account))
        )
        .mappings()
        .first()
    )
    return full_spawn(dict(row)) if row is not None else None


def recent_failures(
    conn: Connection, *, cause: str | None, limit: int, before: int | None
) -> list[dict[str, Any]]:
    """Failed spawns across users, newest first (summaries), of one ``cause`` or all;
    ``before`` pages by id."""
    query = select(*_summary).where(t.c.outcome == "failed")
    if cause:
        query = query.where(t.c.cause == cause)
    if before is not None:
        query = query.where(t.c.id < before)
    rows = conn.execute(query.order_by(t.c.id.desc()).limit(limit)).mappings()
    return [summary_of(dict(r)) for r in rows]


def _counted_since(
    conn: Connection,
    by: ColumnElement[Any],
    since: datetime,
    also: Sequence[datetime],
    *where: ColumnElement[bool],
) -> list[tuple[Any, tuple[int, ...]]]:
    """Spawns finished since ``since`` grouped ``by`` a column, each group counted since
    ``since`` and since each later moment in ``also``, in one pass over the time index."""
    columns = [func.count()] + [
        func.sum(case((t.c.finished_at >= naive_utc(moment), 1), else_=0)) for moment in also
    ]
    rows = conn.execute(
        select(by, *columns).where(*where, t.c.finished_at >= naive_utc(since)).group_by(by)
    ).all()
    return [(key, tuple(int(n or 0) for n in counts)) for key, *counts in rows]


def cause_counts_since(
    conn: Connection, since: datetime, also: Sequence[datetime] = ()
) -> dict[str, tuple[int, ...]]:
    """Failed spawns by cause (``unknown`` for none), counted since ``since`` and since
    each later moment in ``also``; largest first by the first count."""
    counted = (
        (cause or "unknown", counts)
        for cause, counts in _counted_since(conn, t.c.cause, since, also, t.c.outcome == "failed")
    )
    return dict(sorted(counted, key=lambda item: -item[1][0]))


def outcome_counts_since(
    conn: Connection, since: datetime, also: Sequence[datetime] = ()
) -> dict[str, tuple[int, ...]]:
    """Finished spawns by outcome (ready, failed, stopped), counted since ``since`` and
    since each later moment in ``also``."""
    return {str(outcome): counts for outcome, counts in _counted_since(conn, t.c.outcome, since, also)}


def ready_seconds_since(conn: Connection, since: datetime, limit: int) -> list[float]:
    """How long the newest ``limit`` ready starts since ``since`` took, in seconds
    (newest first)."""
    rows = conn.execute(
        select(t.c.elapsed)
        .where(t.c.outcome == "ready", t.c.finished_at >= naive_utc(since))
        .order_by(t.c.finished_at.desc())
        .limit(limit)
    ).scalars()
    return [float(v) for v in rows if v is not None]


def typical_summaries(conn: Connection, since: datetime, per_profile: int) -> list[dict[str, Any]]:
    """Ready spawns finished since ``since``, the newest ``per_profile`` of each profile:
    what typical start times are computed from (``typical.as_summary`` reads the dicts).

    One query (a window function over the time index); the steps come from the small
    ``steps`` column, and only rows written before schema 2 have their payload unpacked.
    """
    ranked = (
        select(
            t.c.id,
            t.c.finished_at,
            t.c.elapsed,
            t.c.profile_slug,
            t.c.steps,
            func.row_number()
            .over(partition_by=t.c.profile_slug, order_by=t.c.finished_at.desc())
            .label("rank"),
        )
        .where(t.c.outcome == "ready", t.c.finished_at >= naive_utc(since))
        .subquery()
    )
    rows = conn.execute(select(ranked).where(ranked.c.rank <= per_profile)).mappings().all()
    out = [
        {
            "finished_at": r["finished_at"],
            "outcome": "ready",
            "elapsed": r["elapsed"],
            "profile_slug": r["profile_slug"],
            "steps": json.loads(r["steps"]) if r["steps"] else None,
            "id": r["id"],
        }
        for r in rows
    ]
    old = [s["id"] for s in out if s["steps"] is None]
    if old:  # written before schema 2: unpack those payloads only
        steps = _payload_steps(conn, old)
        for s in out:
            if s["steps"] is None:
                s["steps"] = steps.get(s["id"], {})
    return out


def _payload_steps(conn: Connection, ids: list[int]) -> dict[int, Any]:
    """Seconds per step of the spawns ``ids``, from their compressed payloads (500 ids a
    query, within every database's limit of bound parameters)."""
    steps: dict[int, Any] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for spawn_id, payload in conn.execute(select(t.c.id, t.c.payload).where(t.c.id.in_(chunk))):
            steps[spawn_id] = step_totals(json.loads(zlib.decompress(payload)).get("steps") or [])
    return steps
