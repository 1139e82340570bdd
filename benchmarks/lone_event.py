"""What one lone event costs when it finds the CPU caches cold, against the least any design can do.

``progress_scaling.py`` paces events as a quiet hub gets them: at N = 10 open streams, one
event every third of a second. Each then runs *cold*: between two events the machine's
other work has pushed our code and data out of the CPU caches, so the same code costs
several times what it costs run back to back. This script makes that condition explicit
and repeatable: before each measured event it writes through a buffer larger than the
caches, then times the event's own thread CPU in two parts:

- ``write``: the reflector's ``resources[key] = event`` (for ours: the index, the inline
  handler, the formatter, the timeline, waking the readers);
- ``reader``: from the write's return to the record leaving ``progress()`` (the event
  loop's next turn, the reader's task resuming, the record handed out).

The *floor* is the same feeding into the least a design can do that shows each event the
moment it comes: a plain dict of the namespace's 30,000 events gets the write, one future
wakes one waiting async generator, which yields one dict. Ours cannot cost less than that;
the difference is what richprogress itself adds per lone event.

Usage: ``python benchmarks/lone_event.py [--events 200] [--repeats 3]`` (about a minute).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import AsyncIterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).absolute().parent))

import progress_scaling  # noqa: E402

STREAMS = 10
WINDOW = 10.0


async def floor_run(n_events: int) -> tuple[list[float], list[float]]:
    """The floor design, fed at the pacing of ours' run: (write, reader) microseconds."""
    loop = asyncio.get_running_loop()
    resources: dict[str, Any] = dict(progress_scaling.background_events(30_000))
    wake: list[asyncio.Future[None]] = [loop.create_future()]
    out: list[int] = []

    async def reader() -> AsyncIterator[dict[str, Any]]:
        while True:
            await wake[0]
            wake[0] = loop.create_future()
            yield {"record": {"id": len(out)}}

    async def consume() -> None:
        async for _item in reader():
            out.append(time.thread_time_ns())

    task = asyncio.ensure_future(consume())
    await asyncio.sleep(0.1)
    interval = WINDOW / n_events
    fed: list[int] = []
    written: list[int] = []
    for n in range(n_events):
        await asyncio.sleep(interval)
        event = progress_scaling._event("jupyter-user0", "uid", "Pulling", "Pulling image", datetime.now(timezone.utc), n)
        progress_scaling.evict_caches()
        fed.append(time.thread_time_ns())
        resources[f"default/{event['metadata']['name']}"] = event
        wake[0].set_result(None)
        written.append(time.thread_time_ns())
    await asyncio.sleep(0.1)
    task.cancel()
    writes = [(w - f) / 1000 for f, w in zip(fed, written, strict=True)]
    readers = [(o - w) / 1000 for w, o in zip(written, out, strict=False)]
    return writes, readers


def summary(name: str, writes: list[float], readers: list[float]) -> float:
    total = statistics.median([w + r for w, r in zip(writes, readers, strict=False)])
    print(
        f"{name:<6} write {statistics.median(writes):7.1f}  reader {statistics.median(readers):7.1f}"
        f"  total {total:7.1f} us (median of {len(readers)} events)",
        flush=True,
    )
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200, help="lone events per run (default 200)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each (default 3)")
    args = parser.parse_args(argv)
    progress_scaling.prepare_environment()
    per_stream = max(1, args.events // STREAMS)
    print(f"# {STREAMS * per_stream} events over {WINDOW:g} s, caches evicted before each; python {sys.version.split()[0]}")
    ours_totals: list[float] = []
    floor_totals: list[float] = []
    for _ in range(args.repeats):
        result = asyncio.run(progress_scaling.run_one("rich", 30_000, STREAMS, WINDOW, per_stream, cold=True))
        ours_totals.append(summary("ours", result.cold_write, result.cold_reader))
        floor_totals.append(summary("floor", *asyncio.run(floor_run(STREAMS * per_stream))))
    ours, floor = statistics.median(ours_totals), statistics.median(floor_totals)
    print(f"# a lone cold event: ours {ours:.0f} us, the floor {floor:.0f} us; richprogress adds {ours - floor:.0f} us")
    print(f"lone_event_ratio_to_floor={ours / floor:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
