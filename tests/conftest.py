"""Fixtures shared by every test in ``tests/``.

``_isolated_spawn_listeners`` (autouse)
    Each test starts with no "spawn ended" listeners (``richprogress.stream.spawn_end``).
    ``richprogress.setup(c)`` subscribes the spawn history, which keeps finished spawns in
    a SQLite file in the working directory: without this, a test that calls ``setup`` would
    make every later in-process spawn write into the checkout.

Helper modules are in ``tests.helpers`` (imported by the tests that need them, not fixtures
of every test), e.g.:

- ``tests.helpers.hub``: a real JupyterHub subprocess with its proxy (``hub_process``, ``Hub``);
- ``tests.helpers.cluster``: real KubeSpawner against the simulated cluster;
- ``tests.helpers.postgres``: a throwaway PostgreSQL server;
- ``tests.helpers.node``: run a JavaScript snippet from ``static/`` under node;
- ``tests.helpers.scenario_events``: a namespace's Kubernetes events, played from the demo's
  scenario files.
"""

from __future__ import annotations

import pytest

from richprogress.stream import spawn_end as spawn_events


@pytest.fixture(autouse=True)
def _isolated_spawn_listeners(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spawn_events, "_listeners", [])
