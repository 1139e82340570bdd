"""Query arguments the handlers read: a whole number within bounds, else a 400."""

from __future__ import annotations

from typing import Any

from tornado import web


def int_argument(handler: Any, name: str, default: int | None, low: int, high: int) -> int | None:
    """The argument ``name`` as a number in ``[low, high]``; ``default`` when absent or empty."""
    value = handler.get_argument(name, None)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise web.HTTPError(400, f"{name} must be a whole number") from None
    if not low <= number <= high:
        raise web.HTTPError(400, f"{name} must be between {low} and {high}")
    return number
