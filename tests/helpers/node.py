"""Run a snippet of JavaScript as an ES module under node and read the JSON it prints.

The JS-parity tests (Python and static/ must say the same) share this one runner.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any


def node_json(script: str) -> Any:
    """Run ``script`` with ``node --input-type=module`` and parse its standard output."""
    out = subprocess.run(
        ["node", "--input-type=module", "-e", script],
        check=True,
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout
    return json.loads(out)
