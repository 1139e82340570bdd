"""The held-out corpus: wordings and failed spawns the rules were NOT written against.

``tests/data/heldout-corpus.json`` holds event messages users pasted in public issue threads
and format strings from sources the first corpus (``wording-corpus.json``) did not read;
``tests/data/heldout-stories.json`` holds failed spawns (event sequences) of the same kind.
They only measure: a rule is never written against them (rules come from the first corpus
and the sources), so their scores say how the wording does on text it was not tuned to.

Scores (``pytest -s`` prints them):
- humanized: a rule (or the cause reader) reworded the event;
- decisive facts kept: every token of the entry's ``decisive`` is in the sentence or hint;
- cause: one of ``cause_words`` is in the sentence (right), one of ``wrong_words`` is (wrong);
- stories: the diagnosis's summary names the right cause, a wrong one, or none.

Before the cause reader (the rules alone, measured before any change) the scores were:
events humanized 43/45 (95.6%), decisive facts kept 20/45 (44.4%), right cause 8/45 (17.8%),
wrong cause 3 (both "no match for platform" entries read as "not found", the image the
runtime could not inspect read as "No image is set"); stories right cause 3/25 (12%),
wrong cause 2, no cause 20.

After (the cause reader, and the rules it brought from the first corpus and the sources):
events humanized 45/45, decisive facts kept 43/45 (95.6%), right cause 44/45 (97.8%), wrong
cause 0; stories right cause 24/25 (96%), wrong cause 0, no cause 1. The tests below hold
the goals (97% humanized, 95% decisive facts, 90% right causes of failed spawns, no wrong
cause), not today's exact numbers.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from richprogress.story.diagnosis import diagnose
from richprogress.wording.formatter import EventFormatter
from tests.helpers.paths import DATA

EVENTS: list[dict[str, Any]] = json.loads((DATA / "heldout-corpus.json").read_text(encoding="utf-8"))["events"]
STORIES: list[dict[str, Any]] = json.loads((DATA / "heldout-stories.json").read_text(encoding="utf-8"))["stories"]


def to_event(entry: dict[str, Any], position: int = 0, story: str = "x") -> dict[str, Any]:
    involved = {"kind": entry["kind"], "namespace": "jhub", "name": entry.get("name", "jupyter-alice"), "uid": "u-1"}
    if entry.get("field_path"):
        involved["fieldPath"] = entry["field_path"]
    stamp = f"2026-11-29T21:{30 + position // 60:02d}:{position % 60:02d}Z"
    uid = f"{story}-{entry.get('id', position)}-{position}"
    return {
        "kind": "Event",
        "metadata": {"name": f"jupyter-alice.{uid}", "namespace": "jhub", "uid": uid},
        "involvedObject": involved,
        "reason": entry["reason"],
        "message": entry["message"],
        "source": {"component": entry["component"]},
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
        "type": entry["type"],
    }


def humanized(record: dict[str, Any]) -> bool:
    return record["rule"] is not None and record["message"] != record["raw_message"]


def said(record: dict[str, Any]) -> str:
    """What a person reads on the row: the sentence and its hint (the raw text only when raw)."""
    return f"{record['message']} {record.get('hint') or ''}".lower()


def judge(text: str, right: list[str], wrong: list[str]) -> str:
    text = text.lower()
    if any(word.lower() in text for word in wrong):
        return "wrong"
    if any(word.lower() in text for word in right):
        return "right"
    return "none"


def event_scores() -> dict[str, Any]:
    formatter = EventFormatter()
    scores: dict[str, Any] = {"humanized": [], "decisive": [], "right": [], "wrong": [], "none": [], "raw": []}
    for entry in EVENTS:
        record = formatter.format_event(to_event(entry))
        if humanized(record):
            scores["humanized"].append(entry["id"])
            text = said(record)
            if all(token.lower() in text for token in entry["decisive"]):
                scores["decisive"].append(entry["id"])
            scores[judge(record["message"], entry["cause_words"], entry["wrong_words"])].append(entry["id"])
        else:
            scores["raw"].append(entry["id"])
    return scores


def story_scores() -> dict[str, list[str]]:
    formatter = EventFormatter()
    scores: dict[str, list[str]] = {"right": [], "wrong": [], "none": []}
    for story in STORIES:
        records = [formatter.format_event(to_event(event, position, story["id"]))
                   for position, event in enumerate(story["events"])]
        summary = diagnose(records, story["failure_message"])["summary"]
        scores[judge(summary, story["cause_words"], story["wrong_words"])].append(story["id"])
    return scores


@pytest.fixture(scope="module")
def events() -> dict[str, Any]:
    found = event_scores()
    total = len(EVENTS)
    print(f"\nheld-out events: humanized {len(found['humanized'])}/{total}, decisive facts kept "
          f"{len(found['decisive'])}/{total}, right cause {len(found['right'])}/{total}, wrong cause "
          f"{len(found['wrong'])} {found['wrong']}, no cause {found['none']}, raw {found['raw']}")
    return found


@pytest.fixture(scope="module")
def stories() -> dict[str, list[str]]:
    found = story_scores()
    print(f"\nheld-out stories: right cause {len(found['right'])}/{len(STORIES)}, wrong cause "
          f"{len(found['wrong'])} {found['wrong']}, no cause {len(found['none'])} {found['none']}")
    return found


def test_every_entry_says_where_it_comes_from() -> None:
    ids = [entry["id"] for entry in EVENTS]
    assert len(ids) == len(set(ids))
    for entry in EVENTS:
        assert entry["source"] and entry["cause_words"], entry["id"]
    for story in STORIES:
        assert story["source"] and story["events"] and story["cause_words"], story["id"]


def test_the_judge_tells_right_from_wrong() -> None:
    assert judge("The image is not built for this kind of machine", ["kind of machine"], ["was not found"]) == "right"
    assert judge("The image was not found in its registry", ["platform"], ["was not found"]) == "wrong"
    assert judge("Downloading the image failed; the cluster will try again", ["dns"], []) == "none"


def test_held_out_events_are_humanized_and_keep_their_facts(events: dict[str, Any]) -> None:
    total = len(EVENTS)
    assert len(events["humanized"]) / total >= 0.97
    assert len(events["decisive"]) / total >= 0.95
    assert events["wrong"] == []


def test_held_out_failed_spawns_name_the_right_cause(stories: dict[str, list[str]]) -> None:
    assert len(stories["right"]) / len(STORIES) >= 0.90
    assert stories["wrong"] == []
