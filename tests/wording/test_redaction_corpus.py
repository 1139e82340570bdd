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
from tests.helpers.redaction_corpus import caught, exact, kept, ordinary_entries, secret_entries

#: the least the held-out part may score (it scores 100% caught, 97% exact, 100% kept)
HELD_OUT_FLOOR = 0.95


def test_the_corpus_is_big_enough_to_mean_something() -> None:
    secrets = sum(len(secret_entries(part)) for part in ("tuned", "heldout"))
    ordinary = sum(len(ordinary_entries(part)) for part in ("tuned", "heldout"))
    assert secrets >= 100 and ordinary >= 100, (secrets, ordinary)
    assert len(secret_entries("heldout")) >= 30 and len(ordinary_entries("heldout")) >= 30


def test_every_tuned_secret_goes_and_every_tuned_ordinary_line_stays() -> None:
    for score in (caught(redact, "tuned"), exact(redact, "tuned"), kept(redact, "tuned")):
        assert score.rate == 1.0, "\n".join(score.failures)


@pytest.mark.parametrize("measure", [caught, exact, kept], ids=["caught", "exact", "kept"])
def test_the_held_out_part_stays_above_its_floor(measure) -> None:  # noqa: ANN001 - one of three scorers
    score = measure(redact, "heldout")
    assert score.rate >= HELD_OUT_FLOOR, f"{score}\n" + "\n".join(score.failures)


def test_a_leak_is_seen_by_the_scorer() -> None:
    """The scorer itself: a redactor that keeps everything catches nothing and keeps all;
    one that redacts everything keeps nothing."""
    assert caught(lambda text: text, "heldout").good == 0
    assert kept(lambda text: text, "heldout").rate == 1.0
    assert kept(lambda text: "[redacted]", "heldout").good == 0
