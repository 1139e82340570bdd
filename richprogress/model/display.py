"""Event and user text made safe and short for display, the same for every view.

Event text comes from whoever wrote the pod spec or runs a webhook, so before a person reads
it (terminal, plain-text report, page):
- C0/C1 controls and DEL are shown as ``\\xNN`` escapes (they would drive a terminal, as
  kubectl's CVE-2021-25743 did), and bidirectional controls (U+200E/U+200F, U+202A-U+202E,
  U+2066-U+2069) as ``\\uNNNN`` escapes: a right-to-left override in an image or user name
  must not reorder the rest of a sentence;
- very long values are cut to a readable length with "... (N more characters)": a 100 kB
  image name must not make a page or a terminal unusable. The full value stays in the JSON.
The browser does the same in static/row-details.js (``displayText``); keep the two in step.
"""

from __future__ import annotations

import re
from typing import Any

#: characters shown as escapes: C0 (after whitespace was folded), DEL, C1, bidi controls
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")

#: the longest text shown whole (a sentence, a raw message, a field)
DISPLAY_LIMIT = 2000


def _escape(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shorten(text: str, limit: int = DISPLAY_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, saying how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit:,} more characters)"


def display_line(text: Any, limit: int = DISPLAY_LIMIT) -> str:
    """``text`` on one line (whitespace folded), controls escaped, shortened for display."""
    line = " ".join(str(text if text is not None else "")[: limit * 4 + 64].split())
    if len(str(text or "")) > limit * 4 + 64:
        # Count what was dropped before folding, so the number is the real one.
        extra = len(str(text)) - limit
        return _CONTROL.sub(_escape, line[:limit]) + f"... ({extra:,} more characters)"
    return shorten(_CONTROL.sub(_escape, line), limit)


def display_text(text: Any, limit: int = DISPLAY_LIMIT) -> str:
    """Like ``display_line`` but keeps the text's own line breaks (for a page's details)."""
    value = str(text if text is not None else "")
    extra = len(value) - limit
    value = value[:limit]
    value = _CONTROL.sub(lambda m: m.group() if m.group() in "\n\t" else _escape(m), value)
    return value + (f"... ({extra:,} more characters)" if extra > 0 else "")


def format_count(count: Any) -> str:
    """A repeat count as people read it: "4", "12,345", and "more than a million" beyond."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        return "1"
    if count > 1_000_000:
        return "1,000,000+"
    return f"{count:,}"


def clean_str(value: Any) -> str | None:
    """Return ``value`` as a str safe to encode as UTF-8, or None if it is not text.

    Numbers are accepted (some producers send them); containers and other objects are not,
    because their repr would be a misleading message.
    """
    if isinstance(value, str):
        if value.isascii():
            return value
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            # Lone surrogates (from broken producers) cannot be sent over SSE or JSON-encoded
            # as UTF-8; replace them rather than fail later, far away from here.
            return value.encode("utf-8", "replace").decode("utf-8")
        return value
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return str(value)
    return None
