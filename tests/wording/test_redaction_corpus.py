"""Redaction measured on its corpus (``tests/wording/redaction_corpus/``): fake secrets in
the formats vendors, configs and command lines give them, inside real-looking log lines,
and ordinary log lines that must stay exactly as they are.

The tuned part is what the rules were written against: all of it must pass. The held-out
part was written apart and no rule was written against it: its rates are measured (the
benchmark prints them) and must not fall below a floor, so a change that makes the rules
fit the tuned part worse in general fails here.
"""

from __future__ import annotations

import pytest

from richprogress.wording.redaction import redact
from tests.helpers.redaction_corpus import (
    PARTS,
    caught,
    exact,
    kept,
    ordinary_entries,
    secret_entries,
)

#: the least each part not wholly passed may score, by measure: a little under what it
#: scored. heldout (never tuned against) scored 100% caught, 97% exact, 100% kept when it
#: came. tuned2 was a second set written apart, first scored as held out (93% caught, 85%
#: exact, 83% kept), then tuned against: 104/105 caught (a Kafka API key as a JAAS
#: username is left), 95/105 exact, 92/92 kept
HELD_OUT_FLOORS = {
    ("heldout", "caught"): 0.95, ("heldout", "exact"): 0.95, ("heldout", "kept"): 0.95,
    ("tuned2", "caught"): 0.99, ("tuned2", "exact"): 0.90, ("tuned2", "kept"): 1.0,
}  # fmt: skip


def test_the_corpus_is_big_enough_to_mean_something() -> None:
    secrets = sum(len(secret_entries(part)) for part in PARTS)
    ordinary = sum(len(ordinary_entries(part)) for part in PARTS)
    assert secrets >= 100 and ordinary >= 100, (secrets, ordinary)
    assert len(secret_entries("heldout")) >= 30 and len(ordinary_entries("heldout")) >= 30


def test_every_tuned_secret_goes_and_every_tuned_ordinary_line_stays() -> None:
    for score in (caught(redact, "tuned"), exact(redact, "tuned"), kept(redact, "tuned")):
        assert score.rate == 1.0, "\n".join(score.failures)


@pytest.mark.parametrize(("part", "measure"), HELD_OUT_FLOORS, ids="-".join)
def test_the_held_out_parts_stay_above_their_floors(part: str, measure: str) -> None:
    score = {"caught": caught, "exact": exact, "kept": kept}[measure](redact, part)
    assert score.rate >= HELD_OUT_FLOORS[part, measure], f"{score}\n" + "\n".join(score.failures)


def test_a_leak_is_seen_by_the_scorer() -> None:
    """The scorer itself: a redactor that keeps everything catches nothing and keeps all;
    one that redacts everything keeps nothing."""
    assert caught(lambda text: text, "heldout").good == 0
    assert kept(lambda text: text, "heldout").rate == 1.0
    assert kept(lambda text: "[redacted]", "heldout").good == 0
