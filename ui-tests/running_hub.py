"""A demo hub for a fixture: started, yielded, stopped, and checked to leave nothing running.

Shared by the session hubs in ``conftest.py`` and the module hubs that need their own
settings (fail-fast timing, typical times, speed): ``yield from serve(DemoHub(...))``.
"""

from __future__ import annotations

from collections.abc import Iterator

from richprogress.demo.hub import DemoHub


def serve(hub: DemoHub) -> Iterator[DemoHub]:
    """Start ``hub``, yield it, stop it (also when the tests failed), then check that no
    process it started is left."""
    with hub:
        yield hub
    left = hub.pids
    assert not left, f"processes left running after stop: {left}"
