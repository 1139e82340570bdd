"""Fixtures shared by every test in ``tests/``.

``_isolated_spawn_listeners`` (autouse)
    Each test starts with no "spawn ended" listeners (``richprogress.stream.spawn_end``).
    ``richprogress.setup(c)`` subscribes the spawn history, which keeps finished spawns in
    a SQLite file in the working directory: without this, a test that calls ``setup`` would
    make every later in-process spawn write into the checkout.

Helper modules (imported by the tests that need them, not fixtures of every test):

- ``hub_fixtures``: a real JupyterHub subprocess with its proxy (``hub_process``, ``Hub``);
- ``cluster_fixtures``: real KubeSpawner against the simulated cluster;
- ``pg_fixtures``: a throwaway PostgreSQL server;
- ``node_module``: run a JavaScript snippet from ``static/`` under node.
- ``scenario_events``: a namespace's Kubernetes events, played from the demo's scenario files.
"""

from __future__ import annotations

import pytest

from richprogress.stream import spawn_end as spawn_events


@pytest.fixture(autouse=True)
def _isolated_spawn_listeners(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spawn_events, "_listeners", [])
