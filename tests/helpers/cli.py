"""``richprogress explain`` run as an admin runs it: a subprocess with a bare environment.

``explain(*args, stdin=None)``: ``python -m richprogress.cli explain ARGS``, with ``stdin``
(bytes) as its input; the finished process, its output as text.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def explain(*args: str | Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m richprogress.cli explain ARGS`` and return what it did."""
    return subprocess.run(
        [sys.executable, "-m", "richprogress.cli", "explain", *map(str, args)],
        input=stdin.decode("utf-8", "surrogateescape") if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
    )
