"""EventFormatter end to end: record shape, whole spawn sequences, hooks, plain text only."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from traitlets import TraitError

from richprogress.model.records import EventRecord
from richprogress.wording.fields import normalize_event
from richprogress.wording.formatter import EventFormatter
from tests.helpers.paths import DATA

RECORD_KEYS = {"id", "timestamp", "first_timestamp", "type", "severity", "reason", "object", "component", "count",
               "message", "raw_message", "rule", "phase", "hint"}

PULL_FAILED = {
    "metadata": {"uid": "uid-1"},
    "involvedObject": {"kind": "Pod", "name": "jupyter-alice", "fieldPath": "spec.containers{notebook}"},
    "reason": "Failed",
    "message": 'Failed to pull image "x/y:z": rpc error: code = NotFound desc = x/y:z: not found',
    "source": {"component": "kubelet"},
    "type": "Warning",
    "lastTimestamp": "2026-11-29T21:33:30Z",
    "count": 2,
}


def load(name: str) -> list[dict[str, Any]]:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def test_record_has_every_contract_key_and_is_json() -> None:
    record = EventFormatter().format_event(PULL_FAILED)
    # a missing image is a cause waiting cannot fix: its record says so (fail-fast)
    assert set(record) == RECORD_KEYS | {"fatal"} and record["fatal"] is True
    assert record == json.loads(json.dumps(record))
    assert record["object"] == {"kind": "Pod", "name": "jupyter-alice", "container": "notebook",
                                "field_path": "spec.containers{notebook}"}
    assert (record["id"], record["count"], record["timestamp"], record["component"]) == (
        "uid-1", 2, "2026-11-29T21:33:30Z", "kubelet")


SEQUENCES = [
    pytest.param("image-not-found.events.json", [
        ("Found a machine for your server (node-a1)", "info", "scheduled"),
        ("Downloading the image jupyter/does-not-exist:latest for the notebook container", "info", "image"),
        ("The image jupyter/does-not-exist:latest for the notebook container was not found in its registry", "error", "image"),
        ("Could not download the image for the notebook container", "error", "image"),
        (("Waiting before trying again to download the image jupyter/does-not-exist:latest for the notebook "
         "container"), "warning", "image"),
        ("Waiting before trying again to download the image for the notebook container", "warning", "image"),
    ], id="image-not-found"),
    pytest.param("volume-provisioning.events.json", [
        ("Your storage will be created once a machine is chosen for your server", "info", "volume"),
        ("Waiting for the storage service to create your disk", "info", "volume"),
        ("Creating a disk for your storage", "info", "volume"),
        ("Found a machine for your server (ip-10-0-1-2.us-west-2.compute.internal)", "info", "scheduled"),
        ("Your disk has been created", "info", "volume"),
        ("Your disk is connected to the machine", "info", "volume"),
        (("The image quay.io/jupyter/scipy-notebook:2025-11-10 for the notebook container is already on the machine "
         "(no download needed)"), "info", "image"),
        ("Created the notebook container", "info", "starting"),
        ("Started the notebook container", "info", "starting"),
    ], id="volume-provisioning"),
    pytest.param("out-of-memory.events.json", [
        ("Found a machine for your server (node-a1)", "info", "scheduled"),
        (("The image quay.io/jupyter/scipy-notebook:2025-11-10 for the notebook container is already on the machine "
         "(no download needed)"), "info", "image"),
        ("Created the notebook container", "info", "starting"),
        ("Started the notebook container", "info", "starting"),
        ("The program python3 ran out of memory and was stopped", "error", "starting"),
        ("The notebook container keeps crashing; waiting before restarting it", "error", "starting"),
    ], id="out-of-memory"),
]


@pytest.mark.parametrize(("filename", "expected"), SEQUENCES)
def test_spawn_sequences(filename: str, expected: list[tuple[str, str, str]]) -> None:
    formatter = EventFormatter()
    records = [formatter.format_event(event) for event in load(filename)]
    assert [(r["message"], r["severity"], r["phase"]) for r in records] == expected
    assert len({r["id"] for r in records}) == len(records)


def test_repeat_keeps_id_and_reports_count() -> None:
    events = load("image-not-found.events.json")
    backoff = events[4]
    record = EventFormatter().format_event(backoff)
    assert (record["count"], record["first_timestamp"], record["timestamp"]) == (
        3, "2026-11-29T21:33:04Z", "2026-11-29T21:34:10Z")
    assert EventFormatter().format_event({**backoff, "count": 4})["id"] == record["id"]


def test_kubespawner_custom_event() -> None:
    record = EventFormatter().format_event({"message": "Started container for user alice"})
    assert (record["type"], record["message"], record["severity"], record["rule"]) == (
        "Custom", "Started container for user alice", "info", None)


def test_format_message_applies_rules() -> None:
    formatter = EventFormatter(extra_rules=[{"id": "patience", "match": {"message": r"Still waiting \((?P<s>\d+)"},
                                             "template": "Still working on it ({s} seconds so far)",
                                             "phase": "requested"}])
    record = formatter.format_message("Still waiting (42 seconds)", id="p-1", timestamp="2026-11-29T21:33:30Z")
    assert (record["id"], record["type"], record["message"], record["phase"], record["rule"]) == (
        "p-1", "Custom", "Still working on it (42 seconds so far)", "requested", "patience")
    assert set(record) == RECORD_KEYS


# ---- no HTML -----------------------------------------------------------------------

HOSTILE = "<script>alert(1)</script><img src=x onerror=alert('2')>&amp;"


@pytest.mark.parametrize(
    "event",
    [
        {"reason": "Weird", "message": HOSTILE, "type": "Warning"},
        {"reason": "Pulling", "message": f'Pulling image "{HOSTILE}"',
         "involvedObject": {"fieldPath": "spec.containers{<b>c</b>}"}},
        {"reason": "Failed", "message": f'Failed to pull image "{HOSTILE}": not found',
         "involvedObject": {"fieldPath": "spec.containers{notebook}"}},
    ],
    ids=["raw-message", "image-name-and-container", "failed-pull"],
)
def test_markup_stays_plain_text_and_none_is_added(event: dict) -> None:
    record = EventFormatter().format_event(event)
    assert HOSTILE in record["message"]  # untouched: escaping is the renderer's job
    for text in (record["message"], record["hint"] or ""):
        stripped = text.replace(HOSTILE, "").replace("<b>c</b>", "")
        assert "<" not in stripped and ">" not in stripped and "&" not in stripped


def test_default_rules_never_write_markup() -> None:
    from richprogress.wording.default_rules import DEFAULT_RULES

    for rule in DEFAULT_RULES:
        for key in ("template", "hint"):
            if isinstance(rule.get(key), str):
                assert not any(c in rule[key] for c in "<>&"), rule["id"]


# ---- hooks -------------------------------------------------------------------------


def test_sync_hook_edits_record_and_gets_spawner_and_raw_event() -> None:
    seen: list[Any] = []

    def hook(spawner: Any, event: Any, record: EventRecord) -> EventRecord:
        seen.append((spawner, event))
        record["hint"] = "See the image list at docs.example.edu"
        return record

    formatter = EventFormatter(format_hook=hook)
    record = formatter.format_event(PULL_FAILED, spawner="the-spawner")
    assert record["hint"] == "See the image list at docs.example.edu"
    assert seen == [("the-spawner", PULL_FAILED)]


def test_hook_returning_none_keeps_default() -> None:
    default = EventFormatter().format_event(PULL_FAILED)
    assert EventFormatter(format_hook=lambda s, e, r: None).format_event(PULL_FAILED) == default


def test_hook_returning_partial_record_keeps_other_keys() -> None:
    record = EventFormatter(format_hook=lambda s, e, r: {"message": "short"}).format_event(PULL_FAILED)
    assert record["message"] == "short" and set(record) == RECORD_KEYS | {"fatal"}


def test_hook_mutating_then_raising_does_not_leak_into_default(caplog: pytest.LogCaptureFixture) -> None:
    def hook(spawner: Any, event: Any, record: EventRecord) -> EventRecord:
        record["message"] = "half-edited"
        raise ValueError("hook bug")

    formatter = EventFormatter(format_hook=hook)
    default = EventFormatter().format_event(PULL_FAILED)
    with caplog.at_level(logging.ERROR):
        results = [formatter.format_event(PULL_FAILED) for _ in range(5)]
    assert all(r == default for r in results)
    logged = [r for r in caplog.records if "format_hook" in r.getMessage()]
    assert len(logged) == 1
    assert "image-not-found" in logged[0].getMessage() and "Failed" in logged[0].getMessage()
    assert logged[0].exc_info is not None


def test_hook_errors_logged_once_per_rule(caplog: pytest.LogCaptureFixture) -> None:
    def hook(spawner: Any, event: Any, record: EventRecord) -> EventRecord:
        raise ValueError("hook bug")

    formatter = EventFormatter(format_hook=hook)
    other = {"reason": "Started", "message": "Started container notebook"}
    with caplog.at_level(logging.ERROR):
        for _ in range(3):
            formatter.format_event(PULL_FAILED)
            formatter.format_event(other)
    assert len([r for r in caplog.records if "format_hook" in r.getMessage()]) == 2


def test_hook_returning_wrong_type_keeps_default(caplog: pytest.LogCaptureFixture) -> None:
    default = EventFormatter().format_event(PULL_FAILED)
    with caplog.at_level(logging.ERROR):
        assert EventFormatter(format_hook=lambda s, e, r: "text").format_event(PULL_FAILED) == default
    assert any("expected a record" in r.getMessage() for r in caplog.records)


async def test_async_hook_is_awaited_by_format_event_async() -> None:
    async def hook(spawner: Any, event: Any, record: EventRecord) -> EventRecord:
        await asyncio.sleep(0)
        record["message"] = f"async: {record['message']}"
        return record

    record = await EventFormatter(format_hook=hook).format_event_async(PULL_FAILED)
    assert record["message"] == "async: The image x/y:z for the notebook container was not found in its registry"


async def test_sync_hook_works_from_format_event_async() -> None:
    record = await EventFormatter(format_hook=lambda s, e, r: {**r, "hint": "h"}).format_event_async(PULL_FAILED)
    assert record["hint"] == "h"


async def test_async_hook_raising_keeps_default(caplog: pytest.LogCaptureFixture) -> None:
    async def hook(spawner: Any, event: Any, record: EventRecord) -> EventRecord:
        raise RuntimeError("async bug")

    default = EventFormatter().format_event(PULL_FAILED)
    with caplog.at_level(logging.ERROR):
        assert await EventFormatter(format_hook=hook).format_event_async(PULL_FAILED) == default
    assert any("format_hook" in r.getMessage() for r in caplog.records)


def test_async_hook_in_sync_call_keeps_default_and_is_closed(caplog: pytest.LogCaptureFixture) -> None:
    started: list[bool] = []

    async def hook(spawner: Any, event: Any, record: EventRecord) -> EventRecord:
        started.append(True)
        return {**record, "message": "never"}

    formatter = EventFormatter(format_hook=hook)
    default = EventFormatter().format_event(PULL_FAILED)
    with caplog.at_level(logging.ERROR):
        assert formatter.format_event(PULL_FAILED) == default
        assert formatter.format_event(PULL_FAILED) == default
    assert started == []  # closed, never run, and no "never awaited" warning
    assert len([r for r in caplog.records if "format_event_async" in r.getMessage()]) == 1


def test_hook_must_be_callable() -> None:
    with pytest.raises(TraitError, match="format_hook = .not callable.: None, or a callable"):
        EventFormatter(format_hook="not callable")


def test_hook_set_after_creation_is_used() -> None:
    formatter = EventFormatter()
    formatter.format_event(PULL_FAILED)
    formatter.format_hook = lambda s, e, r: {**r, "message": "later"}
    assert formatter.format_event(PULL_FAILED)["message"] == "later"
    formatter.format_hook = None
    assert formatter.format_event(PULL_FAILED)["message"] != "later"


# ---- the record cache: a repeat gets exactly the record a first sight gets ------------------

PEER_EVENTS = sorted((DATA / "kubespawner-pr910").glob("*.events.json"))


def _variant(event: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A deep copy of ``event`` with top-level or ``involvedObject``/``metadata`` keys changed."""
    copy = json.loads(json.dumps(event))
    for dotted, value in changes.items():
        *path, last = dotted.split("__")
        target = copy
        for part in path:
            target = target.setdefault(part, {})
        target[last] = value
    return copy


def careful(event: dict[str, Any], formatter: EventFormatter | None = None) -> EventRecord:
    """The record without the fast reader or the record cache: the rules over normalize_event."""
    return (formatter or EventFormatter())._build(normalize_event(event))


@pytest.mark.skipif(not PEER_EVENTS, reason="peer data not available")
def test_records_of_repeats_equal_first_sight_records() -> None:
    events = [event for path in PEER_EVENTS for event in json.loads(path.read_text(encoding="utf-8"))]
    warm = EventFormatter()
    for event in events:
        warm.format_event(event)
    for event in events:
        # the warm one answers from its cache
        assert warm.format_event(event) == careful(event)


CACHE_CASES = [
    pytest.param({"count": 7, "lastTimestamp": "2026-11-29T21:40:00Z"}, id="repeat-with-new-count-and-time"),
    pytest.param({"metadata__uid": "uid-2", "involvedObject__name": "jupyter-bob"}, id="same-step-another-user"),
    pytest.param({"involvedObject__name": None}, id="name-missing"),
    pytest.param({"involvedObject__name": "jupyter-\u00e9lise"}, id="name-not-ascii"),
    pytest.param({"lastTimestamp": "2026-11-29T22:33:30+01:00"}, id="time-with-offset"),
    pytest.param({"message": 'Failed to pull image "x/y:z": pull access denied'}, id="other-message"),
    pytest.param({"involvedObject__fieldPath": "spec.initContainers{fetch}"}, id="other-container"),
    pytest.param({"reportingComponent": "", "source": None}, id="no-component"),
    pytest.param({"source": {"component": "kubelet\udcff"}}, id="lone-surrogate-in-component"),
    pytest.param({"message": 'Failed to pull image "x/\udcff": not found'}, id="lone-surrogate-in-message"),
    pytest.param({"reason": "Fail\u00e9d", "type": "Warn\udcffing"}, id="reason-and-type-not-ascii"),
    pytest.param({"involvedObject__kind": "P\udcffd", "involvedObject__namespace": "\udcff"}, id="kind-namespace-odd"),
    pytest.param({"involvedObject__fieldPath": "spec.containers{n\udcfftebook}"}, id="lone-surrogate-in-container"),
    pytest.param({"type": 1}, id="type-not-text"),
    pytest.param({"count": True, "series": {"count": 3}}, id="count-from-series"),
]


@pytest.mark.parametrize("changes", CACHE_CASES)
def test_cached_record_carries_this_events_own_values(changes: dict[str, Any]) -> None:
    formatter = EventFormatter()
    formatter.format_event(PULL_FAILED)
    formatter.format_event(PULL_FAILED)
    event = _variant(PULL_FAILED, **changes)
    assert formatter.format_event(event) == careful(event)
    assert formatter.format_event(event) == careful(event)
    assert EventFormatter().format_event(event) == careful(event)


def test_editing_a_returned_record_does_not_change_the_next_one() -> None:
    formatter = EventFormatter()
    first = formatter.format_event(PULL_FAILED)
    first["message"] = "edited"
    first["object"].update(kind="edited", name="edited", container="edited", field_path="edited")
    first["since_spawn"] = 1.5  # what the spawner adds
    again = formatter.format_event(PULL_FAILED)
    assert again == careful(PULL_FAILED)
    assert "since_spawn" not in again


def test_callable_rules_of_others_are_called_for_every_event() -> None:
    calls: list[str] = []

    def numbered(image: str) -> str:
        calls.append(image)
        return f"Attempt {len(calls)} to pull {image}"

    formatter = EventFormatter(rules=[{"match": {"message": 'Failed to pull image "(?P<image>[^"]+)"'},
                                       "template": numbered}])
    messages = [formatter.format_event(PULL_FAILED)["message"] for _ in range(2)]
    assert messages == ["Attempt 1 to pull x/y:z", "Attempt 2 to pull x/y:z"]


def test_new_rules_are_used_for_events_seen_before() -> None:
    formatter = EventFormatter()
    assert formatter.format_event(PULL_FAILED)["rule"] == "image-not-found"
    formatter.extra_rules = [{"id": "ours", "match": {"reason": "Failed"}, "template": "Ours"}]
    assert (formatter.format_event(PULL_FAILED)["rule"], formatter.format_event(PULL_FAILED)["message"]) == (
        "ours", "Ours")


def test_rules_matching_the_pod_name_see_each_name() -> None:
    formatter = EventFormatter(extra_rules=[{"match": {"name": "jupyter-bob"}, "template": "Bob's"}])
    alice = formatter.format_event(PULL_FAILED)
    bob = formatter.format_event(_variant(PULL_FAILED, involvedObject__name="jupyter-bob"))
    assert (alice["rule"], bob["message"]) == ("image-not-found", "Bob's")


def test_record_cache_is_bounded() -> None:
    from richprogress.wording.formatter import _RECORDS_LIMIT

    formatter = EventFormatter()
    for i in range(_RECORDS_LIMIT + 10):
        formatter.format_event(_variant(PULL_FAILED, message=f'Failed to pull image "x/y:{i}": not found'))
    assert 0 < len(formatter._records) <= _RECORDS_LIMIT
    long = _variant(PULL_FAILED, message="Failed " + "x" * 5000)
    formatter.format_event(long)
    assert long["message"] not in {key[0] for key in formatter._records}


# A hook's odd values never reach the pages: each contract key keeps the default record's
# value unless the hook gave one of the contract's type; extra keys must be JSON data.
ODD_HOOK_RESULTS = [
    pytest.param({"count": "3"}, "count", id="count-as-text"),
    pytest.param({"count": 0}, "count", id="count-zero"),
    pytest.param({"count": True}, "count", id="count-bool"),
    pytest.param({"object": "Pod jupyter-alice"}, "object", id="object-as-text"),
    pytest.param({"object": {"kind": 5, "name": "x"}}, "object", id="object-kind-number"),
    pytest.param({"severity": "fatal"}, "severity", id="severity-unknown"),
    pytest.param({"id": None}, "id", id="id-none"),
    pytest.param({"id": ""}, "id", id="id-empty"),
    pytest.param({"reason": 404}, "reason", id="reason-number"),
    pytest.param({"timestamp": 1700000000}, "timestamp", id="timestamp-number"),
    pytest.param({"hint": {"text": "x"}}, "hint", id="hint-dict"),
    pytest.param({"phase": ["image"]}, "phase", id="phase-list"),
    pytest.param({"phase": "compiling"}, "phase", id="phase-unknown"),
    pytest.param({"raw_message": None}, "raw_message", id="raw-message-none"),
    pytest.param({"docs": {1, 2}}, "docs", id="extra-key-a-set"),
]


@pytest.mark.parametrize(("odd", "key"), ODD_HOOK_RESULTS)
def test_hook_odd_values_keep_the_default_and_the_failure_page_renders(
    odd: dict[str, Any], key: str, caplog: pytest.LogCaptureFixture
) -> None:
    from richprogress.model.timeline import SpawnTimeline
    from richprogress.web.views.failure import failure_view
    from richprogress.web.views.payloads import timeline_payload

    default = EventFormatter().format_event(PULL_FAILED)
    with caplog.at_level(logging.WARNING):
        record = EventFormatter(format_hook=lambda s, e, r: {**r, "message": "mine", **odd}).format_event(
            PULL_FAILED
        )
    assert record["message"] == "mine"
    assert record.get(key) == default.get(key)
    assert any("format_hook" in r.getMessage() and key in r.getMessage() for r in caplog.records)
    timeline = SpawnTimeline()
    timeline.add(record)
    timeline.finish("failed", "")
    view = failure_view("alice", "", timeline)
    # (row 0 is the hub's "Server requested" at +0:00)
    assert view is not None and view.rows[1]["message"] == "mine"
    json.dumps(timeline_payload(timeline))


def test_hook_object_with_some_parts_still_carries_all_four() -> None:
    record = EventFormatter(format_hook=lambda s, e, r: {**r, "object": {"kind": "Pod"}}).format_event(PULL_FAILED)
    assert record["object"] == {"kind": "Pod", "name": None, "container": None, "field_path": None}


def test_one_cached_wording_serves_every_users_pod() -> None:
    # the default rules read the name only for operators' kinds and placeholders: a pod's
    # step is worded once for all users, not once per user (each spawn a first sight)
    formatter = EventFormatter()
    for user in ("alice", "bob", "carol"):
        event = _variant(PULL_FAILED, involvedObject__name=f"jupyter-{user}", metadata__uid=f"uid-{user}")
        assert formatter.format_event(event) == careful(event)
    assert len(formatter._records) == 1


def test_operator_wordings_that_name_the_object_are_cached_per_name() -> None:
    formatter = EventFormatter()
    messages = []
    for name in ("alice", "bob", "alice"):
        event = _variant(PULL_FAILED, involvedObject__kind="JupyterServer", involvedObject__name=name,
                         reason="Reconciling", type="Normal", message="Reconciling")
        record = formatter.format_event(event)
        assert record == careful(event)
        messages.append(record["message"])
    assert "alice" in messages[0] and "bob" in messages[1] and messages[2] == messages[0]
