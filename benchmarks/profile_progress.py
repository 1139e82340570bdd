"""Profile RichKubeSpawner's progress streaming on the scaling benchmark's rich case.

Runs ``progress_scaling.run_one("rich", ...)`` once under cProfile (only the measured
slices are profiled: the feeding into the reflector, the index, the pump or inline
handler, the formatter, the timeline and the ``progress()`` readers) and prints the top
functions by own time and by cumulative time, with the CPU per event the run measured
(cProfile roughly doubles it: read the shares, not the absolute figures).

Usage::

    python benchmarks/profile_progress.py [--events 30000] [--streams 300] [--records 3]
        [--window 10] [--top 15]

To profile another checkout (e.g. the code before a change), put it first on
``PYTHONPATH``: ``PYTHONPATH=/path/to/old/checkout python benchmarks/profile_progress.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import os
import pstats
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).absolute().parent))

import progress_scaling  # noqa: E402

#: the event loop's frames, left out of the tables
LOOP_FRAMES = frozenset(
    {
        "<method 'poll' of 'select.epoll' objects>",
        "_run_once",
        "select",
        "<method 'run' of '_contextvars.Context' objects>",
        "_run",
        "run_forever",
        "run_until_complete",
        "run",
    }
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=30_000, help="events already in the namespace (E)")
    parser.add_argument("--streams", type=int, default=300, help="pending spawns, one stream each (N)")
    parser.add_argument("--records", type=int, default=3, help="records per timeline before the window (R)")
    parser.add_argument("--window", type=float, default=10.0, help="seconds of feeding")
    parser.add_argument("--top", type=int, default=15, help="functions to list per table")
    args = parser.parse_args(argv)
    progress_scaling.prepare_environment()
    import richprogress

    print(f"# profiling {os.path.dirname(richprogress.__file__)}")
    profiler = cProfile.Profile()
    result = asyncio.run(
        progress_scaling.run_one(
            "rich", args.events, args.streams, args.window, records=args.records, profiler=profiler
        )
    )
    print(
        f"# E={args.events} N={args.streams} R={args.records}: {result.fed} events,"
        f" {result.us_per_event:.1f} us CPU per event under the profiler (feeding included)"
    )
    for order in ("tottime", "cumulative"):
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        # the event loop's own frames (waiting in epoll, running callbacks) hold everything
        # else: leave them out so the table shows where the work goes
        for func in list(stats.stats):  # type: ignore[attr-defined]
            if func[2] in LOOP_FRAMES:
                del stats.stats[func]  # type: ignore[attr-defined]
        stats.sort_stats(order).print_stats(args.top)
        text = out.getvalue()
        # drop pstats' preamble up to the table
        print(f"## by {order}")
        print(text[text.find("   ncalls") :].rstrip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
