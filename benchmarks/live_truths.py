"""What the live truths cost: ``diagnose()`` with "a later success clears a problem", and
the patience schedule that follows typical times. Prints numbers; asserts nothing.

- ``diagnose`` runs for every warning a spawn gets and for every record while a problem is
  shown (``live_diagnosis.LiveDiagnoser``). Timed on timelines of N records shaped like a
  long spawn: a scale-up's repeated FailedScheduling, failed pulls and their back-offs, a
  retried pull that worked, then plain rows. ``--ref COMMIT`` times that commit's
  ``diagnose`` on the same timelines, for comparison.
- ``PatiencePlan``: one pump wake-up (``follow`` the changes, ``take``, ``next_due``) with
  typical times known.

Usage: ``python benchmarks/live_truths.py [--ref 1807c6d] [--repeat 2000]``
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import io
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from richprogress.model.timeline import SpawnTimeline  # noqa: E402
from richprogress.story import diagnosis as current  # noqa: E402
from richprogress.stream.patience import PatiencePlan  # noqa: E402
from richprogress.typical.statistics import Typical  # noqa: E402

IMAGE = "quay.io/jupyter/course:2026-11"


def rec(n: int, reason: str, raw: str, severity: str = "info", phase: str | None = None) -> dict[str, Any]:
    stamp = f"2026-11-29T10:{n // 60 % 60:02d}:{n % 60:02d}Z"
    return {
        "id": f"r{n}", "timestamp": stamp, "first_timestamp": stamp,
        "type": "Normal" if severity == "info" else "Warning", "severity": severity, "reason": reason,
        "object": {"kind": "Pod", "name": "jupyter-alice", "container": "notebook", "field_path": None},
        "component": "kubelet", "count": 1, "message": raw, "raw_message": raw, "rule": None,
        "phase": phase, "hint": None, "since_spawn": float(n),
    }


def timeline_of(size: int) -> list[dict[str, Any]]:
    """``size`` records: a quarter scheduling trouble, a quarter failed pulls and back-offs,
    the pull that worked, then plain rows."""
    out: list[dict[str, Any]] = []
    for n in range(size):
        part = 4 * n // max(size, 1)
        if part == 0:
            out.append(rec(n, "FailedScheduling", "0/3 nodes are available: 3 Insufficient memory.",
                           "warning", "scheduling"))
        elif part == 1:
            if n % 2:
                out.append(rec(n, "Failed", f'Failed to pull image "{IMAGE}": not found', "error", "image"))
            else:
                out.append(rec(n, "BackOff", f'Back-off pulling image "{IMAGE}"', "warning", "image"))
        elif part == 2 and n == size // 2:
            out.append(rec(n, "Pulled", f'Successfully pulled image "{IMAGE}" in 2s', "info", "image"))
        else:
            out.append(rec(n, "Unhealthy", "Readiness probe failed: connection refused", "warning", "starting"))
    return out


def load_ref(ref: str) -> Any:
    """That commit's diagnosis (``richprogress/diagnose.py``, later
    ``richprogress/story/diagnosis.py``), as a module beside the current package.

    The commit's whole package is unpacked as ``richprogress_at_ref``, so the diagnosis's
    relative imports find that commit's modules, not today's (which have moved since).
    """
    unpacked = Path(tempfile.mkdtemp(prefix="live_truths_"))
    atexit.register(shutil.rmtree, unpacked, True)
    archive = subprocess.check_output(["git", "-C", str(ROOT), "archive", ref, "richprogress"])
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(unpacked, filter="data")
    package = types.ModuleType("richprogress_at_ref")
    package.__path__ = [str(unpacked / "richprogress")]  # its __init__ (the hub's wiring) never runs
    sys.modules[package.__name__] = package
    if (unpacked / "richprogress" / "diagnose.py").exists():
        return importlib.import_module("richprogress_at_ref.diagnose")
    return importlib.import_module("richprogress_at_ref.story.diagnosis")


def per_call(fn: Any, arg: Any, repeat: int) -> float:
    """Microseconds per call, the best of 3 runs."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(repeat):
            fn(arg)
        best = min(best, (time.perf_counter() - start) / repeat)
    return best * 1e6


TYPICAL: Typical = {
    "samples": 40, "source": "history", "total": {"p50": 170.0, "p90": 290.0, "samples": 40},
    "steps": {"scaling": {"p50": 120.0, "p90": 240.0, "samples": 12},
              "image": {"p50": 20.0, "p90": 40.0, "samples": 40}},
}


def patience_wake(repeat: int) -> float:
    """Microseconds per pump wake-up of the patience schedule (one new record each)."""
    timeline = SpawnTimeline()
    plan = PatiencePlan(30.0, 2.0, TYPICAL)
    records = [rec(n, "Pulling", "x", "info", "image" if n > 2 else "scaling") for n in range(repeat)]
    start = time.perf_counter()
    for n, record in enumerate(records):
        timeline.add(record)  # type: ignore[arg-type]
        plan.follow(timeline)
        plan.take(float(n))
        plan.next_due(float(n))
    return (time.perf_counter() - start) / repeat * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", help="a commit whose diagnose() to time as well")
    parser.add_argument("--repeat", type=int, default=300)
    args = parser.parse_args()
    ref = load_ref(args.ref) if args.ref else None
    print(f"{'records':>8}  {'diagnose() now':>15}" + (f"  {'at ' + args.ref:>15}" if ref else ""))
    for size in (10, 50, 200, 500):
        records = timeline_of(size)
        now = per_call(current.diagnose, records, max(1, args.repeat * 10 // size))
        line = f"{size:>8}  {now:>12.1f} µs"
        if ref is not None:
            line += f"  {per_call(ref.diagnose, records, max(1, args.repeat * 10 // size)):>12.1f} µs"
        print(line)
    print(f"patience schedule, one pump wake-up with typical times: {patience_wake(5000):.1f} µs")


if __name__ == "__main__":
    main()
