"""A demo hub for a fixture: started, yielded, stopped, and checked to leave nothing running.

Shared by the session hubs in ``ui-tests/conftest.py`` and the module hubs that need their own
settings (fail-fast timing, typical times, speed): ``yield from serve(DemoHub(...))``;
and by the tests that restart a hub on its state: ``yield from restartable(folder, ...)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from richprogress.demo.hub import DemoHub, free_port


def serve(hub: DemoHub) -> Iterator[DemoHub]:
    """Start ``hub``, yield it, stop it (also when the tests failed), then check that no
    process it started is left."""
    with hub:
        yield hub
    left = hub.pids
    assert not left, f"processes left running after stop: {left}"


def restartable(state: Path, **settings: Any) -> Iterator[Callable[..., DemoHub]]:
    """Yield ``start(history_url=None)``: a DemoHub with ``settings`` (speed, start_timeout,
    extra_config...) on a fixed port and the state folder ``state``; calling it again after
    ``stop()`` is a hub restart. Afterwards every hub is stopped and none may leave a process."""
    port = free_port()
    running: list[DemoHub] = []

    def start(history_url: str | None = None) -> DemoHub:
        hub = DemoHub(port=port, workdir=state, history_url=history_url, **settings)
        running.append(hub)
        hub.start()
        return hub

    yield start
    # the newest (running) hub first, and the leak check after all are stopped: the hubs
    # share one state folder, so an older one's stop() reads the proxy pid file of the
    # hub running now, and a hub still running restarts a proxy that went away
    for hub in reversed(running):
        hub.stop()
    assert [hub.pids for hub in running] == [[] for _hub in running]
