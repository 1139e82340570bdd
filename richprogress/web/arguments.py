"""What the handlers read from a request, checked before it reaches the database: query
arguments that are whole numbers within bounds, spawn ids and names from the path. Each
mistake is a 400 naming what is wrong, never a database error (which one odd request must
not turn into an outage for everyone)."""

from __future__ import annotations

import re
from typing import Any

from tornado import web

#: spawn ids are database ids (1 ... 2**63 - 1, a BIGINT) or, for a spawn only in memory,
#: the same range below zero
MAX_ID = 2**63 - 1

#: the longest server name or cause a request may name: a bound on what one request may
#: send the database, far beyond the names hubs make
MAX_NAME = 1024

#: characters no name holds: C0 and C1 controls, DEL (a NUL byte is refused by PostgreSQL)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def whole_number(text: str, name: str, low: int, high: int) -> int:
    """``text`` as a whole number in ``[low, high]``, else a 400 naming ``name``."""
    # a bound on the digits before int(): Python refuses more than 4300 of them
    if len(text) > 24 or not re.fullmatch(r"[+-]?[0-9]+", text):
        raise web.HTTPError(400, f"{name} must be a whole number between {low} and {high}")
    number = int(text)
    if not low <= number <= high:
        raise web.HTTPError(400, f"{name} must be a whole number between {low} and {high}")
    return number


def int_argument(handler: Any, name: str, default: int | None, low: int, high: int) -> int | None:
    """The argument ``name`` as a number in ``[low, high]``; ``default`` when absent or empty."""
    value = handler.get_argument(name, None)
    if value is None or value == "":
        return default
    return whole_number(value, name, low, high)


def spawn_id(text: str) -> int:
    """A spawn id from the path: a whole number other than 0 within a 64-bit integer."""
    number = whole_number(text, "the spawn id", -MAX_ID, MAX_ID)
    if number == 0:
        raise web.HTTPError(400, "the spawn id must not be 0")
    return number


def checked_name(text: str, what: str) -> str:
    """A server name (or a cause) from the request, without control characters and at
    most ``MAX_NAME`` characters, else a 400 saying which."""
    if len(text) > MAX_NAME:
        raise web.HTTPError(400, f"{what} is longer than {MAX_NAME} characters")
    if _CONTROL.search(text):
        raise web.HTTPError(400, f"{what} holds a control character")
    return text
