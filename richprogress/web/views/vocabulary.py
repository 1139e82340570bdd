"""The words and names the live page shares with Python, sent in its JSON as ``vocabulary``.

The browser modules ship without a build step. Rather than keep their own copy of the
severities, the spawn's steps and the verdict's states (and drift from them), they
read this dictionary from the page's data: ``pending_data`` adds it, the template renders
it with ``|tojson``. The words the page says about a step or a live state live here too,
next to the names they are keyed by (tests/web/test_vocabulary_js.py checks that every step
and state has its words).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from types import MappingProxyType
from typing import Any, TypedDict

from richprogress.model.display import REASON_WORDS, SEVERITY_WORDS
from richprogress.model.records import PHASES, SEVERITIES
from richprogress.story.quieted import ANSWERED_REASONS, SCALE_UP_REASONS
from richprogress.story.verdict import SHOWS, STATE_WORDS, STATES

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

#: The pill of a problem row the spawn got past; templates/richprogress/rows.html renders
#: the same word on the failure page.
OVERCOME_PILL = "resolved"


class Vocabulary(TypedDict):
    """The page's ``data.vocabulary``."""

    severities: list[str]
    #: [name, label, progress percent when reached], in the spawn's order
    phases: list[tuple[str, str, int]]
    stepStates: dict[str, str]
    #: state -> {"show": what the page shows, "words": its kicker and status line}: the
    #: one verdict's table (``story.verdict``), for the states a page reaches by itself
    verdicts: dict[str, dict[str, Any]]
    overcomePill: str
    #: a row's pill word (model.display.row_word): ``severity`` (by severity) and
    #: ``reason`` (by severity, then reason)
    reasonWords: dict[str, dict[str, Any]]
    #: when a FailedScheduling row is quiet (story.quieted): the reasons of a scale-up in
    #: hand, and of the warnings it answers
    quiet: dict[str, list[str]]


def vocabulary() -> Vocabulary:
    """A fresh copy of the page's vocabulary (the template serialises it per page)."""
    return {
        "severities": list(SEVERITIES),
        "phases": [(name, label, progress) for name, label, progress in PHASES],
        "stepStates": dict(STEP_STATES),
        "verdicts": {
            state: {"show": asdict(SHOWS[state]), "words": asdict(STATE_WORDS[state])}
            for state in STATES
        },
        "overcomePill": OVERCOME_PILL,
        "reasonWords": {
            "severity": dict(SEVERITY_WORDS),
            "reason": {severity: dict(words) for severity, words in REASON_WORDS.items()},
        },
        "quiet": {"scaleUpReasons": list(SCALE_UP_REASONS), "answeredReasons": list(ANSWERED_REASONS)},
    }

