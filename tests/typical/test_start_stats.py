"""The admin failures page's last day and week in words (richprogress/start_stats.py): the
sentences as a table, then from the real spawn-history store (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from richprogress.history import SpawnHistory
from richprogress.typical.start_stats import (
    causes_sentence,
    share,
    start_stats,
    starts_sentence,
    usually_sentence,
)
from tests.helpers import history_store as stored
from tests.helpers.history_store import T0, Clock
from tests.helpers.typical_store import fill

postgres_url = stored.postgres_url
store_url = stored.store_url
clock = stored.clock
make_store = stored.make_store


@pytest.mark.parametrize(
    ("counts", "words"),
    [
        ({}, "Last day: no server starts."),
        ({"ready": 1}, "Last day: 1 start, none failed."),
        ({"ready": 1150, "failed": 50, "stopped": 4}, "Last day: 1,204 starts, 50 failed (4%), 4 stopped by their user."),
        ({"ready": 999, "failed": 1}, "Last day: 1,000 starts, 1 failed (under 1%)."),
        ({"failed": 3}, "Last day: 3 starts, 3 failed (100%)."),
    ],
    ids=["none", "one", "some-failed", "few-failed", "all-failed"],
)
def test_starts_in_words(counts: dict[str, int], words: str) -> None:
    assert starts_sentence("Last day", counts) == words


def test_shares_never_read_as_zero_or_all_when_they_are_not() -> None:
    assert [share(0, 10), share(1, 1000), share(999, 1000), share(5, 0)] == ["0%", "under 1%", "over 99%", "0%"]


def test_usual_time_and_causes_in_words() -> None:
    assert usually_sentence([30.0] * 8 + [170.0, 200.0]) == "Usually ready in about 30 s (9 in 10 within 3 min)."
    assert usually_sentence([30.0] * 4) is None  # too few to say
    assert causes_sentence([("timeout", 9), ("image-not-found", 20), ("no-node-fits", 5), ("oom", 1)]) == (
        "Most failures: image-not-found (20), timeout (9), no-node-fits (5), and 1 other cause."
    )
    assert causes_sentence([("timeout", 1)]) == "Cause: timeout."
    assert causes_sentence([("timeout", 0)]) is None


def test_from_the_store(make_store: Callable[..., SpawnHistory], clock: Clock) -> None:
    store = make_store()
    clock.now = T0 + timedelta(days=1)
    fill(store, clock)  # 8 + 6 ready and 3 failed in the last 8 hours, 2 ready 30 days ago
    day, week = start_stats(store, clock.now)
    assert day["key"] == "day" and week["key"] == "week"
    assert day["starts"] == "Last day: 17 starts, 3 failed (18%)."
    assert week["starts"] == "Last week: 17 starts, 3 failed (18%)."
    # 6 x 20 s and 100..170 s: the median is 105 s
    assert day["usually"] == "Usually ready in about 2 min (9 in 10 within 3 min)."
    assert day["causes"] is not None and day["causes"].endswith("(3).")
