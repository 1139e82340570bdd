"""The browser tests' pace: how fast the demo hubs of ``ui-tests/`` replay their scenarios,
when their spawns time out, and how long Playwright waits.

``ui-tests/conftest.py`` starts its session hubs with these; a module that starts a hub of
its own (``tests.helpers.demo_hub.serve``) takes them from here too.
"""

from __future__ import annotations

#: how much faster than a real cluster the scenarios replay in these tests
SPEED = 20.0
#: the spawn timeout: failing scenarios fail after this long; succeeding ones finish well before
START_TIMEOUT = 20.0
#: Playwright's default wait, generous for a shared 2-core machine (a failing scenario
#: takes START_TIMEOUT to fail)
WAIT_MS = 45_000
#: config for a hub whose spawns wait for their pending page to read them
#: (``richprogress.demo.page_gate``): a quick failure can no longer end before a busy
#: machine's browser has opened the page that a test came to read
PAGE_GATED = 'c.JupyterHub.spawner_class = "richprogress.demo.page_gate.PageGatedSpawner"\n'
