"""The container's last words, as a spawn keeps them: the last lines of the failing
container's log (or, when no log could be read, the termination message it left), bounded
and redacted once when read, who may see them, and how the plain-text report says them.

This is the one gate for text from inside the container: it may hold anything the server
printed, so it is redacted here and shown only to the viewers ``show_container_log``
names (``may_see``). Everyone else reads what the story makes of it (the cause's class and
its decisive word, ``wording.log_causes``), never a line.

The shape (kept with the live timeline and in the stored spawn's payload)::

    {"container": "notebook", "previous": true, "lines": ["...", ...], "truncated": false,
     "source": "log"}

``previous``: the lines are those of the container's run before its restart (what a
crash loop's last crash said); ``truncated``: earlier lines of the log (or the end of a
very long line) are not among ``lines``; ``source``: ``log`` or ``termination message``.
"""

from __future__ import annotations

import re
from typing import Any, Literal, TypedDict, cast

from richprogress.wording.redaction import redact

#: the most lines kept of a container's log
MAX_LINES = 40
#: the most bytes (UTF-8) the kept lines hold together
MAX_BYTES = 8 * 1024
#: the longest one line is kept (a minified JSON blob would fill the block on its own)
MAX_LINE_CHARS = 1000

#: who sees the container's log, ``show_container_log``'s values
ShowSetting = Literal["owner", "admins", "nobody"]
SHOW_SETTINGS: tuple[ShowSetting, ...] = ("owner", "admins", "nobody")
DEFAULT_SHOW: ShowSetting = "owner"

#: where the lines come from: the container's log, or the termination message it left
#: (``terminationMessagePath``, or its log tail under ``FallbackToLogsOnError``)
LogSource = Literal["log", "termination message"]
LOG_SOURCES: tuple[LogSource, ...] = ("log", "termination message")

# colours and cursor moves of terminal-minded loggers, and every other control character
# but the tab: they mean nothing on a page and could drive an admin's terminal. Also the
# invisible format characters: bidi embeddings, overrides and isolates (U+202A-U+202E,
# U+2066-U+2069: a U+202E shows a line's end reversed, "exe.txt" for "txt.exe") and the
# zero-width ones (a zero-width space between a secret's name and its "=" hid it from
# redaction)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b.")
_CONTROLS = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]"
)


class ContainerLog(TypedDict):
    """The last lines of one container's log (redacted)."""

    container: str
    previous: bool
    lines: list[str]
    truncated: bool
    source: LogSource


def clean_text(text: str) -> str:
    """Log text as people may read it: no terminal escapes or control characters (the
    line ends stay), secrets redacted (after the escapes are gone, so a colour code
    cannot split a secret from its name). Whole lines at once: one pass, not one a line."""
    return redact(_CONTROLS.sub("", _ANSI.sub("", text)))


def _cut(line: str) -> str:
    # after redaction: a cut must not leave the first half of a secret unrecognised
    return line[:MAX_LINE_CHARS] + "..." if len(line) > MAX_LINE_CHARS else line


def container_log(
    container: str,
    previous: bool,
    text: str,
    *,
    maybe_more: bool = False,
    source: LogSource = "log",
) -> ContainerLog:
    """The kept form of a container's log ``text``: its last lines, within ``MAX_LINES``
    and ``MAX_BYTES``, each cleaned and redacted. ``maybe_more``: the reader knows the
    answer was cut (it filled the asked tail or byte limit)."""
    raw = text.split("\n")
    if raw and raw[-1] == "":
        raw.pop()  # the newline that ends the last line
    truncated = maybe_more or len(raw) > MAX_LINES
    cleaned = clean_text("\n".join(raw[-MAX_LINES:])).split("\n") if raw else []
    kept: list[str] = []
    size = 0
    for line in reversed(cleaned):
        if len(line) > MAX_LINE_CHARS:
            truncated = True
            line = _cut(line)
        size += len(line.encode("utf-8", "replace")) + 1
        if size > MAX_BYTES:
            truncated = True
            break
        kept.append(line)
    kept.reverse()
    return {
        "container": str(container)[:253],
        "previous": bool(previous),
        "lines": kept,
        "truncated": truncated,
        "source": source,
    }


def stored_container_log(value: Any) -> ContainerLog | None:
    """A container log read back from a stored payload, re-bounded and re-checked (an
    older or edited row may hold anything); None when there is none."""
    if not isinstance(value, dict) or not isinstance(value.get("lines"), list):
        return None
    given = [
        line.replace("\n", " ") for line in value["lines"][-MAX_LINES:] if isinstance(line, str)
    ]
    # one pass over them all, as when they were read (pages call this on each view)
    lines = [_cut(line) for line in clean_text("\n".join(given)).split("\n")] if given else []
    return {
        "container": str(value.get("container") or "")[:253],
        "previous": value.get("previous") is True,
        "lines": lines,
        "truncated": value.get("truncated") is True or len(value["lines"]) > MAX_LINES,
        "source": value["source"] if value.get("source") in LOG_SOURCES else "log",
    }


def may_see(setting: str, *, viewer_is_owner: bool, viewer_is_admin: bool) -> bool:
    """Whether the viewer sees the container's log under ``show_container_log``:
    ``owner`` (the default): the server's owner and admins; ``admins``: admins only;
    ``nobody``: no one (it is then not read at all). Anyone else never sees it, whatever
    scopes they hold (the log may hold what redaction missed)."""
    if setting == "owner":
        return viewer_is_owner or viewer_is_admin
    if setting == "admins":
        return viewer_is_admin
    return False


def show_setting(value: Any) -> ShowSetting:
    """A ``show_container_log`` value read from a spawner or a config; anything unknown is
    the strictest, ``nobody`` (the hub refuses bad values at start: this is a last guard)."""
    if value is None:
        return DEFAULT_SHOW
    return cast(ShowSetting, value) if value in SHOW_SETTINGS else "nobody"


def log_heading(log: ContainerLog) -> str:
    """The words above the lines: which container, which run, and whether earlier lines
    are left out."""
    run = "its run before the last restart" if log["previous"] else "its last run"
    cut = ", earlier lines left out" if log["truncated"] else ""
    what = (
        "The message the server left as it stopped"
        if log.get("source") == "termination message"
        else "Last lines of the server's log"
    )
    return f"{what} (container {log['container'] or '?'}, {run}{cut}, secrets redacted)"


def report_lines(log: ContainerLog | None, heading: str | None = None) -> list[str]:
    """The container log's part of the plain-text report (empty without one), under
    ``heading`` (default: ``log_heading``)."""
    if not log:
        return []
    title = (heading or log_heading(log)) + ":"
    if not log["lines"]:
        return [title, "  (the log was empty)"]
    return [title, *("  " + line for line in log["lines"])]
