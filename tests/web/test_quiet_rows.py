"""Quiet and hidden records: a rule's ``show``, ``c.EventFormatter.quiet_reasons`` and
``hidden_reasons``, checked at hub start; the pages show a quiet record as a muted row and a
hidden one as no row (but in "Copy details"); a FailedScheduling goes quiet once a scale-up
is in hand; and the diagnosis still reads every record, so a quiet or hidden cause is named.
"""

from __future__ import annotations

from typing import Any

import pytest

from richprogress.settings_check import SettingsError
from richprogress.story.diagnosis import diagnose
from richprogress.story.verdict import decide
from richprogress.wording.formatter import EventFormatter
from richprogress.wording.rules import RuleError, load_rules
from tests.helpers.config import loaded
from tests.helpers.pages import failure_page, record, timeline


def event(uid: str, reason: str, message: str, *, type_: str = "Warning", component: str = "default-scheduler",
          kind: str = "Pod", name: str = "jupyter-alice") -> dict[str, Any]:
    return {
        "metadata": {"uid": uid},
        "involvedObject": {"kind": kind, "name": name, "namespace": "jh"},
        "reason": reason,
        "message": message,
        "type": type_,
        "source": {"component": component},
        "count": 1,
        "lastTimestamp": "2026-12-01T10:00:00Z",
    }


NO_CPU = event("1", "FailedScheduling", "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.")

# -- the rule format ----------------------------------------------------------------------


@pytest.mark.parametrize("show", ["row", "quiet", "hidden"])
def test_a_rule_may_say_how_its_records_show(show: str) -> None:
    rules = [{"match": {"reason": "FailedScheduling"}, "template": "Waiting for a machine", "show": show}]
    record_ = EventFormatter(rules=rules).format_event(NO_CPU)
    assert record_["message"] == "Waiting for a machine"
    # "row" is the default: the record of a plain row has no key
    assert record_.get("show") == (None if show == "row" else show)


def test_a_typo_in_show_is_refused_naming_the_rule() -> None:
    with pytest.raises(RuleError) as refused:
        load_rules([{"id": "calm", "match": {"reason": "X"}, "template": "x", "show": "quite"}], option="extra_rules")
    assert str(refused.value) == "extra_rules[0] (id 'calm'): show must be one of row, quiet, hidden, not 'quite'"


def test_a_910_rule_gives_a_record_without_show() -> None:
    rules = [{"match": {"reason": "FailedScheduling", "message": r"0/(?P<n>\d+)"}, "template": "{n} nodes, none free"}]
    assert "show" not in EventFormatter(rules=rules).format_event(NO_CPU)


# -- quiet_reasons and hidden_reasons -----------------------------------------------------


def test_quiet_reasons_quiet_an_event_by_its_reason_and_keep_its_words() -> None:
    plain = EventFormatter().format_event(NO_CPU)
    quiet = EventFormatter(quiet_reasons=["FailedScheduling"]).format_event(NO_CPU)
    assert "show" not in plain
    assert quiet == {**plain, "show": "quiet"}


def test_hidden_reasons_win_over_quiet_reasons_and_rules() -> None:
    rules = [{"match": {"reason": "FailedScheduling"}, "template": "x", "show": "quiet"}]
    formatter = EventFormatter(extra_rules=rules, quiet_reasons=["FailedScheduling"], hidden_reasons=["FailedScheduling"])
    assert formatter.format_event(NO_CPU)["show"] == "hidden"
    # a reason in neither list keeps the rule's
    other = event("2", "Pulling", 'Pulling image "x"', type_="Normal", component="kubelet")
    assert "show" not in formatter.format_event(other)


def test_the_reason_lists_do_not_leak_into_the_record_cache() -> None:
    formatter = EventFormatter(quiet_reasons=["FailedScheduling"])
    first = formatter.format_event(NO_CPU)
    again = formatter.format_event({**NO_CPU, "metadata": {"uid": "1b"}})  # the cached wording
    assert first["show"] == again["show"] == "quiet"
    formatter.quiet_reasons = []
    assert "show" not in formatter.format_event({**NO_CPU, "metadata": {"uid": "1c"}})


async def test_the_async_path_quiets_too() -> None:
    formatter = EventFormatter(quiet_reasons=["FailedScheduling"], format_hook=lambda spawner, event, record: None)
    assert (await formatter.format_event_async(NO_CPU))["show"] == "quiet"


@pytest.mark.parametrize(
    ("line", "value", "why"),
    [
        ('c.EventFormatter.quiet_reasons = "FailedScheduling"\n', "'FailedScheduling'", 'a list of event reasons, e.g. ["FailedScheduling"]'),
        ('c.EventFormatter.quiet_reasons = ["Failed.*"]\n', "'Failed.*'", "is no event reason (one word, no regex)"),
        ('c.EventFormatter.hidden_reasons = [""]\n', "['']", "is no event reason"),
        ('c.EventFormatter.extra_rules = [{"match": {"reason": "X"}, "template": "x", "show": "muted"}]\n',
         "c.EventFormatter.extra_rules[0]", "show must be one of row, quiet, hidden, not 'muted'"),
    ],
)
def test_bad_show_settings_stop_the_hub_in_one_line(line: str, value: str, why: str) -> None:
    with pytest.raises(SettingsError) as refused:
        loaded(line)
    text = str(refused.value)
    assert "\n" not in text and text.startswith("richprogress: c.EventFormatter.")
    assert value in text and why in text, text


def test_good_show_settings_load() -> None:
    loaded('c.EventFormatter.quiet_reasons = ["FailedScheduling"]\nc.EventFormatter.hidden_reasons = ["NodeHasSufficientMemory"]\n'
           'c.EventFormatter.extra_rules = [{"match": {"reason": "X"}, "template": "x", "show": "hidden"}]\n')


# -- the default rules ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # a new machine's kubelet, once, before its first disk measurement (a Warning)
        (event("d", "InvalidDiskCapacity", "invalid capacity 0 on image filesystem", kind="Node", name="node-9",
               component="kubelet"), "quiet"),
        (event("a", "NodeAllocatableEnforced", "Updated Node Allocatable limit across pods", type_="Normal",
               kind="Node", name="node-9", component="kubelet"), "quiet"),
        (event("m", "NodeHasSufficientMemory", "Node node-9 status is now: NodeHasSufficientMemory", type_="Normal",
               kind="Node", name="node-9", component="kubelet"), "quiet"),
        (event("p", "ProbeWarning", "Readiness probe warning: Probe terminated redirects", component="kubelet")
         | {"involvedObject": {"kind": "Pod", "name": "jupyter-alice", "fieldPath": "spec.containers{notebook}"}}, "quiet"),
        # the scheduler's own warning is a row: alone, nobody knows a machine is coming
        (NO_CPU, None),
        (event("s", "TriggeredScaleUp", "pod triggered scale-up: [{pool 1->2 (max: 5)}]", type_="Normal",
               component="cluster-autoscaler"), None),
    ],
)
def test_the_default_rules_quiet_only_what_is_harmless(raw: dict[str, Any], expected: str | None) -> None:
    assert EventFormatter().format_event(raw).get("show") == expected


# -- the diagnosis reads every record --------------------------------------------------------


@pytest.mark.parametrize("show", ["quiet", "hidden"])
def test_a_quiet_or_hidden_fatal_record_is_still_the_cause(show: str) -> None:
    pulled = record(1, 5, "info", "Scheduled", "Found a machine.", phase="scheduled", container=None)
    fatal = {**record(2, 8, "error", "Failed", "The image x:1 does not exist.", phase="image"), "fatal": True, "show": show,
             "rule": "image-not-found"}
    verdict = decide([pulled, fatal], outcome="failed")  # type: ignore[list-item]
    assert verdict.cause is not None and verdict.cause.record_id == "uid-2"
    assert diagnose([pulled, fatal])["record_id"] == "uid-2"  # type: ignore[list-item]


# -- the failure page ---------------------------------------------------------------------


def rows_of(doc: Any) -> dict[str, dict[str, str]]:
    return {row.attrs["data-record-id"]: row.attrs for row in doc.by_id("rp-timeline").find_all("div", class_="rp-event")}


def test_the_failure_page_mutes_quiet_rows_and_leaves_hidden_ones_to_the_report() -> None:
    records = [
        record(1, 2, "info", "Scheduled", "Found a machine.", phase="scheduled", container=None),
        {**record(2, 3, "info", "NodeHasSufficientMemory", "Room enough on the machine.", phase="scheduled"), "show": "hidden"},
        {**record(3, 4, "warning", "ProbeWarning", "The probe passed, with a warning.", phase="starting"), "show": "quiet"},
        record(4, 9, "error", "Failed", "The image x:1 does not exist.", phase="image", count=3),
    ]
    doc = failure_page("alice", timeline(records))
    rows = rows_of(doc)
    assert "uid-2" not in rows
    assert rows["uid-3"].get("data-show") == "quiet"
    assert "data-show" not in rows["uid-1"] and "data-show" not in rows["uid-4"]
    # the hidden record is in the plain-text report ("Copy details"), with its own words
    assert "Room enough on the machine." in doc.by_id("rp-report").text()
    # "(N events)" counts the rows shown: Scheduled, the quiet one, the error
    assert "(3 events" in doc.by_id("rp-timeline-title").words()


def test_a_scale_up_quiets_the_failed_scheduling_but_never_the_cause() -> None:
    waiting = record(1, 1, "warning", "FailedScheduling", "No machine has enough free CPU.", phase="scheduling", container=None)
    storage = record(2, 1.5, "warning", "FailedScheduling", "Your storage is not ready.", phase="volume", container=None)
    scale_up = record(3, 2, "info", "TriggeredScaleUp", "Adding a machine.", phase="scaling", container=None)
    later = {**record(5, 40, "warning", "FailedScheduling", "No machine has enough free CPU.", phase="scheduling",
                      container=None), "id": "uid-5"}
    scheduled = record(6, 60, "info", "Scheduled", "Found a machine.", phase="scheduled", container=None)
    failed = record(7, 70, "error", "Failed", "The image x:1 does not exist.", phase="image")
    rows = rows_of(failure_page("alice", timeline([waiting, storage, scale_up, later, scheduled, failed])))
    # the one before the scale-up and the one after it; not the one about storage
    assert rows["uid-1"].get("data-show") == "quiet" and rows["uid-5"].get("data-show") == "quiet"
    assert "data-show" not in rows["uid-2"] and "data-show" not in rows["uid-3"]
    # the scale-up came to nothing: the FailedScheduling the spawn ended on is the cause, in full
    ended = rows_of(failure_page("alice", timeline([waiting, scale_up, later])))
    assert ended["uid-1"].get("data-show") == "quiet"
    assert "data-show" not in ended["uid-5"] and "rp-decisive" in ended["uid-5"]["class"]
    # with no scale-up, the scheduler's warning is the cause, in full
    alone = rows_of(failure_page("alice", timeline([waiting])))
    assert "data-show" not in alone["uid-1"] and "rp-decisive" in alone["uid-1"]["class"]


def test_a_hidden_cause_gets_its_row() -> None:
    fatal = {**record(1, 8, "error", "Failed", "The image x:1 does not exist.", phase="image"), "show": "hidden"}
    rows = rows_of(failure_page("alice", timeline([fatal])))
    assert "data-show" not in rows["uid-1"] and "rp-decisive" in rows["uid-1"]["class"]
