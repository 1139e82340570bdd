"""A rule's regular expression that can take exponential time is refused when the rules
load (``wording.regex_safety``): Python's ``re`` cannot be interrupted, and one such
pattern on one odd message would hold the hub's event loop for minutes."""

from __future__ import annotations

import re

import pytest
from traitlets import TraitError

from richprogress.wording.formatter import EventFormatter
from richprogress.wording.regex_safety import backtracking_problem

#: each can split one string among its repeats in exponentially many ways
EXPONENTIAL = [
    r"(a+)+$",
    r"(a*)*b",
    r"(\w+\s?)*$",
    r"(?:\w+)*!",
    r"(\w+|x)*y",
    r"^(\d+)*$",
    r"([a-z]+\.?)+@",
    r"(x+x+)+y",
    r"(a{1,3})+$",
    r"(\s*\w+=\S+)*$",
    r"^(?:(?:[^:]+)*:)+$",
]

#: patterns admins write, with a text each must still match
SAFE = [
    (r"v\d+(\.\d+)*", "v1.2.3"),
    (r"(\w+,)*\w+", "a,b,c"),
    (r"(?P<image>\S+)", "quay.io/jupyter/base-notebook"),
    (r'Failed to pull image "(?P<image>[^"]+)"', 'Failed to pull image "x:1"'),
    (r"0/\d+ nodes are available(: .*)?", "0/3 nodes are available: 3 Insufficient cpu."),
    (r"(a++)+b", "aab"),
    (r"(?>a+)+b", "aab"),
    (r"(\d{2})+", "2026"),
    (r"(a+){2}", "aa"),
    (r"(?P<size>\d+(?:\.\d+)?)(?:Gi|Mi)", "1.5Gi"),
]


@pytest.mark.parametrize("pattern", EXPONENTIAL)
def test_a_repeat_inside_a_repeat_is_named(pattern: str) -> None:
    problem = backtracking_problem(pattern)
    assert problem is not None and "exponential" in problem


@pytest.mark.parametrize(("pattern", "text"), SAFE)
def test_patterns_whose_turns_are_set_apart_pass(pattern: str, text: str) -> None:
    assert backtracking_problem(pattern) is None
    assert re.search(pattern, text)


def test_the_rules_refuse_one_with_the_setting_named() -> None:
    rule = {"id": "slow", "match": {"message": r"Pulling (\w+\s?)*$"}, "template": "Pulling"}
    with pytest.raises(TraitError) as raised:
        EventFormatter(rules=[rule])
    text = str(raised.value)
    assert "'slow'" in text and "match['message']" in text and "exponential time" in text
    assert "possessive" in text  # and says how to write it instead


def test_the_default_rules_pass() -> None:
    EventFormatter()  # loads and checks every default rule's patterns
