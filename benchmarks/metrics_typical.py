"""Benchmark the cost of metrics and typical start times on a hub.

Run from the repository root::

    python benchmarks/metrics_typical.py           # about half a minute on a 2-core machine
    python benchmarks/metrics_typical.py --quick   # a few seconds, smaller counts

Prints:
- scrape: the time and bytes of one ``/hub/metrics`` answer (``generate_latest`` of the
  default registry, what JupyterHub's MetricsHandler calls) with JupyterHub's own metrics
  alone, then with richprogress's after a realistic week (10 profiles, 20 causes), then
  with every richprogress label set filled (the bound: 51 profiles, 108 causes x 9 steps);
  the added per-scrape cost is the difference;
- observe: microseconds to record one finished spawn (``observe_spawn_end``: step
  durations from the timeline, a diagnosis for failures, the histogram updates);
- typical: the pure computation over 100,000 stored spawn summaries (all profiles in one
  pass, and one profile), the cache's load of the same 100k, and then what a page view
  costs (``TypicalCache.get``) and what a spawn's end costs (``spawn_ended`` + the next get,
  which recomputes that profile from its latest 500 starts).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).absolute().parents[1]
sys.path.insert(0, str(ROOT))

import jupyterhub.metrics  # noqa: E402,F401  (registers JupyterHub's own metrics)
from prometheus_client import REGISTRY, generate_latest  # noqa: E402

from richprogress.metrics import (  # noqa: E402
    MAX_EXTRA_RULES,
    MAX_PROFILES,
    OTHER,
    default_metrics,
    observe_spawn_end,
)
from richprogress.model.records import PHASE_NAMES  # noqa: E402
from richprogress.model.timeline import SpawnTimeline  # noqa: E402
from richprogress.typical.cache import TypicalCache  # noqa: E402
from richprogress.typical.statistics import SpawnSummary, typical_by_profile, typical_durations  # noqa: E402

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)


def best_of(runs: int, fn: Callable[[], object], inner: int = 1) -> float:
    """Fastest seconds per call of ``fn`` over ``runs`` timed runs of ``inner`` calls (the
    machine is shared: the fastest run is the one least disturbed by others)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - start) / inner)
    return min(times)


def scrape_cost(runs: int) -> tuple[float, int]:
    text = generate_latest(REGISTRY)
    return best_of(runs, lambda: generate_latest(REGISTRY)), len(text)


def make_timeline(rng: random.Random, failed: bool) -> SpawnTimeline:
    """A finished spawn of ~10 records through scheduling, scaling, image and starting."""
    start = NOW - timedelta(minutes=10)
    clock = [start]
    timeline = SpawnTimeline(started_at=start, clock=lambda: clock[0])
    at = 2.0
    steps = [("scheduling", "failed-scheduling", "warning"), ("scaling", "triggered-scale-up", "info"),
             ("scheduled", "scheduled", "info"), ("image", "image-pulling", "info"),
             ("image", "image-pulled", "info"), ("starting", "container-created", "info"),
             ("starting", "container-started", "info")]
    if failed:
        steps[4] = ("image", "image-not-found", "error")
        steps = steps[:5]
    for n, (phase, rule, severity) in enumerate(steps):
        at += rng.uniform(1, 60)
        stamp = (start + timedelta(seconds=at)).isoformat().replace("+00:00", "Z")
        timeline.add({  # type: ignore[arg-type]
            "id": f"e{n}", "timestamp": stamp, "first_timestamp": stamp,
            "type": "Warning" if severity != "info" else "Normal", "severity": severity,
            "reason": rule, "object": {"kind": "Pod", "name": "jupyter-x", "container": None,
            "field_path": None}, "component": "kubelet", "count": 1, "message": rule,
            "raw_message": rule, "rule": rule, "phase": phase,
        })
    clock[0] = start + timedelta(seconds=at + 5)
    timeline.finish("failed" if failed else "ready", "pod did not start in 300 seconds!" if failed else None)
    return timeline


def summaries(count: int, rng: random.Random, profiles: int = 10) -> list[SpawnSummary]:
    out = []
    for n in range(count):
        cold = rng.random() < 0.3
        steps = {"scheduling": rng.uniform(0, 3), "image": rng.uniform(1, 90), "starting": rng.uniform(3, 20)}
        if cold:
            steps["scaling"] = rng.uniform(90, 300)
        out.append(SpawnSummary(
            finished=NOW - timedelta(seconds=rng.uniform(0, 20 * 86400)),
            outcome="ready" if rng.random() < 0.9 else "failed",
            total_seconds=sum(steps.values()),
            steps=steps,
            profile_slug=f"profile-{n % profiles}",
        ))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller counts, a few seconds")
    args = parser.parse_args()
    runs = 20 if args.quick else 100
    n_summaries = 20_000 if args.quick else 100_000
    rng = random.Random(12)

    print("== /hub/metrics, one scrape (generate_latest of the default registry)")
    base, base_bytes = scrape_cost(runs)
    print(f"JupyterHub's own metrics only:          {base * 1e3:7.3f} ms  {base_bytes:7d} bytes")
    metrics = default_metrics()  # what setup(c) does at hub start
    empty, empty_bytes = scrape_cost(runs)
    print(f"+ richprogress, no spawn yet:           {empty * 1e3:7.3f} ms  {empty_bytes:7d} bytes"
          f"  (+{(empty - base) * 1e3:.3f} ms)")
    observe_times = []
    causes = [f"cause-{n}" for n in range(20)]
    for n in range(2000):
        failed = n % 5 == 0
        timeline = make_timeline(rng, failed)
        if failed:
            timeline.records()[-1]["rule"] = rng.choice(causes)
        start = time.perf_counter()
        observe_spawn_end(timeline, profile_slug=f"profile-{n % 10}", diagnosis=None, metrics=metrics)
        observe_times.append(time.perf_counter() - start)
    week, week_bytes = scrape_cost(runs)
    print(f"+ richprogress, a week (10 profiles, 20 causes): {week * 1e3:7.3f} ms  {week_bytes:7d} bytes"
          f"  (+{(week - base) * 1e3:.3f} ms, +{week_bytes - base_bytes} bytes)")
    # every bounded label set filled: the most series richprogress can ever add
    for n in range(MAX_PROFILES + 5):
        for outcome in ("ready", "failed", "stopped"):
            metrics.spawn_duration.labels(outcome=outcome, profile=metrics.profile(f"p{n}")).observe(60)
    for step in (*PHASE_NAMES, OTHER):
        for outcome in ("ready", "failed", "stopped"):
            metrics.step_duration.labels(step=step, outcome=outcome).observe(10)
    all_causes = sorted(metrics.cause.known) + [f"extra-{n}" for n in range(MAX_EXTRA_RULES + 5)]
    for cause in all_causes:
        label = metrics.cause(cause)
        metrics.stopped_early.labels(cause=label).inc()
        for step in (*PHASE_NAMES, OTHER):
            metrics.failures.labels(cause=label, step=step).inc()
    full, full_bytes = scrape_cost(runs)
    print(f"+ richprogress, every label set filled:  {full * 1e3:7.3f} ms  {full_bytes:7d} bytes"
          f"  (+{(full - base) * 1e3:.3f} ms, +{full_bytes - base_bytes} bytes)")

    print("\n== recording one finished spawn (observe_spawn_end, ~7 records)")
    observe_times.sort()
    print(f"median {statistics.median(observe_times) * 1e6:.0f} us, p90 "
          f"{observe_times[int(len(observe_times) * 0.9)] * 1e6:.0f} us over {len(observe_times)} spawns "
          "(1 in 5 failed: those also get a diagnosis)")

    print(f"\n== typical start times over {n_summaries:,} stored spawns (10 profiles, 20 days)")
    data = summaries(n_summaries, rng)
    small_runs = 3 if args.quick else 5
    t_all = best_of(small_runs, lambda: typical_by_profile(data, now=NOW))
    print(f"typical_by_profile (all profiles, one pass): {t_all * 1e3:8.1f} ms")
    t_one = best_of(small_runs, lambda: typical_durations(data, "profile-3", now=NOW))
    print(f"typical_durations (one profile):             {t_one * 1e3:8.1f} ms")
    cache = TypicalCache(lambda: data, clock=lambda: NOW)
    t_load = best_of(small_runs, cache.reload)
    print(f"TypicalCache.reload (the store's one query): {t_load * 1e3:8.1f} ms")
    cache.get("profile-3")
    t_get = best_of(runs, lambda: cache.get("profile-3"), inner=1000)
    print(f"per page view, TypicalCache.get:             {t_get * 1e6:8.2f} us")
    fresh = summaries(runs * 10, rng)

    def end_then_view() -> None:
        item = fresh.pop()
        cache.spawn_ended(SpawnSummary(NOW, "ready", item.total_seconds, item.steps, "profile-3"))
        cache.get("profile-3")

    t_end = best_of(runs, end_then_view, inner=5)
    print(f"per spawn end, spawn_ended + next get:       {t_end * 1e3:8.3f} ms (recomputes 500 starts)")


if __name__ == "__main__":
    main()
