"""Benchmark the event formatter: microseconds per event, and memory over a million events.

Run from the repository root (the peer data sits beside the clone, in ../shared)::

    python benchmarks/formatter.py            # about a minute on a 2-core machine
    python benchmarks/formatter.py --quick    # a few seconds, smaller counts

Prints, over kubespawner #910's 59 captured events:
- stock: KubeSpawner 7.1's own progress line (an f-string over three fields), the floor;
- ours with the default rules, and ours with #910's rules (the same rules #910 ships);
- the peak traced memory while formatting a million events (must stay flat: the peak
  after 1,000,000 events is compared with the peak after the first 10% of them).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).absolute().parents[1]
sys.path.insert(0, str(ROOT))

from richprogress.formatter import EventFormatter  # noqa: E402

PEER = ROOT.parent / "shared" / "peer" / "kubespawner-pr910"


def load_events() -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for path in sorted(PEER.glob("*.events.json")):
        events.extend(json.loads(path.read_text(encoding="utf-8")))
    if not events:
        raise SystemExit(f"no peer events found in {PEER}")
    return events


def stock_line(event: dict[str, Any]) -> str:
    """What KubeSpawner 7.1's progress() builds per event (kubespawner/spawner.py)."""
    return "%s [%s] %s" % (  # noqa: UP031 - measured exactly as kubespawner writes it
        event["lastTimestamp"] or event["eventTime"],
        event["type"],
        event["message"],
    )


def per_event_us(fn: Callable[[dict[str, Any]], Any], events: list[dict[str, Any]], rounds: int) -> float:
    """Best of 5 runs of `rounds` passes over the events, in CPU microseconds per event.

    CPU time (not wall time) so that other work on a shared machine, which takes the CPU
    away from us, does not count as ours; cache and memory contention still do.
    """
    for event in events:  # warm caches (compiled rules, memo) once, as a long-running hub would
        fn(event)
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        for _ in range(rounds):
            for event in events:
                fn(event)
        best = min(best, time.process_time() - start)
    return best / (rounds * len(events)) * 1e6


def memory_over(fn: Callable[[dict[str, Any]], Any], events: list[dict[str, Any]], total: int) -> tuple[int, int]:
    """Peak traced bytes after 10% of `total` events and after all of them."""
    n = len(events)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        early_peak = 0
        for i in range(total):
            fn(events[i % n])
            if i == total // 10:
                early_peak = tracemalloc.get_traced_memory()[1]
        final_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return early_peak, final_peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller counts, for a smoke run")
    args = parser.parse_args()
    rounds = 200 if args.quick else 2000
    million = 100_000 if args.quick else 1_000_000

    events = load_events()
    ours = EventFormatter()
    pr910 = EventFormatter(rules=json.loads((PEER / "default-rules.json").read_text()))

    # The stock line is so cheap that it needs more passes for a stable number.
    stock = per_event_us(stock_line, events, rounds * 10)
    default = per_event_us(ours.format_event, events, rounds)
    compat = per_event_us(pr910.format_event, events, rounds)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"events: {len(events)} (kubespawner #910 sample events), {rounds} passes, best of 5")
    print(f"machine: {os.cpu_count()} CPUs, load average {load} (a busy machine inflates every number)")
    print(f"stock kubespawner line     {stock:7.2f} us/event")
    print(f"richprogress, default rules {default:6.2f} us/event  ({default / stock:.0f}x stock)")
    print(f"richprogress, #910 rules   {compat:7.2f} us/event  ({compat / stock:.0f}x stock)")

    early, final = memory_over(ours.format_event, events, million)
    print(
        f"tracemalloc peak over {million:,} events (default rules): "
        f"{final / 1024:.0f} KiB (after the first {million // 10:,}: {early / 1024:.0f} KiB)"
    )


if __name__ == "__main__":
    main()
