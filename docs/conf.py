"""Sphinx configuration of richprogress's documentation (MyST Markdown pages).

Built in CI by ``scripts/dev test`` with warnings as errors:
``python3 -m sphinx -W --keep-going -b html docs <folder>``.
"""

from __future__ import annotations

import re
from pathlib import Path

_VERSION_FILE = Path(__file__).resolve().parents[1] / "richprogress" / "_version.py"

project = "richprogress"
author = "richprogress developers"
copyright = "richprogress developers"
# read, not imported: the docs build needs neither JupyterHub nor the package installed
_match = re.search(r'__version__ = "([^"]+)"', _VERSION_FILE.read_text(encoding="utf-8"))
release = version = _match.group(1) if _match else "unknown"

extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
# `[text](page.md#a-heading)` links: anchors for headings down to level 3
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
exclude_patterns = ["_build", "*.py"]
html_theme = "alabaster"
html_title = f"richprogress {release}"
