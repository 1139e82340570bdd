"""Time, in one place: the clock, reading and writing timestamps, and saying durations.

- ``utcnow()``: the clock (callers that need a fixed time take it as an argument);
- ``isoformat_z`` / ``parse_timestamp``: the one timestamp format richprogress emits
  (ISO 8601 UTC ending in ``Z``) and reading it back; ``iso_utc``: any Kubernetes time;
- ``format_clock`` (``+2:31``, the since-spawn clock), ``format_duration`` (``2 min 31 s``):
  whole seconds rounded down, like a stopwatch, so no two figures of one spawn disagree by
  the second one of them rounded up (static/clock.js writes them the same way);
- ``row_offset``: the one since-spawn moment of a timeline row, on both pages;
- ``format_utc`` / ``format_utc_time`` / ``utc_text``: times for people, in UTC;
- ``time_ago(moment, now)``: "2 hours ago".

Pure functions but for ``utcnow``; no other richprogress import than the display text.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from richprogress.model.display import clean_str

# -- the clock and timestamps ----------------------------------------------------------------


def utcnow() -> datetime:
    """The clock, in one place so tests can replace it."""
    return datetime.now(timezone.utc)


def isoformat_z(moment: datetime) -> str:
    """ISO 8601 in UTC ending in ``Z``, the one timestamp format richprogress emits."""
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_timestamp(value: str | None) -> datetime | None:
    """Parse a record timestamp (``...Z`` or with an offset); None when absent or unreadable."""
    if not value or not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed


# A timestamp already in the shape we emit: kept as it is (the fast, common path).
_ISO_Z_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z\Z")
#: whether a str is already such a timestamp (a bound method: field reading calls it often)
iso_z_match = _ISO_Z_RE.match


def iso_utc(value: Any) -> str | None:
    """Return ``value`` (str or datetime) as ISO 8601 UTC ending in ``Z``; None if unusable."""
    if isinstance(value, str):
        if _ISO_Z_RE.match(value):
            return value
        text = clean_str(value)
        if not text or len(text) > 64:
            return None
        try:
            parsed = _dt.datetime.fromisoformat(text.strip())
        except ValueError:
            return None
        value = parsed
    if isinstance(value, _dt.datetime):
        try:
            if value.tzinfo is None:
                # Kubernetes times are UTC; a naive datetime came from a client that dropped it.
                value = value.replace(tzinfo=_dt.timezone.utc)
            value = value.astimezone(_dt.timezone.utc)
        except (OverflowError, ValueError):
            return None
        fmt = "%Y-%m-%dT%H:%M:%S.%fZ" if value.microsecond else "%Y-%m-%dT%H:%M:%SZ"
        return value.strftime(fmt)
    return None


# -- durations and times for people --------------------------------------------------------


def finite_seconds(seconds: Any) -> float | None:
    """The number of seconds, or None when unknown (None, NaN, not a number at all)."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        return None
    return float(seconds) if math.isfinite(seconds) else None


def _hours_minutes_seconds(seconds: float | None, whole: Any) -> tuple[int, int, int] | None:
    """``seconds`` (made whole by ``whole``, at least 0) as hours, minutes and seconds."""
    known = finite_seconds(seconds)
    if known is None:
        return None
    hours, rest = divmod(max(0, whole(known)), 3600)
    minutes, secs = divmod(rest, 60)
    return hours, minutes, secs


def format_clock(seconds: float | None) -> str:
    """A since-spawn clock: ``+0:07``, ``+2:31``, ``+1:02:03``; "" when unknown.

    The clock never runs ahead: a part of a second is cut, not rounded."""
    parts = _hours_minutes_seconds(seconds, int)
    if parts is None:
        return ""
    hours, minutes, secs = parts
    if hours:
        return f"+{hours}:{minutes:02d}:{secs:02d}"
    return f"+{minutes}:{secs:02d}"


def format_duration(seconds: float | None) -> str:
    """A duration for people: ``7 s``, ``2 min 31 s``, ``1 h 02 min``; "" when unknown.

    Cut to the whole second like ``format_clock``: a spawn stopped at ``+0:01`` "gave up
    after 1 s", not after 2 (1.6 rounded)."""
    parts = _hours_minutes_seconds(seconds, int)
    if parts is None:
        return ""
    hours, minutes, secs = parts
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs:02d} s"
    return f"{secs} s"


def row_offset(record: Mapping[str, Any], started: datetime | None) -> float | None:
    """Seconds from the spawn's start to a timeline row: its first occurrence.

    The smaller of the hub's reading (``since_spawn``, taken when the event reached the
    hub, so never later than the page's own clock) and the event's first timestamp less the
    start (a repeat's first occurrence came before the reading of its latest one; a
    whole-second stamp is up to a second before the reading), each when known; never
    negative. The same function of the record on both pages: static/rows.js ``rowOffset``.
    """
    since = finite_seconds(record.get("since_spawn"))
    first_at = parse_timestamp(record.get("first_timestamp")) if started is not None else None
    if first_at is not None and started is not None:
        # the start as the live page has it (``isoformat_z``: to the millisecond), so a
        # whole-second stamp never lands on either side of a second on the two pages
        started = started.replace(microsecond=started.microsecond // 1000 * 1000)
        first = (first_at - started).total_seconds()
        since = first if since is None else min(since, first)
    return None if since is None else max(0.0, since)


def format_utc_time(timestamp: str | None) -> str:
    """``HH:MM:SS`` in UTC of a record timestamp; ``--:--:--`` when it has none."""
    moment = parse_timestamp(timestamp)
    return moment.strftime("%H:%M:%S") if moment else "--:--:--"


def format_utc(timestamp: str | None) -> str:
    """``YYYY-MM-DD HH:MM:SS UTC``; "" when absent or unreadable."""
    moment = parse_timestamp(timestamp)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC") if moment else ""


def utc_text(moment: datetime) -> str:
    """``2026-11-29 21:33:28 UTC``: what the page shows before the browser adds local time."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


# -- how long ago ---------------------------------------------------------------------------

_UNITS = ((86400 * 365, "year"), (86400 * 30, "month"), (86400 * 7, "week"), (86400, "day"), (3600, "hour"), (60, "minute"))


def time_ago(moment: datetime | None, now: datetime) -> str:
    """``just now``, ``1 minute ago``, ``2 hours ago``, ``3 days ago``; "" when unknown.

    A moment slightly in the future (clock skew) reads as ``just now``.
    """
    if moment is None:
        return ""
    seconds = (now - moment).total_seconds()
    if seconds < 45:
        return "just now"
    for size, unit in _UNITS:
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {unit}{'' if n == 1 else 's'} ago"
    return "1 minute ago"
