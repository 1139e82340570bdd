"""How a timeline row of the failure page reads: its pills, where its long names may
break, its moment and its details, and the rows standing for the hub's first message and
for folded records.

The live page's ``static/rows.js`` and ``static/breaks.js`` mirror the pills and
the breaks; tests/web/test_row_text.py checks that both sides agree. Plain data only: the
templates autoescape, the JS uses text nodes.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from richprogress.model.display import DISPLAY_LIMIT, display_text, format_count, row_word
from richprogress.model.records import SEVERITIES
from richprogress.model.times import (
    format_clock,
    format_utc,
    isoformat_z,
    parse_timestamp,
    row_offset,
)
from richprogress.story.quieted import scale_up_in_hand, shown_as
from richprogress.story.resolved import PROBLEM_SEVERITIES

#: tokens this long or longer that hold one of "-/:." are kept whole between break points
LONG_NAME = 16
_SPLIT_AFTER = re.compile(r"(?<=[/:.])")
_LONG_NAME_CHARS = re.compile(r"[-/:.]")

#: event types the row's colour already says (or that say nothing: our own messages)
QUIET_TYPES = frozenset({"Normal", "Warning", "Custom", ""})

#: KubeSpawner names the user's container "notebook" (kubespawner/objects.py, make_pod, 7.1)
MAIN_CONTAINER = "notebook"


def breakable_parts(text: str) -> list[tuple[str, bool]]:
    """``(text, keep_whole)`` parts: long names split after "/", ":" and ".".

    A name like ``quay.io/jupyter/no-such-notebook:2026-11`` would otherwise wrap at a
    hyphen and read like a typo; its pieces are shown unbroken, each followed by ``<wbr>``.
    """
    parts: list[tuple[str, bool]] = []
    plain = ""
    for token in re.split(r"(\s+)", str(text)):
        if len(token) >= LONG_NAME and _LONG_NAME_CHARS.search(token) and not token.isspace():
            if plain:
                parts.append((plain, False))
            plain = ""
            parts.extend((piece, True) for piece in _SPLIT_AFTER.split(token) if piece)
        else:
            plain += token
    if plain:
        parts.append((plain, False))
    return parts


#: what an image reference (or a similar name) is made of; anything else keeps the sentence whole
_NAME = re.compile(r"[A-Za-z0-9._/:@+-]+")
#: a name worth its own line in a headline: an image reference, a host:port, a path
_REFERENCE = re.compile(r"""["'“]?(?P<ref>[^\s"'“”]{12,}?)["'”]?(?=[.,;:!?)]*(?:\s|$))""")


def headline_parts(text: str) -> tuple[str, str]:
    """``(headline, reference)``: the first long name of a headline (an image reference
    holding "/" or ":") taken out, so the headline names the problem in a few words and the
    name stands on its own line in monospace with a copy button, instead of wrapping
    through large bold text. ``(text, "")`` when there is none, or when the sentence would
    lose its subject. "The image X does not exist." -> ("The image does not exist.", "X")."""
    for match in _REFERENCE.finditer(text):
        ref = match.group("ref")
        if ("/" in ref or ":" in ref) and not ref.endswith(":"):
            if not _NAME.fullmatch(ref):
                # not a name a registry could hold (a hostile "<img ...>" with spaces): the
                # sentence stays whole rather than split in the middle of the odd name
                return text, ""
            start, end = match.span()
            before, after = text[:start].rstrip(), text[end:].lstrip()
            if not before:
                return text, ""
            joiner = "" if not after or after[0] in ".,;:!?)" else " "
            return before + joiner + after, ref
    return text, ""


def main_pod(records: Iterable[Mapping[str, Any]]) -> str | None:
    """The pod most records are about: the user's pod, when the spawner cannot say."""
    counts = Counter(
        (r.get("object") or {}).get("name")
        for r in records
        if (r.get("object") or {}).get("kind") == "Pod" and (r.get("object") or {}).get("name")
    )
    return counts.most_common(1)[0][0] if counts else None


def shown_pills(
    record: Mapping[str, Any], own_pod: str | None, main_container: str | None = MAIN_CONTAINER
) -> dict[str, str]:
    """The pills worth showing on a row: ``type``, ``object``, ``container`` ("" = none).

    The user's own pod and its main container are named once (the facts box), not on every
    row; the type only when the row's colour does not already say it (a custom type).
    """
    obj = record.get("object") or {}
    kind, name = obj.get("kind"), obj.get("name")
    own = kind == "Pod" and own_pod is not None and name == own_pod
    container = obj.get("container") or ""
    type_ = str(record.get("type") or "")
    return {
        "type": "" if type_ in QUIET_TYPES else type_,
        "object": "" if own else " ".join(str(p) for p in (kind, name) if p),
        "container": "" if (own or own_pod is None) and container == main_container else container,
    }


def row_moment(record: Mapping[str, Any], started: datetime | None) -> tuple[float | None, str | None]:
    """The since-spawn seconds and timestamp a row shows: its first occurrence.

    A row stays where its event first arrived while its count grows, so it shows when it
    began (the list then reads in order); the badge says when it last happened. The seconds
    are ``row_offset``'s, one rule for both pages (static/rows.js ``rowMoment``).
    """
    return row_offset(record, started), record.get("first_timestamp") or record.get("timestamp")


def row_floors(
    records: Iterable[Mapping[str, Any]], started: datetime | None, first: float | None = 0.0
) -> dict[str, float | None]:
    """The floor of each record's row: the latest clock of the rows above it (``first``,
    that of the hub's "Server requested" row, for the first one).

    Worked out over every record in arrival order, before any is folded out of view, as the
    live page places its rows: both pages then show each row at the same clock."""
    floors: dict[str, float | None] = {}
    floor = first
    for record in records:
        floors[str(record.get("id"))] = floor
        since = row_offset(record, started)
        if since is not None:
            floor = since if floor is None else max(since, floor)
    return floors


def record_row(
    record: dict[str, Any],
    decisive_id: str | None,
    started: datetime | None = None,
    *,
    floor: float | None = None,
    own_pod: str | None = None,
    show: str = "row",
) -> dict[str, Any]:
    """One timeline row of the failure page (``show``: "row" or "quiet", ``row_shows``).

    ``floor`` is the clock of the row above (``row_floors``): a row never reads earlier than
    it (Kubernetes mixes whole-second and microsecond stamps, so a later event can truncate
    lower). ``own_pod`` is the user's pod, named once in the facts rather than on every row.
    """
    moment_since, stamp = row_moment(record, started)
    since = (
        max(moment_since, floor) if moment_since is not None and floor is not None else moment_since
    )
    moment = parse_timestamp(stamp)
    last = parse_timestamp(record.get("timestamp"))
    severity = record.get("severity")
    severity = severity if severity in SEVERITIES else "info"
    count = int(record.get("count") or 1)
    pills = shown_pills(record, own_pod)
    latest = record.get("since_spawn")
    message = display_text(record.get("message") or record.get("raw_message") or "")
    return {
        "kind": "record",
        "id": record.get("id"),
        "since": since,
        "clock": format_clock(since),
        # the record's own stamp, as the live page's row carries it
        "time_iso": stamp if moment else None,
        # named UTC: the page renders it without the viewer's zone; static/rows.js
        # (showLocalTimes) rewrites it in the viewer's own time, zone named
        "time_text": moment.strftime("%H:%M:%S UTC") if moment else "",
        "time_title": format_utc(stamp),
        "type": display_text(pills["type"], 200),
        "severity": severity,
        # a problem the spawn got past (story.resolved): a quiet row with OVERCOME_PILL
        "overcome": record.get("overcome") is True and severity in PROBLEM_SEVERITIES,
        # the pill says how it went in a word; the event's reason is in the details
        "word": row_word(severity, record.get("reason")),
        "object": display_text(pills["object"], 300),
        "container": display_text(pills["container"], 200),
        "message": message,
        "message_parts": breakable_parts(message),
        "count": count,
        "count_text": format_count(count),
        "details": detail_pairs(record),
        # a repeat that went on: when it last happened (the clock shows when it began); not
        # for an event seen once, whose stamp came before the hub's reading of it
        "last_clock": (
            format_clock(latest)
            if since is not None
            and count > 1
            and isinstance(latest, (int, float))
            and latest > since
            and format_clock(latest) != format_clock(since)
            else ""
        ),
        "count_title": (
            f"happened {count} times, last at {format_clock(latest)}"
            + (f" ({last.strftime('%H:%M:%S')} UTC)" if last else "")
        ),
        "decisive": decisive_id is not None and record.get("id") == decisive_id,
        # a muted one-line row that opens on click (static/rows.js shows it alike)
        "quiet": show == "quiet",
    }


def row_shows(records: Iterable[Mapping[str, Any]], decisive_id: str | None) -> dict[str, str]:
    """How each record shows, by id (``story.quieted.shown_as``): as the live page decides
    once every record arrived (a scale-up quiets the FailedScheduling rows before it too)."""
    listed = list(records)
    scale_up = scale_up_in_hand(listed)
    return {
        str(record.get("id")): shown_as(
            record, scale_up=scale_up, decisive=decisive_id is not None and record.get("id") == decisive_id
        )
        for record in listed
    }


def detail_pairs(record: dict[str, Any]) -> list[tuple[str, str]]:
    """What a row shows when opened (static/row-details.js ``detailPairs`` builds the same on
    the live page): the event's own message, reason, object, component, count, first and
    last time. Values are display text (controls escaped, long text shortened)."""
    if not record.get("reason") and not record.get("component"):
        return []  # no Kubernetes event (the hub's own message): nothing more to show
    obj = record.get("object") or {}
    object_text = "/".join(str(part) for part in (obj.get("kind"), obj.get("name")) if part)
    if obj.get("field_path"):
        object_text += f" ({obj['field_path']})"
    pairs = [
        ("Kubernetes message", record.get("raw_message")),
        ("Reason", record.get("reason")),
        ("Object", object_text),
        ("Component", record.get("component")),
        ("Count", format_count(record.get("count") or 1)),
        ("First", format_utc(record.get("first_timestamp"))),
        ("Last", format_utc(record.get("timestamp"))),
    ]
    return [(label, display_text(value, DISPLAY_LIMIT)) for label, value in pairs if value]


#: JupyterHub's first progress message; both pages show it as the spawn's first row
SERVER_REQUESTED = "Server requested"


def requested_row(started: datetime) -> dict[str, Any]:
    """The "Server requested" row at +0:00, as the live page shows the hub's first message."""
    # the start as the live page has it (its data's ``started``)
    stamp = isoformat_z(started)
    record = {
        "id": f"message:{SERVER_REQUESTED}",
        "timestamp": stamp,
        "type": "",
        "severity": "info",
        "count": 1,
        "message": SERVER_REQUESTED,
        "since_spawn": 0.0,
    }
    return record_row(record, None, started)


def for_viewer(text: str | None, viewer_is_owner: bool) -> str | None:
    """The diagnosis as the viewer reads it: an admin looking at someone else's failure is
    not told about "your server"."""
    if text is None or viewer_is_owner:
        return text
    return text.replace("Your server", "The server").replace("your server", "the server")


def hint_label(viewer_is_owner: bool) -> str:
    """The words before the hint (no colon): the owner is told "What you can do", anyone
    else (an admin, a user the server is shared with) "What the user can do". One label
    for the failure page and the live page's banner."""
    return "What you can do" if viewer_is_owner else "What the user can do"


def fold_row(fold: dict[str, Any]) -> dict[str, Any]:
    """A row standing for records folded out of view."""
    n = fold["folded"]
    what = f"{n} similar events" if fold.get("reason") else f"{n} more events"
    if fold.get("reason"):
        what += f" ({fold['reason']})"
    clocks = [format_clock(fold.get("first")), format_clock(fold.get("last"))]
    return {
        "kind": "fold",
        "text": what + " folded; the plain-text report has them all",
        "clock": " to ".join(c for c in clocks if c) if any(clocks) else "",
        "count": int(fold.get("count") or n),
        # the events the row stands for (the heading's count)
        "events": int(n),
    }


def event_count(rows: Iterable[Mapping[str, Any]]) -> int:
    """The "(N events)" above the rows: the events they show, one per row and a folded row's
    events, but not the hub's own "Server requested" (the live page counts alike)."""
    return sum(
        int(row.get("events") or 0) if row.get("kind") == "fold" else 1
        for row in rows
        if row.get("id") != f"message:{SERVER_REQUESTED}"
    )
