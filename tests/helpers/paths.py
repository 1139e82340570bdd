"""Where things are: the repository's root and the tests' recorded data, for any test module
whatever its folder."""

from __future__ import annotations

import os
from pathlib import Path

#: the repository's root (the folder of pyproject.toml)
REPO = Path(__file__).resolve().parents[2]
#: ``tests/data/``: recorded events, the corpora, kubespawner #910's sample events
DATA = REPO / "tests" / "data"
#: ``static/``: the pages' JavaScript and CSS
STATIC = REPO / "static"
#: where tests write what a person may want to look at afterwards (screenshots, recorded
#: page states): ``test-output/``, or ``RICHPROGRESS_TEST_OUTPUT`` (scripts/lanes.py gives
#: each lane its own, so two runs side by side never write one file)
TEST_OUTPUT = Path(os.environ.get("RICHPROGRESS_TEST_OUTPUT") or REPO / "test-output")
