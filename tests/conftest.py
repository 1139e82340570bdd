"""Fixtures shared by every test in ``tests/``.

``_isolated_spawn_listeners`` (autouse)
    Each test starts with no "spawn ended" listeners (``richprogress.spawn_events``).
    ``richprogress.setup(c)`` subscribes the spawn history, which keeps finished spawns in
    a SQLite file in the working directory: without this, a test that calls ``setup`` would
    make every later in-process spawn write into the checkout.
"""

from __future__ import annotations

import pytest

from richprogress import spawn_events


@pytest.fixture(autouse=True)
def _isolated_spawn_listeners(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spawn_events, "_listeners", [])
