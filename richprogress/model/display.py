"""Event and user text made safe and short for display, the same for every view, and the
one word on a timeline row's pill.

Event text comes from whoever wrote the pod spec or runs a webhook, so before a person reads
it (terminal, plain-text report, page):
- C0/C1 controls and DEL are shown as ``\\xNN`` escapes (they would drive a terminal, as
  kubectl's CVE-2021-25743 did), and bidirectional controls (U+200E/U+200F, U+202A-U+202E,
  U+2066-U+2069) as ``\\uNNNN`` escapes: a right-to-left override in an image or user name
  must not reorder the rest of a sentence;
- very long values are cut to a readable length with "... (N more characters)": a 100 kB
  image name must not make a page or a terminal unusable. The full value stays in the JSON.
The browser does the same in static/row-details.js (``displayText``); keep the two in step.

A row's pill says in a word how its event went (``row_word``): ``done``, ``working``,
``waiting``, ``retrying``, ``problem``, ``error``. The event's own reason
(``FailedScheduling``, ``TaintManagerEviction``) means nothing to a student reading the
row first; it stays in the row's details, the report and the JSON. The live page reads the
same table from its data (``vocabulary.reasonWords``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
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


# -- the word on a row's pill -----------------------------------------------------------------

#: a row's word by its severity, when its reason has no word of its own (an operator's
#: custom reason, a rule's own): the row's colour says the same
SEVERITY_WORDS: Mapping[str, str] = MappingProxyType({"info": "note", "warning": "problem", "error": "error"})

_DONE = "done"
_WORKING = "working"
_WAITING = "waiting"
_RETRYING = "retrying"

#: the common reasons of the default rules' events, by severity: a reason says more than
#: its severity where it is well known (a warning "Failed" pull is retried by kubelet; a
#: warning "FailedScheduling" waits for room). An error is an "error" whatever its reason:
#: the sentence says which
REASON_WORDS: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {
        "info": MappingProxyType(
            {
                **dict.fromkeys(
                    (
                        "Scheduled", "Pulled", "Created", "Started", "SuccessfulAttachVolume",
                        "SuccessfulMountVolume", "ProvisioningSucceeded", "Initialized",
                        "Reconciled", "Synced", "SuccessfulSync", "ReconcileSuccess",
                        "SuccessfulCreate", "SuccessfulUpdate", "Updated",
                    ),
                    _DONE,
                ),
                **dict.fromkeys(
                    (
                        "Pulling", "TriggeredScaleUp", "Nominated", "Launched", "Registered",
                        "Provisioning", "ExternalProvisioning", "Preempted", "Reconcile",
                        "Reconciling", "Progressing", "Sync", "Syncing",
                    ),
                    _WORKING,
                ),
                **dict.fromkeys(("WaitForFirstConsumer", "Pending"), _WAITING),
                **dict.fromkeys(("Killing", "DisruptionTerminating", "Disrupting"), "stopping"),
                # the hub's own row when fail-fast ended the spawn (stream/live_diagnosis.py)
                "StoppedEarly": "stopped",
            }
        ),
        "warning": MappingProxyType(
            {
                **dict.fromkeys(("FailedScheduling", "NetworkNotReady"), _WAITING),
                **dict.fromkeys(
                    (
                        "Failed", "BackOff", "FailedMount", "FailedAttachVolume",
                        "FailedCreatePodSandBox", "ProvisioningFailed", "Unhealthy",
                    ),
                    _RETRYING,
                ),
            }
        ),
        "error": MappingProxyType({}),
    }
)


def row_word(severity: Any, reason: Any) -> str:
    """The word on a row's pill: ``done``, ``retrying``, ``error``...; "" for a row with no
    reason (the hub's own messages, "Still waiting" rows), whose sentence says it all.

    An unknown severity reads as ``info``, as the row's colour does. static/rows.js
    ``rowWord`` reads the same tables from the page's data."""
    if not isinstance(reason, str) or not reason:
        return ""
    level = severity if isinstance(severity, str) and severity in SEVERITY_WORDS else "info"
    return REASON_WORDS[level].get(reason) or SEVERITY_WORDS[level]
