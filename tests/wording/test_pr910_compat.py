"""Rules written for kubespawner #910 give exactly #910's messages on its 59 sample events.

The peer data is copied into tests/data/kubespawner-pr910/ (provenance and licence in its README.md),
so a clone tests itself with nothing beside it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from richprogress.wording.formatter import EventFormatter
from tests.helpers.paths import DATA

PEER = DATA / "kubespawner-pr910"
EVENT_FILES = sorted(PEER.glob("*.events.json"))

def _load(path: Path) -> object:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def pr910_formatter() -> EventFormatter:
    return EventFormatter(rules=_load(PEER / "default-rules.json"))


def test_peer_data_is_complete() -> None:
    # Fails (rather than skipping everything) if the copied peer data goes missing.
    total = sum(len(_load(path)) for path in EVENT_FILES)  # type: ignore[arg-type]
    assert (len(EVENT_FILES), total) == (9, 59)


@pytest.mark.parametrize("events_path", EVENT_FILES, ids=[p.name.split(".")[0] for p in EVENT_FILES])
def test_pr910_rules_give_pr910_messages(pr910_formatter: EventFormatter, events_path: Path) -> None:
    events = _load(events_path)
    expected = _load(events_path.with_name(events_path.name.replace(".events.", ".messages.")))
    assert [pr910_formatter.format_event(event)["message"] for event in events] == expected


def test_pr910_rules_given_as_dict_keep_key_order() -> None:
    # #910 sorts dict rules by key; "b-..." must lose to "a-..." although it comes first.
    rules = {
        "b-generic": {"match": {"reason": "Pulling"}, "template": "generic"},
        "a-specific": {"match": {"reason": "Pulling"}, "template": "specific"},
    }
    record = EventFormatter(rules=rules).format_event({"reason": "Pulling", "message": "Pulling image \"x\""})
    assert (record["message"], record["rule"]) == ("specific", "a-specific")


def test_pr910_callable_template_gets_groups_as_keywords() -> None:
    def template(action: str, container: str) -> str:
        return f"{action}! ({container})"

    rules = [
        {
            "match": {
                "reportingComponent": "kubelet",
                "fieldPath": r"spec\.(initContainers|containers)\{(?P<container>[^}]+)\}",
                "reason": "(?P<action>Started|Created)",
            },
            "template": template,
        }
    ]
    event = {
        "reason": "Started",
        "message": "Started container notebook",
        "source": {"component": "kubelet"},
        "involvedObject": {"kind": "Pod", "name": "jupyter-a", "fieldPath": "spec.containers{notebook}"},
        "type": "Normal",
    }
    assert EventFormatter(rules=rules).format_event(event)["message"] == "Started! (notebook)"
