"""A finished spawn as the history keeps it: the snapshot taken when it ends, the database
row built from it, and the dicts and timelines rebuilt from a row.

The shapes of a stored spawn, as pure functions (no database, no threads), shared by the
store (``store.py``) and the pages that read it.

**Whose spawn it is.** A spawn belongs to the account that made it (``Account``: JupyterHub's
``orm.User.id`` and the account's creation time, stored with the row since schema 4), not
to its user name: a user deleted and made again under the same name is another account,
and does not see the old one's failures. A row stored before schema 4 has no account:
it is no user's, and only admins see it (``owned``; the reads' ``owned_by``).

**Text a database keeps.** PostgreSQL refuses a NUL character in text, and no database
takes a lone surrogate (it has no UTF-8 form): one such character in a user-typed image
name or profile would make the database refuse the whole spawn. ``storable`` replaces
them with U+FFFD before a row is built, in the columns and the payload alike.
"""

from __future__ import annotations

import hashlib
import json
import re
import zlib
from datetime import datetime, timezone
from typing import Any, NamedTuple

from richprogress.history.facts import stored_facts
from richprogress.model.timeline import SpawnTimeline
from richprogress.model.times import isoformat_z, parse_timestamp, utcnow
from richprogress.story.causes import failure_cause
from richprogress.story.container_log import stored_container_log
from richprogress.story.diagnosis import diagnose
from richprogress.story.steps import step_durations
from richprogress.stream.spawn_end import SpawnEnd
from richprogress.stream.spawn_facts import fact_pairs, timeline_facts


def naive_utc(moment: datetime) -> datetime:
    """A moment as the database columns hold it: UTC without a zone (every database
    compares those alike)."""
    return moment.astimezone(timezone.utc).replace(tzinfo=None)


def identity_key(name: str) -> str:
    """The key a user's or a server's name is found by (``schema``): SHA-256 of the whole
    name, in hex (64 characters whatever the name's length)."""
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()


class Account(NamedTuple):
    """One JupyterHub account: ``orm.User.id`` and when it was made (naive UTC ISO 8601,
    to the second; None when the hub does not know).

    The id alone is not enough: JupyterHub's SQLite table has no AUTOINCREMENT, so a user
    made after the newest one was deleted gets its id again. The creation time tells the
    two apart (to the second, as every database keeps it alike, whatever it does with
    fractions); ``id`` None is an account the hub does not know, which owns nothing."""

    id: int | None
    created: str | None


def _created_text(moment: Any) -> str | None:
    if not isinstance(moment, datetime):
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment.replace(microsecond=0).isoformat()


def account_of(user: Any) -> Account:
    """The account of a JupyterHub ``User`` (or ``orm.User``): ``Account(None, None)`` for
    an object without a whole-number id (it owns no stored spawn)."""
    orm_user = getattr(user, "orm_user", user)
    user_id = getattr(orm_user, "id", None)
    if not isinstance(user_id, int) or isinstance(user_id, bool):
        return Account(None, None)
    return Account(user_id, _created_text(getattr(orm_user, "created", None)))


def owned(spawn: dict[str, Any], account: Account | None) -> bool:
    """Whether ``account`` made ``spawn`` (a snapshot or a row); ``account`` None is an
    admin's view, which sees every account's. A spawn without an account (stored before
    schema 4) is no account's."""
    if account is None:
        return True
    return (
        account.id is not None
        and spawn.get("user_id") == account.id
        and spawn.get("user_created") == account.created
    )


#: what no database keeps in text: NUL (PostgreSQL refuses it) and lone surrogates
#: (no UTF-8 form; Python's JSON makes them from "\ud800")
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable(value: Any) -> Any:
    """``value`` with every NUL and lone surrogate in its strings (dict keys too, at any
    depth) replaced by U+FFFD, the replacement character: text every database keeps."""
    if isinstance(value, str):
        return UNSTORABLE.sub("\ufffd", value) if UNSTORABLE.search(value) else value
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable(v) for v in value]
    return value


def _aware(moment: Any) -> datetime | None:
    if isinstance(moment, datetime):
        return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment
    if isinstance(moment, str):
        return parse_timestamp(moment)
    return None


#: columns of a spawn's summary (lists), in the order the JSON shows them
SUMMARY_COLUMNS = (
    "id",
    "user_name",
    "server_name",
    "requested_at",
    "finished_at",
    "outcome",
    "profile_slug",
    "profile_name",
    "summary",
    "hint",
    "phase",
    "cause",
    "elapsed",
)


def snapshot(end: SpawnEnd) -> dict[str, Any]:
    """What ``record()`` keeps of a finished spawn, taken on the event loop (cheap: a
    shallow copy of the record list, the spawn's facts)."""
    spawner, timeline = end.spawner, end.timeline
    user = getattr(spawner, "user", None)
    records = timeline.records()
    # the facts kept with the timeline (read at its start, final now): the same the live
    # page and the endpoints show, whatever the spawner is told later
    facts = timeline_facts(spawner, timeline)
    account = account_of(user)
    return {
        "user_name": str(getattr(user, "name", "") or ""),
        # whose spawn it is (schema 4): the account, not the name a new account may reuse
        "user_id": account.id,
        "user_created": account.created,
        "server_name": timeline.server_name or str(getattr(spawner, "name", "") or ""),
        "requested_at": timeline.started_at,
        "finished_at": timeline.finished_at or utcnow(),
        "outcome": end.outcome,
        "failure_message": timeline.failure_message,
        "records": records,
        "dropped": timeline.dropped,
        "progress": timeline.progress,
        "facts": dict(stored_facts(facts)),
        # the facts box of the failure page, as it showed them live (label, value)
        "shown_facts": fact_pairs(facts),
        "stopped_early": timeline.stopped_early,
        # redacted when it was read: stored as it is shown
        "container_log": timeline.container_log,
    }


def build_row(snap: dict[str, Any]) -> dict[str, Any]:
    """The database row of a snapshot: diagnosis, cause, steps and the JSON payload.

    Runs on the writer thread (the diagnosis walks every record). Text no database keeps
    (``storable``) is replaced first, so one odd character never costs the whole spawn."""
    snap = storable(snap)
    records = snap["records"]
    outcome = snap["outcome"]
    message = snap["failure_message"]
    diagnosis: dict[str, Any] | None = dict(diagnose(records, message)) if outcome != "ready" else None
    started, finished = snap["requested_at"], snap["finished_at"]
    steps = [
        {"label": s["label"], "phase": s.get("phase"), "start": s.get("start"), "duration": s.get("duration")}
        for s in step_durations(records, started, finished)
    ]
    facts = snap["facts"]
    cause: str | None
    if outcome == "failed":
        # the same cause the metrics count (story/causes.py), so the admin page and Grafana agree
        cause = failure_cause(records, diagnosis["record_id"] if diagnosis else None, message)[:255]
    else:
        cause = "stopped" if outcome == "stopped" else None
    payload = {
        "records": records,
        "steps": steps,
        "facts": facts,
        "shown_facts": snap.get("shown_facts") or [],
        "stopped_early": snap.get("stopped_early"),
        "dropped": snap["dropped"],
        # the failing container's last lines (story.container_log), or absent; JSON in the
        # payload, so no schema change
        **({"container_log": snap["container_log"]} if snap.get("container_log") else {}),
        "progress": snap["progress"],
    }
    return {
        # whole: a cut name could be another user's (found by key, schema 3)
        "user_name": snap["user_name"],
        "server_name": snap["server_name"],
        "user_key": identity_key(snap["user_name"]),
        "server_key": identity_key(snap["server_name"]),
        # the account that made it (schema 4; a spool line written before has none)
        "user_id": snap.get("user_id"),
        "user_created": snap.get("user_created"),
        "requested_at": naive_utc(started),
        "finished_at": naive_utc(finished),
        "outcome": outcome,
        "profile_slug": (facts.get("profile_slug") or None),
        "profile_name": (facts.get("profile_name") or None),
        "summary": diagnosis["summary"] if diagnosis else None,
        "hint": diagnosis["hint"] if diagnosis else None,
        "phase": diagnosis["phase"] if diagnosis else None,
        "record_id": diagnosis["record_id"] if diagnosis else None,
        "cause": cause,
        "failure_message": message,
        "elapsed": round(max(0.0, (finished - started).total_seconds()), 3),
        # seconds per step of a ready start, for typical start times (schema 2)
        "steps": json.dumps(step_totals(steps), separators=(",", ":")) if outcome == "ready" else None,
        # zlib: the records repeat themselves (names, images, reasons); a third of the size
        "payload": zlib.compress(json.dumps(payload, separators=(",", ":"), default=str).encode(), 6),
    }


def step_totals(steps: list[dict[str, Any]]) -> dict[str, float]:
    """Seconds per step (summed when a step comes back), as ``typical.step_seconds``."""
    totals: dict[str, float] = {}
    for step in steps:
        phase, duration = step.get("phase"), step.get("duration")
        if isinstance(phase, str) and isinstance(duration, (int, float)):
            totals[phase] = round(totals.get(phase, 0.0) + float(duration), 3)
    return totals


def summary_of(row: dict[str, Any]) -> dict[str, Any]:
    """A spawn as the list endpoint and the pages show it (times as ISO 8601 ``Z``)."""
    out = {key: row.get(key) for key in SUMMARY_COLUMNS}
    for key in ("requested_at", "finished_at"):
        moment = _aware(out[key])
        out[key] = isoformat_z(moment) if moment else None
    return out


def full_spawn(row: dict[str, Any]) -> dict[str, Any]:
    """One spawn with its records, steps and facts (``payload`` unpacked)."""
    out = summary_of(row)
    out["record_id"] = row.get("record_id")
    out["failure_message"] = row.get("failure_message")
    # whose it is (``owned``): the pages tell an admin a deleted account's spawn
    out["user_id"] = row.get("user_id")
    out["user_created"] = row.get("user_created")
    payload = row.get("payload")
    data = json.loads(zlib.decompress(payload)) if isinstance(payload, (bytes, memoryview)) else {}
    out.update(data)
    return out


def timeline_of(spawn: dict[str, Any]) -> SpawnTimeline:
    """A finished ``SpawnTimeline`` rebuilt from a stored spawn, for the pages that render
    timelines (the failure page, the timeline JSON and text)."""
    started = _aware(spawn.get("requested_at")) or utcnow()
    finished = _aware(spawn.get("finished_at")) or started
    records = spawn.get("records") or []
    timeline = SpawnTimeline(
        server_name=spawn.get("server_name") or "",
        started_at=started,
        max_records=max(len(records), 1),
        clock=lambda: finished,
    )
    for record in records:
        timeline.add(record)
    timeline.dropped = int(spawn.get("dropped") or 0)
    stopped_early = spawn.get("stopped_early")
    timeline.stopped_early = stopped_early if isinstance(stopped_early, dict) else None
    timeline.container_log = dict(stored_container_log(spawn.get("container_log")) or {}) or None
    outcome = spawn.get("outcome")
    timeline.finish(
        "ready" if outcome == "ready" else "failed", spawn.get("failure_message")
    )
    return timeline
