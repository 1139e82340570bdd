"""Typical start times: the numbers (pure functions), the cache, the admin's expected times,
and the words the pending page is to show.

Percentiles are checked against Python's ``statistics`` (an independent implementation);
time is a fake clock passed in, never a sleep.
"""

from __future__ import annotations

import json
import logging
import statistics
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from traitlets import TraitError
from traitlets.config import Config

from richprogress.model.records import PHASE_NAMES, PHASE_PROGRESS
from richprogress.model.timeline import SpawnTimeline
from richprogress.typical.cache import TypicalCache, TypicalTimes
from richprogress.typical.statistics import (
    SpawnSummary,
    merge_typical,
    percentile,
    summarize,
    typical_by_profile,
    typical_durations,
)
from richprogress.typical.words import (
    LONGER_THAN_USUAL,
    duration_words,
    longer_than_usual,
    progress_in_step,
    range_words,
    step_usually,
    usually_ready,
)
from richprogress.wording.formatter import EventFormatter
from tests.helpers.paths import DATA

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)


def spawn(
    total: float | None,
    *,
    ago: float = 3600,
    outcome: str = "ready",
    profile: str | None = "small",
    **steps: float,
) -> SpawnSummary:
    """A past spawn that finished ``ago`` seconds before NOW."""
    return SpawnSummary(
        finished=NOW - timedelta(seconds=ago),
        outcome=outcome,
        total_seconds=total,
        steps=steps,
        profile_slug=profile,
    )


# -- the numbers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "values",
    [[5.0], [1.0, 2.0], [3.0, 1.0, 2.0, 10.0, 7.0], [float(v) for v in range(1, 101)], [4.0, 4.0, 4.0, 90.0, 120.0, 30.0]],
    ids=["one", "two", "five", "hundred", "skewed"],
)
def test_percentile_agrees_with_statistics(values):
    ordered = sorted(values)
    assert percentile(ordered, 0.5) == pytest.approx(statistics.median(values))
    if len(values) > 1:
        expected_p90 = statistics.quantiles(values, n=10, method="inclusive")[8]
        assert percentile(ordered, 0.9) == pytest.approx(expected_p90)


def test_under_the_minimum_there_is_no_typical_time():
    four = [spawn(60 + n) for n in range(4)]
    assert typical_durations(four, "small", now=NOW) is None
    five = [*four, spawn(64)]
    typical = typical_durations(five, "small", now=NOW)
    assert typical is not None
    assert typical["samples"] == 5
    assert typical["total"] == {"p50": 62.0, "p90": 63.6, "samples": 5}
    assert typical["source"] == "history"


def test_only_recent_successful_starts_of_the_profile_count():
    summaries = [
        *(spawn(100.0 + n) for n in range(5)),                     # counted
        *(spawn(5.0, outcome="failed") for _ in range(20)),        # a failure says when it gave up
        *(spawn(5.0, outcome="stopped") for _ in range(20)),
        *(spawn(999.0, ago=15 * 86400) for _ in range(20)),        # older than the window
        *(spawn(999.0, ago=-60) for _ in range(20)),               # after "now": a clock oddity
        *(spawn(1.0, profile="gpu") for _ in range(20)),           # another profile
    ]
    typical = typical_durations(summaries, "small", now=NOW)
    assert typical is not None and typical["total"] is not None
    assert typical["samples"] == 5
    assert typical["total"]["p50"] == 102.0
    by_profile = typical_by_profile(summaries, now=NOW)
    assert set(by_profile) == {"small", "gpu"}
    assert by_profile["gpu"]["total"] == {"p50": 1.0, "p90": 1.0, "samples": 20}


def test_a_step_needs_its_own_samples_cold_and_warm_starts():
    # 7 warm starts (a machine had room) and 3 cold ones (a machine was added)
    warm = [spawn(30.0 + n, scheduling=1.0, image=5.0, starting=20.0 + n) for n in range(7)]
    cold = [spawn(300.0 + n, scheduling=2.0, scaling=200.0 + n, image=60.0, starting=30.0) for n in range(3)]
    typical = typical_durations([*warm, *cold], "small", now=NOW)
    assert typical is not None and typical["total"] is not None
    assert typical["total"]["p50"] < 60 < typical["total"]["p90"]  # the usual wait vs the cold one
    assert "scaling" not in typical["steps"]  # 3 cold starts: too few to say
    assert list(typical["steps"]) == ["scheduling", "image", "starting"]  # step order
    more_cold = [spawn(300.0, scaling=180.0 + 10 * n) for n in range(3)]
    typical = typical_durations([*warm, *cold, *more_cold], "small", now=NOW)
    assert typical is not None
    assert typical["steps"]["scaling"]["samples"] == 6  # from the cold starts alone
    assert typical["steps"]["scaling"]["p50"] == pytest.approx(statistics.median([200, 201, 202, 180, 190, 200]))


def test_only_the_latest_max_samples_count():
    old = [spawn(500.0, ago=7200 + n) for n in range(50)]
    new = [spawn(50.0, ago=60 + n) for n in range(10)]
    typical = typical_durations([*old, *new], "small", now=NOW, max_samples=10)
    assert typical is not None and typical["total"] == {"p50": 50.0, "p90": 50.0, "samples": 10}


def test_store_rows_as_dicts_are_read_too():
    rows: list[dict[str, Any]] = [
        {
            "finished": (NOW - timedelta(hours=1)).isoformat().replace("+00:00", "Z"),
            "outcome": "ready",
            "total_seconds": 90 + n,
            "steps": {"image": 40 + n, "bogus-step": 3},
            "profile_slug": None,
        }
        for n in range(5)
    ]
    rows.append({"finished": None, "outcome": "ready", "total_seconds": 1})  # unusable: skipped
    typical = typical_durations(rows, None, now=NOW)
    assert typical is not None
    assert typical["total"] == {"p50": 92.0, "p90": 93.6, "samples": 5}
    assert set(typical["steps"]) == {"image"}


def test_history_store_rows_are_read_as_they_are():
    """Rows shaped as the spawn-history store keeps them: naive UTC ``finished_at``,
    ``elapsed``, and the failure page's list of steps (a step may come back)."""
    rows = [
        {
            "finished_at": (NOW - timedelta(hours=2)).replace(tzinfo=None),
            "outcome": "ready",
            "elapsed": 60.0 + n,
            "profile_slug": "gpu",
            "steps": [
                {"phase": "image", "label": "Downloading", "start": 1.0, "duration": 30.0},
                {"phase": "starting", "label": "Starting", "start": 31.0, "duration": None},
                {"phase": "image", "label": "Downloading", "start": 40.0, "duration": 10.0 + n},
            ],
        }
        for n in range(5)
    ]
    typical = typical_durations(rows, "gpu", now=NOW)
    assert typical is not None
    assert typical["total"] == {"p50": 62.0, "p90": 63.6, "samples": 5}
    assert typical["steps"] == {"image": {"p50": 42.0, "p90": 43.6, "samples": 5}}


def test_a_finished_timeline_summarizes_into_steps():
    data = json.loads((DATA / "volume-provisioning.events.json").read_text())
    start = datetime(2026, 11, 29, 21, 32, 55, tzinfo=timezone.utc)
    clock = [start]
    timeline = SpawnTimeline(started_at=start, clock=lambda: clock[0])
    formatter = EventFormatter()
    for event in data["items"] if isinstance(data, dict) else data:
        timeline.add(formatter.format_event(event))
    clock[0] = start + timedelta(seconds=20)
    timeline.finish("ready")
    summary = summarize(timeline, "small")
    assert summary.total_seconds == 20
    assert summary.steps == {"requested": 5, "volume": 9, "scheduled": 3, "image": 0, "starting": 3}
    assert summary.finished == clock[0] and summary.outcome == "ready" and summary.profile_slug == "small"


# -- the admin's expected times -------------------------------------------------------------


def test_expected_times_from_config_for_a_new_hub():
    c = Config()
    c.TypicalTimes.expected = {
        "*": {"total": [60, 180], "scaling": [120, 240]},
        "gpu": {"total": [300, 600], "image": 240},
    }
    settings = TypicalTimes(config=c)
    gpu = settings.expected_for("gpu")
    assert gpu == {
        "samples": 0,
        "total": {"p50": 300.0, "p90": 600.0, "samples": 0},
        "steps": {
            "scaling": {"p50": 120.0, "p90": 240.0, "samples": 0},
            "image": {"p50": 240.0, "p90": 360.0, "samples": 0},  # one number: p90 = 1.5 x
        },
        "source": "config",
    }
    assert settings.expected_for("small")["total"] == {"p50": 60.0, "p90": 180.0, "samples": 0}  # type: ignore[index]
    assert TypicalTimes().expected_for("small") is None


@pytest.mark.parametrize(
    ("expected", "error"),
    [
        ({"*": {"totl": 60}}, "unknown key 'totl'"),
        ({"*": {"total": [300, 60]}}, "0 < usual <= 9-in-10"),
        ({"*": {"image": -5}}, "give seconds (> 0)"),
        ({"*": {"image": True}}, "give seconds (> 0)"),
        ({"*": 60}, "must map a profile slug to a dict of times"),
    ],
    ids=["typo", "reversed", "negative", "bool", "not-a-dict"],
)
def test_bad_expected_times_name_the_option(expected, error):
    with pytest.raises(TraitError) as raised:
        TypicalTimes(expected=expected)
    assert "TypicalTimes.expected" in str(raised.value) and error in str(raised.value)


def test_history_wins_and_config_fills_the_gaps():
    history = typical_durations([spawn(40.0 + n, image=10.0) for n in range(5)], "small", now=NOW)
    expected = TypicalTimes(expected={"*": {"total": [600, 900], "scaling": [120, 240]}}).expected_for("small")
    merged = merge_typical(history, expected)
    assert merged is not None and merged["total"] is not None
    assert merged["total"]["p50"] == 42.0  # from history
    assert merged["steps"]["scaling"]["samples"] == 0  # from config
    assert merged["steps"]["image"]["samples"] == 5
    assert merged["source"] == "history+config"
    assert merge_typical(None, expected) == expected
    assert merge_typical(history, None) == history
    assert merge_typical(None, None) is None


# -- the cache ----------------------------------------------------------------------------


class CountingLoader:
    def __init__(self, summaries: list[SpawnSummary]) -> None:
        self.summaries = summaries
        self.calls = 0

    def __call__(self) -> list[SpawnSummary]:
        self.calls += 1
        return self.summaries


def test_the_cache_queries_once_and_learns_from_spawn_ends():
    clock = [NOW]
    loader = CountingLoader([spawn(100.0 + n) for n in range(4)])
    cache = TypicalCache(loader, clock=lambda: clock[0])
    for _ in range(100):  # page views
        assert cache.get("small") is None  # 4 starts: not enough yet
    assert loader.calls == 1
    cache.spawn_ended(spawn(110.0, ago=0))
    typical = cache.get("small")
    assert typical is not None and typical["total"] == {"p50": 102.0, "p90": 107.2, "samples": 5}  # 103 + 0.6 x (110 - 103)
    cache.spawn_ended(spawn(5.0, ago=0, outcome="failed"))  # failures do not count
    assert cache.get("small") == typical
    assert loader.calls == 1


def test_the_cache_lets_old_spawns_leave_the_window():
    clock = [NOW]
    cache = TypicalCache(CountingLoader([spawn(100.0, ago=0) for _ in range(5)]), clock=lambda: clock[0])
    assert cache.get("small") is not None
    clock[0] = NOW + timedelta(days=13)
    assert cache.get("small") is not None
    clock[0] = NOW + timedelta(days=14, hours=2)  # past the window, and past refresh_every
    assert cache.get("small") is None


def test_the_cache_keeps_a_bounded_history_per_profile():
    settings = TypicalTimes(max_samples=20)
    cache = TypicalCache(CountingLoader([spawn(1000.0) for _ in range(1000)]), settings=settings, clock=lambda: NOW)
    for _ in range(20):
        cache.spawn_ended(spawn(10.0, ago=0))
    typical = cache.get("small")
    assert typical is not None and typical["total"] == {"p50": 10.0, "p90": 10.0, "samples": 20}
    assert len(cache._recent["small"]) == 20


def test_a_failing_loader_is_logged_and_config_still_answers(caplog):
    def broken() -> list[SpawnSummary]:
        raise OSError("database is down")

    settings = TypicalTimes(expected={"*": {"total": 120}})
    cache = TypicalCache(broken, settings=settings, clock=lambda: NOW)
    with caplog.at_level(logging.ERROR):
        typical = cache.get("small")
    assert "could not load past spawns" in caplog.text
    assert typical is not None and typical["source"] == "config"


# -- the words ----------------------------------------------------------------------------


def span(p50: float, p90: float, samples: int = 10) -> dict[str, Any]:
    return {"p50": p50, "p90": p90, "samples": samples}


def typical_of(total: tuple[float, float] | None = None, **steps: tuple[float, float]) -> Any:
    return {
        "samples": 10,
        "total": span(*total) if total else None,
        "steps": {name: span(*s) for name, s in steps.items()},
        "source": "history",
    }


@pytest.mark.parametrize(
    ("seconds", "up", "words"),
    [
        (3, False, "5 s"), (42, False, "40 s"), (42, True, "45 s"), (57, False, "55 s"),
        (58, False, "1 min"), (59, True, "1 min"), (170, False, "3 min"), (181, True, "4 min"),
        (3600, False, "1 h"), (4800, False, "1 h 20 min"),
    ],
)
def test_durations_are_rounded_for_people(seconds, up, words):
    assert duration_words(seconds, up=up) == words


@pytest.mark.parametrize(
    ("total", "sentence"),
    [
        ((180, 300), "Usually ready in about 3 min (9 in 10 within 5 min)"),
        ((170, 290), "Usually ready in about 3 min (9 in 10 within 5 min)"),
        ((40, 55), "Usually ready in about 40 s (9 in 10 within 55 s)"),
        ((40, 130), "Usually ready in about 40 s (9 in 10 within 3 min)"),
        ((175, 180), "Usually ready in about 3 min"),
        (None, None),
    ],
    ids=["minutes", "rounded", "seconds", "mixed", "same", "unknown"],
)
def test_usually_ready(total, sentence):
    assert usually_ready(typical_of(total)) == sentence


def test_usually_ready_without_any_typical_time():
    assert usually_ready(None) is None


@pytest.mark.parametrize(
    ("step", "p50", "p90", "so_far", "sentence"),
    [
        ("scaling", 120, 240, 80, "Adding a machine usually takes 2-4 min; 1:20 so far"),
        ("image", 20, 40, 5, "Downloading the software image usually takes 20-40 s; 0:05 so far"),
        ("scheduling", 40, 110, 61, "Finding a machine usually takes 40 s-2 min; 1:01 so far"),
        ("volume", 115, 120, 0, "Preparing storage usually takes about 2 min; 0:00 so far"),
        ("starting", 10, 20, None, "Starting the server usually takes 10-20 s"),
    ],
)
def test_step_usually(step, p50, p90, so_far, sentence):
    typical = typical_of(**{step: (p50, p90)})
    assert step_usually(typical, step, so_far) == sentence


def test_step_usually_says_nothing_it_does_not_know():
    typical = typical_of(scaling=(120, 240))
    assert step_usually(typical, "image", 10) is None
    assert step_usually(typical, "ready", 10) is None
    assert step_usually(None, "scaling", 10) is None
    assert range_words(span(120, 240)) == "2-4 min"  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("step_elapsed", "total_elapsed", "long"),
    [(100, 100, False), (240, 240, False), (241, 100, True), (10, 601, True), (None, None, False)],
    ids=["usual", "at-p90", "step-past-p90", "total-past-p90", "unknown"],
)
def test_longer_than_usual_past_the_p90(step_elapsed, total_elapsed, long):
    typical = typical_of((200, 600), scaling=(120, 240))
    said = longer_than_usual(typical, step="scaling", step_elapsed=step_elapsed, total_elapsed=total_elapsed)
    assert said == (LONGER_THAN_USUAL if long else None)
    assert longer_than_usual(None, step="scaling", step_elapsed=10_000, total_elapsed=10_000) is None


def test_the_bar_moves_by_expected_time_and_never_back():
    typical = typical_of(scaling=(120, 240))
    here, following = PHASE_PROGRESS["scaling"], PHASE_PROGRESS[PHASE_NAMES[PHASE_NAMES.index("scaling") + 1]]
    assert progress_in_step(typical, "scaling", 0) == here
    assert progress_in_step(typical, "scaling", 120) == here + (following - here) // 2
    values = [progress_in_step(typical, "scaling", t) for t in range(0, 100_000, 7)]
    assert values == sorted(values)
    assert max(values) == following - 1  # never reaches the next step by waiting
    assert progress_in_step(None, "scaling", 500) == here  # no history: as today
    assert progress_in_step(typical, "image", 500) == PHASE_PROGRESS["image"]


@pytest.mark.parametrize(
    ("p90", "words", "late"),
    [(8.0, "10 s", 10.0), (40.0, "40 s", 40.0), (200.0, "4 min", 240.0), (240.0, "4 min", 240.0),
     (290.0, "5 min", 300.0), (4000.0, "1 h 7 min", 4020.0)],
)
def test_longer_than_usual_only_once_the_words_ran_out(p90, words, late):
    """"Usually 2-4 min" at 3:30 must not also say "longer than usual": the moment is the
    p90 as the page words it (rounded up), not the raw p90 (issue: live truths)."""
    from richprogress.typical.words import duration_words, late_after

    assert duration_words(p90, up=True) == words
    assert late_after(span(p90 / 2, p90)) == late  # type: ignore[arg-type]
    typical = typical_of((p90 / 2, p90), scaling=(p90 / 2, p90))
    assert longer_than_usual(typical, step="scaling", step_elapsed=late, total_elapsed=late) is None
    assert longer_than_usual(typical, step="scaling", step_elapsed=late + 0.5) == LONGER_THAN_USUAL
    assert longer_than_usual(typical, total_elapsed=late + 0.5) == LONGER_THAN_USUAL
