"""Reading event dicts into plain fields: timestamps, object, container, component, count, id."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import pytest

from richprogress.model.times import iso_utc
from richprogress.wording.fields import normalize_event, normalize_message


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-11-29T21:33:30Z", "2026-11-29T21:33:30Z"),
        ("2026-02-11T14:36:16.806603Z", "2026-02-11T14:36:16.806603Z"),
        ("2026-11-29T22:33:30+01:00", "2026-11-29T21:33:30Z"),
        ("2026-11-29T21:33:30.5+00:00", "2026-11-29T21:33:30.500000Z"),
        ("2026-11-29T21:33:30", "2026-11-29T21:33:30Z"),
        (dt.datetime(2026, 11, 29, 21, 33, 30, tzinfo=dt.timezone.utc), "2026-11-29T21:33:30Z"),
        (dt.datetime(2026, 11, 29, 21, 33, 30), "2026-11-29T21:33:30Z"),
        ("yesterday", None),
        ("", None),
        (12345, None),
        (None, None),
    ],
    ids=["z", "micro-z", "offset", "fraction-offset", "naive-str", "aware-dt", "naive-dt", "junk", "empty",
         "number", "none"],
)
def test_iso_utc(value: Any, expected: str | None) -> None:
    assert iso_utc(value) == expected


TS = {
    "series": {"lastObservedTime": "2026-11-29T21:40:00.000001Z"},
    "lastTimestamp": "2026-11-29T21:35:00Z",
    "eventTime": "2026-11-29T21:31:00.000000Z",
    "firstTimestamp": "2026-11-29T21:30:00Z",
    "metadata": {"creationTimestamp": "2026-11-29T21:29:00Z"},
}


@pytest.mark.parametrize(
    ("drop", "latest", "first"),
    [
        ((), "2026-11-29T21:40:00.000001Z", "2026-11-29T21:30:00Z"),
        (("series",), "2026-11-29T21:35:00Z", "2026-11-29T21:30:00Z"),
        (("series", "lastTimestamp"), "2026-11-29T21:31:00.000000Z", "2026-11-29T21:30:00Z"),
        (("series", "lastTimestamp", "eventTime"), "2026-11-29T21:30:00Z", "2026-11-29T21:30:00Z"),
        (("series", "lastTimestamp", "eventTime", "firstTimestamp"), "2026-11-29T21:29:00Z", "2026-11-29T21:29:00Z"),
    ],
    ids=["series", "last", "event-time", "first", "creation"],
)
def test_timestamp_precedence(drop: tuple[str, ...], latest: str, first: str) -> None:
    fields = normalize_event({k: v for k, v in TS.items() if k not in drop})
    assert (fields.timestamp, fields.first_timestamp) == (latest, first)


def test_null_last_timestamp_falls_back_to_event_time() -> None:
    # Events from the events.k8s.io API carry lastTimestamp: null and an eventTime.
    fields = normalize_event({"lastTimestamp": None, "firstTimestamp": None, "eventTime": "2026-02-11T14:36:16.8Z"})
    assert fields.timestamp == fields.first_timestamp == "2026-02-11T14:36:16.8Z"


@pytest.mark.parametrize(
    ("field_path", "container"),
    [
        ("spec.containers{notebook}", "notebook"),
        ("spec.initContainers{block-nfs-access}", "block-nfs-access"),
        ("spec.ephemeralContainers{debugger}", "debugger"),
        ("spec.containers{}", None),
        ("metadata.name", None),
        (None, None),
    ],
    ids=["container", "init-container", "ephemeral", "empty-braces", "other-path", "none"],
)
def test_container_from_field_path(field_path: str | None, container: str | None) -> None:
    fields = normalize_event({"involvedObject": {"kind": "Pod", "name": "p", "fieldPath": field_path}})
    assert (fields.container, fields.field_path, fields.kind, fields.name) == (container, field_path, "Pod", "p")


@pytest.mark.parametrize(
    ("event", "component"),
    [
        ({"reportingComponent": "kubelet", "source": {"component": "old"}}, "kubelet"),
        ({"reportingComponent": "", "source": {"component": "kubelet"}}, "kubelet"),
        ({"source": {}}, None),
        ({}, None),
    ],
    ids=["reporting", "source-fallback", "empty-source", "missing"],
)
def test_component(event: dict, component: str | None) -> None:
    assert normalize_event(event).component == component


@pytest.mark.parametrize(
    ("event", "count"),
    [({"count": 4}, 4), ({"count": None, "series": {"count": 7}}, 7), ({"count": 0}, 1), ({"count": "9"}, 1),
     ({"count": True}, 1), ({}, 1)],
    ids=["count", "series-count", "zero", "string", "bool", "missing"],
)
def test_count_is_at_least_one(event: dict, count: int) -> None:
    assert normalize_event(event).occurrences == count


def test_id_is_the_uid() -> None:
    assert normalize_event({"metadata": {"uid": "abc"}}).id == "abc"


def test_id_without_uid_is_stable_across_repeats_and_differs_between_events() -> None:
    base = {"metadata": {"name": "p.1", "namespace": "ns"}, "reason": "BackOff", "message": "m",
            "involvedObject": {"name": "p"}, "firstTimestamp": "2026-11-29T21:30:00Z"}
    repeat = {**base, "count": 5, "lastTimestamp": "2026-11-29T21:39:00Z"}
    other = {**base, "message": "another"}
    assert normalize_event(base).id == normalize_event(repeat).id
    assert normalize_event(base).id != normalize_event(other).id


def test_custom_event_from_kubespawner() -> None:
    fields = normalize_event({"message": "Spawning server..."})
    assert (fields.type, fields.raw_message, fields.reason, fields.occurrences) == (
        "Custom", "Spawning server...", None, 1)


def test_normalize_message() -> None:
    fields = normalize_message("Server ready", id="m1", timestamp="2026-11-29T21:33:30+00:00")
    assert (fields.id, fields.timestamp, fields.type, fields.raw_message) == (
        "m1", "2026-11-29T21:33:30Z", "Custom", "Server ready")
    assert normalize_message("x").id == normalize_message("x").id != normalize_message("y").id


@pytest.mark.parametrize(
    "event",
    [None, 3, "text", [], {"metadata": "x", "involvedObject": 5, "source": [], "series": "s"},
     {"message": {"nested": 1}, "reason": ["x"], "type": 7}],
    ids=["none", "int", "str", "list", "wrong-types", "wrong-leaf-types"],
)
def test_junk_never_raises(event: Any) -> None:
    fields = normalize_event(event)
    assert isinstance(fields.raw_message, str) and fields.occurrences == 1 and isinstance(fields.id, str)


def test_lone_surrogates_are_replaced() -> None:
    fields = normalize_event({"message": "bad \udcff byte", "reason": "R\ud800"})
    assert fields.raw_message == "bad ? byte" and fields.reason == "R?"
    fields.raw_message.encode("utf-8")


def test_numbers_are_read_as_text() -> None:
    assert normalize_event({"message": 404}).raw_message == "404"


class _HostileMapping(Mapping):
    """A mapping that breaks when read, as a buggy client object might."""

    def __getitem__(self, key: str) -> Any:
        raise RuntimeError("boom")

    def __iter__(self) -> Any:
        return iter(["message"])

    def __len__(self) -> int:
        return 1


def test_mapping_that_raises_is_treated_as_empty() -> None:
    fields = normalize_event({"involvedObject": _HostileMapping(), "message": "kept"})
    assert (fields.raw_message, fields.kind) == ("kept", None)
    assert normalize_event(_HostileMapping()).raw_message == ""
