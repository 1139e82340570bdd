"""What the handlers read from a request, checked before it reaches the database: query
arguments that are whole numbers within bounds, spawn ids and names from the path. Each
mistake is a 400 naming what is wrong, never a database error (which one odd request must
not turn into an outage for everyone).

Every route's names from the path are checked as soon as JupyterHub has authenticated
the request (``PathNamesChecked``: before the handler, its scope check, which may query
the hub's database by the name, and any read of the history; after authentication, so the
400 is the hub's own error page, which needs to know who asks): a character no database keeps in text (a NUL, which
PostgreSQL refuses; a lone surrogate, which has no UTF-8 form) is a 400 on every route,
never a query that fails, an ERROR in the log and a store error counted.
"""

from __future__ import annotations

import inspect
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

#: characters no database keeps in text: NUL (PostgreSQL refuses it) and lone surrogates
#: (no UTF-8 form; tornado refuses them in a URL already, a caller's string may hold one)
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")

#: what the path's names are, in route order: every route starts with the user's name,
#: then the server's (a spawn id after them is digits by its route)
PATH_NAMES = ("the user name", "the server name")


def storable_name(text: str, what: str) -> str:
    """``text`` when a database can keep it, else a 400 naming the character."""
    found = _UNSTORABLE.search(text)
    if found is not None:
        char = found.group()
        kind = "a control character" if char == "\x00" else "a lone surrogate"
        raise web.HTTPError(400, f"{what} holds {kind} (U+{ord(char):04X}), which no name holds")
    return text


class PathNamesChecked:
    """A handler mixin: the names in the path (``PATH_NAMES``) are checked
    (``storable_name``) once JupyterHub's own ``prepare`` (authentication) has run, before
    the handler does anything with them."""

    path_args: list[str]

    async def prepare(self) -> None:
        # JupyterHub 5's error page reads the user and scopes its prepare sets: refused
        # before it, the 400 went out with no body and "Uncaught exception in write_error"
        prepared = super().prepare()  # type: ignore[misc]
        if inspect.isawaitable(prepared):
            await prepared
        if getattr(self, "_finished", False):  # prepare answered already (a redirect)
            return
        for text, what in zip(self.path_args, PATH_NAMES, strict=False):
            if isinstance(text, str):
                storable_name(text, what)


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
