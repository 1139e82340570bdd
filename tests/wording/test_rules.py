"""The rule engine: #910 semantics, our extensions, and errors that name the bad rule."""

from __future__ import annotations

import re
import tracemalloc
from typing import Any

import pytest
from traitlets import TraitError
from traitlets.config import Config

from richprogress.wording.fields import normalize_event
from richprogress.wording.formatter import EventFormatter
from richprogress.wording.rules import RuleError, RuleSet, load_rules


def values(**event: Any) -> tuple[str, ...]:
    return normalize_event(event).match_values


def first(rules: Any, **event: Any) -> tuple[str, dict[str, str]] | None:
    found = RuleSet(load_rules(rules)).match(values(**event))
    return None if found is None else (found[0].id, found[1])


BAD_RULES = [
    pytest.param({"match": {"reason": "(unclosed"}, "template": "x"}, "not a valid regular expression",
                 id="invalid-regex"),
    pytest.param({"match": {"colour": "red"}, "template": "x"}, "unknown match field 'colour'",
                 id="unknown-field"),
    pytest.param({"match": {"reason": "(?P<a>Pull)"}, "template": "{a} {image}"}, "image",
                 id="template-names-missing-group"),
    pytest.param({"match": {"reason": "Pull"}, "template": "{0}"}, "positional field", id="positional-field"),
    pytest.param({"match": {"reason": "Pull"}, "template": "{unclosed"}, "not a valid format string",
                 id="broken-format-string"),
    pytest.param({"match": {"reason": "Pull"}, "template": 42}, "template must be a string or a callable",
                 id="template-wrong-type"),
    pytest.param({"match": {"reason": 3}, "template": "x"}, "must be a regex string", id="pattern-wrong-type"),
    pytest.param({"match": {"reason": re.compile(b"x")}, "template": "x"}, "not bytes", id="bytes-pattern"),
    pytest.param({"match": ["reason"], "template": "x"}, "'match' must be a dict", id="match-not-dict"),
    pytest.param({"template": "x"}, "missing required key 'match'", id="no-match"),
    pytest.param({"match": {}}, "missing required key 'template'", id="no-template"),
    pytest.param({"match": {}, "template": "x", "templte": "y"}, "unknown key(s) templte", id="typo-key"),
    pytest.param({"match": {}, "template": "x", "severity": "fatal"}, "severity must be one of",
                 id="bad-severity"),
    pytest.param({"match": {}, "template": "x", "phase": "cooking"}, "phase must be one of", id="bad-phase"),
    pytest.param({"match": {"reason": "(?P<a>x)"}, "template": "x", "hint": "{b}"}, "hint names group(s) b",
                 id="hint-names-missing-group"),
    pytest.param({"match": {}, "template": lambda node: node}, "requires argument 'node'",
                 id="callable-needs-missing-group"),
    pytest.param({"id": "", "match": {}, "template": "x"}, "'id' must be a non-empty string", id="empty-id"),
    pytest.param("not a rule", "a rule must be a dict", id="rule-not-dict"),
]


@pytest.mark.parametrize(("rule", "problem"), BAD_RULES)
def test_bad_rule_error_names_rule_and_problem(rule: Any, problem: str) -> None:
    good = {"id": "fine", "match": {"reason": "Pulling"}, "template": "ok"}
    with pytest.raises(RuleError) as info:
        load_rules([good, rule])
    assert "rules[1]" in str(info.value)
    assert problem in str(info.value)


def test_bad_rule_in_dict_is_named_by_key() -> None:
    with pytest.raises(RuleError, match=r"rules\['02-broken'\].*unknown match field"):
        load_rules({"01-ok": {"match": {}, "template": "x"}, "02-broken": {"match": {"nope": ""}, "template": "x"}})


def test_bad_rule_error_names_explicit_id() -> None:
    with pytest.raises(RuleError, match=r"rules\[0\] \(id 'my-rule'\)"):
        load_rules([{"id": "my-rule", "match": {"reason": "("}, "template": "x"}])


def test_duplicate_ids_are_refused() -> None:
    with pytest.raises(RuleError, match="already used by rules\\[0\\]"):
        load_rules([{"id": "a", "match": {}, "template": "x"}, {"id": "a", "match": {}, "template": "y"}])


@pytest.mark.parametrize("option", ["rules", "extra_rules"])
def test_config_error_at_start_names_option_and_rule(option: str) -> None:
    with pytest.raises(TraitError, match=rf"EventFormatter\.{option}\[0\].*unknown match field 'colour'"):
        EventFormatter(**{option: [{"match": {"colour": "red"}, "template": "x"}]})


def test_config_through_traitlets_config() -> None:
    config = Config()
    config.EventFormatter.extra_rules = [{"match": {"reason": "Pulling"}, "template": "mine", "id": "mine"}]
    record = EventFormatter(config=config).format_event({"reason": "Pulling", "message": 'Pulling image "x"'})
    assert (record["message"], record["rule"]) == ("mine", "mine")


def test_not_a_list_or_dict() -> None:
    with pytest.raises(RuleError, match="must be a list or a dict"):
        load_rules("rules")


# ---- #910 semantics ----------------------------------------------------------------


def test_match_is_anchored_at_the_start_only() -> None:
    rules = [{"match": {"reason": "Fail"}, "template": "x"}]
    assert first(rules, reason="FailedScheduling") is not None
    assert first(rules, reason="NotFailed") is None


def test_all_fields_must_match() -> None:
    rules = [{"match": {"reason": "Pulled", "reportingComponent": "kubelet"}, "template": "x"}]
    assert first(rules, reason="Pulled", source={"component": "kubelet"}) is not None
    assert first(rules, reason="Pulled", source={"component": "other"}) is None


def test_reporting_component_prefers_reporting_component_over_source() -> None:
    rules = [{"match": {"reportingComponent": "new"}, "template": "x"}]
    assert first(rules, reportingComponent="new", source={"component": "old"}) is not None
    assert first(rules, reportingComponent="", source={"component": "new"}) is not None


def test_missing_fields_match_as_empty_string() -> None:
    rules = [{"match": {"fieldPath": r"\Z"}, "template": "x"}]
    assert first(rules, reason="Any") is not None


def test_first_match_wins_and_groups_merge_with_missing_as_empty() -> None:
    rules = [
        {"id": "one", "match": {"reason": "(?P<a>Pull)(?P<b>ing)?", "message": "(?P<m>.*)"}, "template": "{a}{b}{m}"},
        {"id": "two", "match": {"reason": "Pull"}, "template": "never"},
    ]
    assert first(rules, reason="Pulled", message="hi") == ("one", {"a": "Pull", "b": "", "m": "hi"})


def test_same_group_in_two_fields_later_field_wins() -> None:
    rules = [{"match": {"message": "(?P<x>m)", "reason": "(?P<x>r)"}, "template": "{x}"}]
    assert first(rules, reason="r", message="m") == ("rule-0", {"x": "r"})
    rules = [{"match": {"reason": "(?P<x>r)", "message": "(?P<x>m)"}, "template": "{x}"}]
    assert first(rules, reason="r", message="m") == ("rule-0", {"x": "m"})


def test_our_extra_match_fields() -> None:
    rules = [{"match": {"kind": "PersistentVolumeClaim", "name": "claim-(?P<user>.+)", "container": r"\Z"},
              "template": "{user}"}]
    event = {"involvedObject": {"kind": "PersistentVolumeClaim", "name": "claim-alice"}}
    assert first(rules, **event) == ("rule-0", {"user": "alice"})


def test_template_failing_at_runtime_keeps_raw_message(caplog: pytest.LogCaptureFixture) -> None:
    def boom(**groups: str) -> str:
        raise RuntimeError("no")

    formatter = EventFormatter(rules=[{"id": "boom", "match": {}, "template": boom}])
    for _ in range(3):
        record = formatter.format_event({"message": "original", "reason": "X"})
        assert (record["message"], record["rule"]) == ("original", None)
    assert sum("boom" in r.getMessage() for r in caplog.records) == 1


def test_callable_returning_non_text_keeps_raw_message() -> None:
    formatter = EventFormatter(rules=[{"match": {}, "template": lambda **g: None}])
    assert formatter.format_event({"message": "original"})["message"] == "original"


def test_extra_rules_win_over_defaults_and_rules_replace_them() -> None:
    event = {"reason": "Scheduled", "message": "Successfully assigned a/b to n1"}
    extra = EventFormatter(extra_rules=[{"id": "x", "match": {"reason": "Scheduled"}, "template": "mine"}])
    assert extra.format_event(event)["message"] == "mine"
    pulling = {"reason": "Pulling", "message": 'Pulling image "i"',
               "involvedObject": {"fieldPath": "spec.containers{notebook}"}}
    assert extra.format_event(pulling)["rule"] == "image-pulling"
    replaced = EventFormatter(rules=[{"match": {"reason": "Nothing"}, "template": "x"}])
    assert replaced.format_event(event)["message"] == event["message"]
    assert len(replaced.ruleset) == 1


def test_changing_rules_recompiles() -> None:
    formatter = EventFormatter(rules=[{"match": {}, "template": "first"}])
    assert formatter.format_event({"message": "m"})["message"] == "first"
    formatter.rules = [{"match": {}, "template": "second"}]
    assert formatter.format_event({"message": "m"})["message"] == "second"


def test_rule_severity_phase_and_hint() -> None:
    rules = [{"match": {"message": "(?P<what>.*)"}, "template": "T {what}", "severity": "error", "phase": "image",
              "hint": "H {what}"}]
    record = EventFormatter(rules=rules).format_event({"message": "m", "type": "Normal"})
    assert (record["message"], record["severity"], record["phase"], record["hint"]) == ("T m", "error", "image", "H m")


def test_severity_without_rule_follows_type() -> None:
    formatter = EventFormatter(rules=[{"match": {}, "template": "t"}])
    assert formatter.format_event({"type": "Warning", "message": "m"})["severity"] == "warning"
    assert formatter.format_event({"type": "Normal", "message": "m"})["severity"] == "info"


def test_matching_does_not_grow_memory() -> None:
    # #910 appended its fallback rule on every call; matching here must stay flat.
    ruleset = EventFormatter().ruleset
    event_values = values(reason="Pulling", message='Pulling image "x"', involvedObject={"fieldPath":
                          "spec.containers{notebook}"})
    for _ in range(200):
        ruleset.match(event_values)
    rules_before = len(ruleset.rules)
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for _ in range(20_000):
            ruleset.match(event_values)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    growth = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    assert growth < 20_000
    assert len(ruleset.rules) == rules_before


def test_memo_has_a_ceiling() -> None:
    ruleset = RuleSet(load_rules([{"match": {"reason": "A"}, "template": "x"}]))
    for i in range(5000):
        ruleset.match(values(reason=f"R{i}"))
    assert len(ruleset._memo) <= 2048


def test_memo_key_spells_out_the_key_fields() -> None:
    from richprogress.wording.rules import _KEY_FIELDS

    assert _KEY_FIELDS == (0, 1, 2, 4, 5, 7, 8)


@pytest.mark.parametrize(
    "template",
    ["{a} and {b}", "100% {a} {{literal}} %(b)s %s", "{a!r}", "{a:>6}", "{a[0]}", "no fields", "{a}{a}"],
    ids=["plain", "percent-and-braces", "conversion", "format-spec", "index", "literal", "repeat"],
)
def test_renderer_gives_what_str_format_gives(template: str) -> None:
    from richprogress.wording.rules import make_renderer

    groups = {"a": "x%y", "b": "{b}"}
    assert make_renderer(template)(groups) == template.format(**groups)
