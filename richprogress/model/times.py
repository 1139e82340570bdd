"""``time_ago(moment, now)``: "2 hours ago", for pages that show when something happened.

Pure (the caller passes ``now``), so tests pin it without a clock of its own.
"""

from __future__ import annotations

from datetime import datetime

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
