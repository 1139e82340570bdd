"""Where things are: the repository's root and the tests' recorded data, for any test module
whatever its folder."""

from __future__ import annotations

from pathlib import Path

#: the repository's root (the folder of pyproject.toml)
REPO = Path(__file__).resolve().parents[2]
#: ``tests/data/``: recorded events, the corpora, kubespawner #910's sample events
DATA = REPO / "tests" / "data"
#: ``static/``: the pages' JavaScript and CSS
STATIC = REPO / "static"
