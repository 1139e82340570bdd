"""Property test: whatever dict arrives, format_event returns a full record and never raises."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from richprogress.model.records import PHASE_NAMES, SEVERITIES
from richprogress.wording.fields import normalize_event
from richprogress.wording.formatter import EventFormatter
from tests.helpers.paths import DATA

PEER_RULES = DATA / "kubespawner-pr910" / "default-rules.json"

# Any text, including lone surrogates (category Cs) that broken producers can send.
any_text = st.text(alphabet=st.characters(blacklist_categories=()), max_size=40)
# Text shaped like real event wording, so the rules' deeper branches get exercised too.
real_words = st.sampled_from([
    "Scheduled", "FailedScheduling", "Pulling", "Pulled", "Failed", "BackOff", "Created", "Started",
    "TriggeredScaleUp", "NotTriggerScaleUp", "FailedMount", "Evicted", "OOMKilling", "kubelet",
    "default-scheduler", "cluster-autoscaler", "spec.containers{notebook}", "spec.initContainers{",
    'Pulling image "', 'Failed to pull image "x": not found', "0/5 nodes are available: 2 Insufficient cpu, ",
    "3 node(s) didn't match Pod's node affinity/selector. preemption: ", "pod didn't trigger scale-up: ",
    "Successfully pulled image \"a:b\" in 2m3.4s", "1 node(s) had untolerated taint {a: }, ",
    "Warning", "Normal", "2026-11-29T21:33:30Z", "2026-11-29T21:33:30.123+02:00",
])
leaf = st.none() | st.booleans() | st.integers() | st.floats() | any_text | real_words
junk = st.recursive(leaf, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text | real_words, inner,
                                                                                        max_size=4), max_leaves=12)
text_ish = st.one_of(real_words, any_text, st.lists(real_words | any_text, max_size=6).map("".join), junk)
big_text = st.builds(lambda s, n: (s or "x") * n, any_text | real_words, st.integers(1, 20_000 // 8))

involved = st.dictionaries(
    st.sampled_from(["kind", "name", "namespace", "fieldPath", "uid"]), text_ish, max_size=5
) | junk
event = st.fixed_dictionaries(
    {},
    optional={
        "metadata": st.dictionaries(st.sampled_from(["uid", "name", "namespace", "creationTimestamp"]), text_ish)
        | junk,
        "involvedObject": involved,
        "reason": text_ish,
        "message": text_ish | big_text,
        "type": text_ish,
        "source": st.dictionaries(st.sampled_from(["component", "host"]), text_ish) | junk,
        "reportingComponent": text_ish,
        "count": junk,
        "series": st.dictionaries(st.sampled_from(["count", "lastObservedTime"]), junk) | junk,
        "firstTimestamp": text_ish,
        "lastTimestamp": text_ish,
        "eventTime": text_ish,
    },
) | junk

FORMATTERS = [EventFormatter()]
if PEER_RULES.exists():
    FORMATTERS.append(EventFormatter(rules=json.loads(PEER_RULES.read_text())))


def check_record(record: Any) -> None:
    assert set(record) >= {"id", "timestamp", "first_timestamp", "type", "severity", "reason", "object",
                           "component", "count", "message", "raw_message", "rule", "phase", "hint"}
    assert isinstance(record["message"], str) and record["message"]
    assert isinstance(record["raw_message"], str)
    assert isinstance(record["id"], str) and record["id"]
    assert isinstance(record["type"], str) and record["type"]
    assert record["severity"] in SEVERITIES
    assert record["phase"] is None or record["phase"] in PHASE_NAMES
    assert type(record["count"]) is int and record["count"] >= 1
    for key in ("timestamp", "first_timestamp"):
        assert record[key] is None or (isinstance(record[key], str) and record[key].endswith("Z"))
    assert set(record["object"]) == {"kind", "name", "container", "field_path"}
    # Serializable as UTF-8 JSON: what the SSE stream and the CLI will do with it.
    json.dumps(record, ensure_ascii=False).encode("utf-8")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event=event)
def test_format_event_never_raises(event: Any) -> None:
    for formatter in FORMATTERS:
        check_record(formatter.format_event(event))


@settings(max_examples=150, deadline=None)
@given(message=any_text | big_text | real_words, ident=st.none() | any_text, stamp=st.none() | text_ish)
def test_format_message_never_raises(message: str, ident: Any, stamp: Any) -> None:
    check_record(FORMATTERS[0].format_message(message, id=ident, timestamp=stamp))


# Events shaped like the API's (a uid, dicts where dicts belong) with odd values inside: the
# shape the formatter's cached fast path reads, so it is compared with the careful reader.
# Mostly plain text (what the fast path takes), sometimes anything.
mostly_text = st.one_of(real_words, real_words, st.just(""), st.none(), any_text, text_ish)
shaped_event = st.fixed_dictionaries(
    {
        "metadata": st.fixed_dictionaries({"uid": real_words | any_text}),
        "involvedObject": st.dictionaries(st.sampled_from(["kind", "name", "namespace", "fieldPath"]), mostly_text),
    },
    optional={
        "reason": mostly_text,
        "message": mostly_text,
        "type": mostly_text,
        "source": st.none() | st.dictionaries(st.sampled_from(["component", "host"]), mostly_text) | junk,
        "reportingComponent": mostly_text,
        "count": junk,
        "series": st.none() | st.dictionaries(st.sampled_from(["count", "lastObservedTime"]), mostly_text | junk),
        "firstTimestamp": mostly_text,
        "lastTimestamp": mostly_text,
        "eventTime": mostly_text,
    },
)


# Kept across examples: their caches fill with earlier examples' events, which must never
# decide the record of another event.
WARM = [EventFormatter(rules=formatter.rules) for formatter in FORMATTERS]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(shaped_event, min_size=1, max_size=3))
def test_warm_formatter_gives_the_records_of_a_fresh_one(events: list[dict[str, Any]]) -> None:
    for warm, formatter in zip(WARM, FORMATTERS, strict=True):
        for event in events + events:  # the second round answers from the cache
            # the careful reader and the rules, with no cache in between, give the truth
            assert warm.format_event(event) == formatter._build(normalize_event(event))
