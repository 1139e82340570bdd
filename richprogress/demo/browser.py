"""Debian's Chromium, as the browser tests, JupyterHub's browser suite and the render
benchmark launch it through Playwright (``playwright install`` cannot download here).

One place for the path and the flags: no sandbox (root in CI containers), no GPU, and no
traffic of Chromium's own to anywhere (background networking, component updates, sync).
"""

from __future__ import annotations

import os

#: the Chromium binary; ``RICHPROGRESS_CHROMIUM`` points elsewhere
CHROMIUM = os.environ.get("RICHPROGRESS_CHROMIUM", "/usr/bin/chromium")

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
