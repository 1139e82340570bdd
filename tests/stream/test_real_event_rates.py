"""The pages' words for events as real recorders write them (the simulated cluster's default).

Each sequence is written by the simulator's copies of client-go's recorders
(richprogress/demo/cluster/recorder.py, pinned against client-go by tests/demo/test_event_recorder.py),
then read by our formatter, as a hub reads it from the API: merged messages, counts that jump
past a throttle, scheduler series that start over as new events. Times are simulated seconds.
"""

from __future__ import annotations

from typing import Any

from richprogress.demo.cluster.events import build_event
from richprogress.demo.cluster.recorder import COMBINED_PREFIX, LegacyRecorder, SeriesRecorder
from richprogress.demo.cluster.store import ObjectStore
from richprogress.story.fail_fast import FailFastPolicy, assess
from richprogress.story.verdict import decide
from richprogress.web.views.rows import record_row
from richprogress.wording.fields import COMBINED_PREFIX as READ_PREFIX
from richprogress.wording.formatter import EventFormatter

POD = {"kind": "Pod", "namespace": "default", "name": "jupyter-r", "uid": "u-1", "apiVersion": "v1"}
CONTAINER = "spec.containers{notebook}"


def not_found(tag: str) -> str:
    image = f"quay.io/x/nb:{tag}"
    return (f'Failed to pull image "{image}": rpc error: code = NotFound desc = failed to pull and '
            f'unpack image "{image}": failed to resolve reference "{image}": {image}: not found')


def kubelet(reason: str, message: str, event_type: str = "Warning") -> dict[str, Any]:
    return build_event(namespace="default", involved={**POD, "fieldPath": CONTAINER}, reason=reason,
                       message=message, event_type=event_type, component="kubelet", instance="node-1")


def written_by_legacy(events: list[tuple[float, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Every write the kubelet's recorder makes for ``events`` (None-free), in order."""
    store, written = ObjectStore(), {}
    legacy = LegacyRecorder(store, written)
    return [w for w in (legacy.record(event, now=at) for at, event in events) if w is not None]


def timeline(formatter: EventFormatter, writes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records a page holds after these writes: one per event, its latest write."""
    records: dict[str, dict[str, Any]] = {}
    for write in writes:
        record = formatter.format_event(write)
        records[record["id"]] = dict(record)
    return list(records.values())


def test_the_prefix_the_formatter_takes_off_is_the_recorders() -> None:
    assert READ_PREFIX == COMBINED_PREFIX


def test_a_merged_event_is_worded_like_the_message_it_carries() -> None:
    """The 10th different message of one reason in 10 minutes becomes "(combined from
    similar events): <message>": the row says what the message says, and the record keeps
    that Kubernetes merged events (``combined``) and the message without the prefix."""
    writes = written_by_legacy([(float(i), kubelet("Failed", not_found(str(i)))) for i in range(12)])
    merged = [w for w in writes if w["message"].startswith(COMBINED_PREFIX)]
    assert merged, "the recorder merged nothing: the sequence no longer tests the prefix"
    formatter = EventFormatter()
    record = formatter.format_event(merged[-1])
    plain = formatter.format_event(kubelet("Failed", not_found("11")))
    assert record["message"] == plain["message"] == (
        "The image quay.io/x/nb:11 for the notebook container was not found in its registry")
    assert (record["rule"], record["fatal"], record["hint"]) == (plain["rule"], True, plain["hint"])
    assert record["combined"] is True and "combined" not in plain
    assert record["raw_message"] == not_found("11")
    row = record_row(dict(record), None)
    assert "combined" not in row["message"] and row["message"] == record["message"]


def test_a_merged_event_no_rule_knows_keeps_its_own_words_without_the_prefix() -> None:
    writes = written_by_legacy([(float(i), kubelet("Odd", f"something odd, take {i}", "Normal"))
                                for i in range(11)])
    record = EventFormatter().format_event(writes[-1])
    assert record["combined"] is True and record["message"] == record["raw_message"] == "something odd, take 10"


def test_a_count_that_jumps_past_the_throttle_is_a_repeat_the_page_counts() -> None:
    """The pod's 25-write burst: the missing image's event is written with count 1, 2, ...
    25, then nothing for 5 minutes, then with every occurrence since (31). The row shows
    the count, and the first write with count >= 2 makes the cause decisive and ends the
    spawn (the policy's two repeats), whichever write the page saw first."""
    events = [(float(i), kubelet("Failed", not_found("gone"))) for i in range(30)] + [
        (330.0, kubelet("Failed", not_found("gone")))]
    writes = written_by_legacy(events)
    assert [w["count"] for w in writes] == [*range(1, 26), 31]
    formatter = EventFormatter()
    first = formatter.format_event(writes[0])
    alone = assess([first], now=1.0, first_seen={first["id"]: 1.0})
    assert not alone.stop and not alone.held and alone.diagnosis is not None
    # a page (or a hub) that saw the first write, then the 25th
    later = formatter.format_event(writes[24])
    assert later["id"] == first["id"] and later["count"] == 25
    verdict = assess([later], now=2.0, first_seen={first["id"]: 1.0})
    assert verdict.stop and verdict.diagnosis is not None and verdict.diagnosis["count"] == 25
    assert decide([later], now=2.0, first_seen={first["id"]: 1.0}).state == "hopeless"
    assert record_row(dict(later), later["id"])["count_text"] == "25"
    assert record_row(dict(formatter.format_event(writes[-1])), None)["count_text"] == "31"


def scheduler(message: str) -> dict[str, Any]:
    return build_event(namespace="default", involved=dict(POD), reason="NotTriggerScaleUp", message=message,
                       event_type="Normal", component="cluster-autoscaler", api="events.k8s.io",
                       action="ScaleUp")


NO_GROUP = "pod didn't trigger scale-up: 1 node(s) didn't match Pod's node affinity/selector"


def test_a_cause_written_as_new_events_holds_by_its_count_and_its_first_sighting() -> None:
    """A events.k8s.io series ends after 6 quiet minutes (and starts over when the pod's
    resourceVersion moves): the next occurrence is a new event, count 1. Once the cause came
    back it has held, though no single record counts 2; and the hold time runs from the
    cause's first sighting, not the newest event's."""
    store, written = ObjectStore(), {}
    series = SeriesRecorder(store, written)
    first = series.record(scheduler(NO_GROUP), now=0.0)
    series.finish(now=360.0)  # a single event is forgotten 6 minutes on
    again = series.record(scheduler(NO_GROUP), now=400.0)
    assert first is not None and again is not None
    assert first["metadata"]["name"] != again["metadata"]["name"] and "series" not in again
    formatter = EventFormatter()
    records = [formatter.format_event(first), formatter.format_event(again)]
    assert records[0]["fatal"] is True and records[0]["message"] == records[1]["message"]
    counted = FailFastPolicy(repeats=2, hold_seconds=0)
    assert assess(records[:1], now=10.0, policy=counted).stop is False
    assert assess(records, now=10.0, policy=counted).stop is True
    # time alone: a policy that waits 60 s, the newest event seen just now
    timed = FailFastPolicy(repeats=0, hold_seconds=60)
    seen = {records[0]["id"]: 0.0, records[1]["id"]: 65.0}
    assert assess(records[1:], now=65.0, first_seen=seen, policy=timed).stop is False
    assert assess(records, now=65.0, first_seen=seen, policy=timed).stop is True


def test_a_scheduler_warning_the_series_keeps_quiet_holds_by_time() -> None:
    """The series' later occurrences are written only when it has been quiet 6 minutes or
    at the 30-minute refresh: the page sees count 2 at most. With a policy that wants three
    repeats the hold time decides, and says when to look again."""
    store, written = ObjectStore(), {}
    series = SeriesRecorder(store, written)
    writes = [series.record(scheduler(NO_GROUP), now=float(t)) for t in range(0, 300, 10)]
    shown = [w for w in writes if w is not None]
    assert [(w.get("series") or {}).get("count", 1) for w in shown] == [1, 2]
    record = EventFormatter().format_event(shown[-1])
    policy = FailFastPolicy(repeats=3, hold_seconds=60)
    early = assess([record], now=30.0, first_seen={record["id"]: 0.0}, policy=policy)
    assert not early.stop and early.held and early.recheck_in == 30.0
    assert assess([record], now=60.0, first_seen={record["id"]: 0.0}, policy=policy).stop


async def test_a_verdict_rides_on_the_last_record_of_the_change_it_follows() -> None:
    """The kubelet writes a retry's events together (the pull's count, then the "not found"
    one's): the hub may take both in one batch, and the "hopeless" verdict they make must
    reach the page after both rows, never beside a "not found" row still counted once."""
    from richprogress.model.timeline import SpawnTimeline
    from richprogress.stream.broadcast import TimelineBroadcast
    from richprogress.stream.live_diagnosis import LiveDiagnoser
    from richprogress.stream.progress_events import progress_events

    formatter = EventFormatter()
    pull = kubelet("Pulling", 'Pulling image "quay.io/x/nb:gone"', "Normal")
    failed = kubelet("Failed", not_found("gone"))
    first = [formatter.format_event(written) for written in written_by_legacy([(0.0, pull), (0.0, failed)])]
    again = [formatter.format_event(written) for written in written_by_legacy(
        [(0.0, pull), (0.0, failed), (1.0, pull), (1.0, failed)])[2:]]
    assert [r["count"] for r in again] == [2, 2] and [r["id"] for r in again] != [r["id"] for r in first]
    # the same events (ids) as the first pass, counted twice
    again = [{**r, "id": f["id"]} for r, f in zip(again, first, strict=True)]

    timeline, broadcast = SpawnTimeline(), TimelineBroadcast()
    live = broadcast.live = LiveDiagnoser(FailFastPolicy(enabled=False, repeats=2, hold_seconds=0))

    def add(records: list[dict[str, Any]]) -> None:
        for record in records:
            stored, _ = timeline.add(record)  # type: ignore[arg-type]
            live.note(timeline, stored)

    add(first)
    reader = progress_events(lambda: (timeline, broadcast))
    sent = [await reader.__anext__() for _ in first]
    assert [e.get("verdict", {}).get("state") for e in sent] == [None, "blocked"]
    add(again)  # one batch for the reader
    sent = [await reader.__anext__() for _ in again]
    assert [(e["record"]["reason"], e["record"]["count"]) for e in sent] == [("Pulling", 2), ("Failed", 2)]
    assert [e.get("verdict", {}).get("state") for e in sent] == [None, "hopeless"]
    await reader.aclose()
