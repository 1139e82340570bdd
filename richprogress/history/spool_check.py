"""Whether a spawn read back from the spool can be stored and shown: nothing in a spool
file may break the pages.

The spool is a file on disk: a crash, a disk error, a restore from elsewhere or someone
with write access to the hub's volume can put anything in it. A snapshot that cannot be
built into a row, or whose rebuilt timeline cannot be rendered, would sit in memory as a
server's last spawn and make its pages answer 500 until the hub restarts. So each spawn
``Spool.load`` reads is checked here before the writer takes it:

- **its shape**: the keys ``rows.build_row`` and the pages read, with their types (a
  record as ``model.records.EventRecord`` requires), nested at most ``MAX_DEPTH`` deep
  (a spawn's own snapshot is about 4 deep);
- **its use**: the row is built, its timeline rebuilt and rendered as the pages render it
  (``SpawnTimeline.to_dict``, ``story.verdict.decide``), and all of it made JSON.

``checked_row(spawn)`` gives the built row (the writer keeps it, so it is not built twice),
or raises ``ValueError`` saying what is wrong; ``Spool.load`` sets such a line aside.
"""

from __future__ import annotations

import json
from typing import Any

from richprogress.history.rows import build_row, full_spawn, timeline_of
from richprogress.history.spool import SpooledSpawn
from richprogress.story.verdict import decide

__all__ = ["MAX_DEPTH", "checked_row", "snapshot_problem"]

#: how deep a spooled snapshot may nest (dicts and lists)
MAX_DEPTH = 16

_OUTCOMES = ("ready", "failed", "stopped")

#: a record's required keys (``EventRecord``) and what each may hold
_TEXT = (str,)
_TEXT_OR_NONE = (str, type(None))
_RECORD_KEYS: dict[str, tuple[type, ...]] = {
    "id": _TEXT,
    "timestamp": _TEXT_OR_NONE,
    "first_timestamp": _TEXT_OR_NONE,
    "type": _TEXT,
    "severity": _TEXT,
    "reason": _TEXT_OR_NONE,
    "object": (dict,),
    "component": _TEXT_OR_NONE,
    "count": (int,),
    "message": _TEXT,
    "raw_message": _TEXT,
    "rule": _TEXT_OR_NONE,
}


def _depth_problem(value: Any) -> str | None:
    """Whether ``value`` nests deeper than ``MAX_DEPTH`` (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            return f"it nests deeper than {MAX_DEPTH} levels"
        stack.extend((child, depth + 1) for child in children)
    return None


def _record_problem(number: int, record: Any) -> str | None:
    if not isinstance(record, dict):
        return f"its record {number} is not an object"
    for key, kinds in _RECORD_KEYS.items():
        value = record.get(key)
        if not isinstance(value, kinds) or isinstance(value, bool):
            return f"its record {number} has no proper {key!r}"
    return None


def snapshot_problem(snap: dict[str, Any]) -> str | None:
    """What is wrong with a snapshot's shape, or None."""
    problem = _depth_problem(snap)
    if problem:
        return problem
    for key in ("user_name", "server_name"):
        if not isinstance(snap.get(key), str):
            return f"its {key} is not text"
    if snap.get("outcome") not in _OUTCOMES:
        return "its outcome is none of " + ", ".join(_OUTCOMES)
    if not isinstance(snap.get("failure_message"), (str, type(None))):
        return "its failure_message is not text"
    records = snap.get("records")
    if not isinstance(records, list):
        return "its records are not a list"
    for number, record in enumerate(records, 1):
        problem = _record_problem(number, record)
        if problem:
            return problem
    for key in ("dropped", "progress"):
        value = snap.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return f"its {key} is not a count"
    if not isinstance(snap.get("facts"), dict):
        return "its facts are not an object"
    for key, kinds in (
        ("shown_facts", (list, type(None))),
        ("stopped_early", (dict, type(None))),
        ("container_log", (dict, type(None))),
    ):
        if not isinstance(snap.get(key), kinds):
            return f"its {key} has the wrong type"
    return None


def checked_row(spawn: SpooledSpawn) -> dict[str, Any]:
    """The row of a spooled spawn, once its shape is right and its pages render; else
    ``ValueError`` with what is wrong."""
    snap = spawn.snapshot
    problem = snapshot_problem(snap)
    if problem:
        raise ValueError(problem)
    try:
        row = {**build_row(snap), "spawn_uid": spawn.uid}
        timeline = timeline_of(full_spawn({**row, "id": -1}))
        verdict = decide(
            timeline.records(),
            outcome=timeline.outcome,
            failure_message=timeline.failure_message,
            now=timeline.elapsed(),
            stopped_early=timeline.stopped_early is not None,
        )
        json.dumps({**timeline.to_dict(), "verdict": verdict.to_dict()}, default=str)
    except Exception as exc:  # noqa: BLE001 - whatever breaks here would break a page
        raise ValueError(f"its pages cannot be rendered ({type(exc).__name__}: {exc})") from exc
    return row
