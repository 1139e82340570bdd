"""The words and names the live page shares with Python, sent in its JSON as ``vocabulary``.

The browser modules ship without a build step. Rather than keep their own copy of the
severities, the spawn's steps and the live diagnosis's states (and drift from them), they
read this dictionary from the page's data: ``pending_data`` adds it, the template renders
it with ``|tojson``. The words the page says about a step or a live state live here too,
next to the names they are keyed by (tests/test_vocabulary_js.py checks that every step
and state has its words).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, TypedDict

from richprogress.model.display import REASON_WORDS, SEVERITY_WORDS
from richprogress.model.records import PHASES, SEVERITIES
from richprogress.story.fail_fast import LIVE_STATES

__all__ = ["OVERCOME_PILL", "Vocabulary", "vocabulary"]

#: The status line under the bar: what the step is doing, not the newest (maybe alarming
#: but harmless) event.
STEP_STATES: Mapping[str, str] = MappingProxyType(
    {
        "requested": "The hub is asking the cluster for a server.",
        "scheduling": "The cluster is looking for a machine with room for your server.",
        "scaling": "The cluster is adding a machine for your server; this often takes a few minutes.",
        "scheduled": "A machine was found for your server.",
        "volume": "Your storage is being prepared.",
        "image": "The software image is downloading to the machine; large images take a few minutes.",
        "starting": "The server is starting.",
        "ready": "Your server is ready.",
    }
)

#: The status line while the live banner says waiting cannot fix the cause: the step's own
#: words ("this often takes a few minutes") would promise that waiting ends it.
CANNOT_CONTINUE_STATES: Mapping[str, str] = MappingProxyType(
    {
        "hopeless": "Waiting will not get past this: the reason is below.",
        "stopped": "The spawn was stopped: the reason is below.",
    }
)

#: The live banner's first line, per live state.
LIVE_KICKERS: Mapping[str, str] = MappingProxyType(
    {
        "trying": "Still trying",
        "hopeless": "This will not fix itself",
        "stopped": "Stopped early: waiting would not fix this",
    }
)

#: Beside the step label while the banner shows, per live state.
LIVE_STEP_STATES: Mapping[str, str] = MappingProxyType(
    {
        "trying": "still trying",
        "hopeless": "cannot continue",
        "stopped": "stopped",
    }
)

#: The pill of a problem row the spawn got past; templates/richprogress/rows.html renders
#: the same word on the failure page.
OVERCOME_PILL = "resolved"


class Vocabulary(TypedDict):
    """The page's ``data.vocabulary``."""

    severities: list[str]
    #: [name, label, progress percent when reached], in the spawn's order
    phases: list[tuple[str, str, int]]
    stepStates: dict[str, str]
    cannotContinueStates: dict[str, str]
    liveStates: list[str]
    liveKickers: dict[str, str]
    liveStepStates: dict[str, str]
    overcomePill: str
    #: a row's pill word (model.display.row_word): ``severity`` (by severity) and
    #: ``reason`` (by severity, then reason)
    reasonWords: dict[str, dict[str, Any]]


def vocabulary() -> Vocabulary:
    """A fresh copy of the page's vocabulary (the template serialises it per page)."""
    return {
        "severities": list(SEVERITIES),
        "phases": [(name, label, progress) for name, label, progress in PHASES],
        "stepStates": dict(STEP_STATES),
        "cannotContinueStates": dict(CANNOT_CONTINUE_STATES),
        "liveStates": list(LIVE_STATES),
        "liveKickers": dict(LIVE_KICKERS),
        "liveStepStates": dict(LIVE_STEP_STATES),
        "overcomePill": OVERCOME_PILL,
        "reasonWords": {
            "severity": dict(SEVERITY_WORDS),
            "reason": {severity: dict(words) for severity, words in REASON_WORDS.items()},
        },
    }

