"""Patience on an injected clock: a spawner that never runs, a clock the test moves by hand.

- ``Plain``: ``RichProgressMixin`` on a spawner that never runs, whose typical times are the
  test's own (``typical``);
- ``Clock``: ``T0`` plus ``seconds``, which the test sets;
- ``patience_records(timeline)``: the timeline's patience rows.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from jupyterhub.spawner import Spawner

from richprogress.model.timeline import SpawnTimeline
from richprogress.stream.mixin import RichProgressMixin

T0 = datetime(2026, 11, 29, 21, 33, 20, tzinfo=timezone.utc)



class Plain(RichProgressMixin, Spawner):
    """A spawner that never runs: only the pump's patience step is exercised.

    Its typical times are the test's (``typical``, None by default), not the hub-wide
    cache's, which other tests of the same process may have fed."""

    typical: Any = None

    def _rp_patience_typical(self) -> Any:
        return self.typical

    async def start(self) -> str:  # pragma: no cover - never called
        raise NotImplementedError

    async def stop(self, now: bool = False) -> None:  # pragma: no cover - never called
        pass

    async def poll(self) -> int | None:  # pragma: no cover - never called
        return None



class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def __call__(self) -> datetime:
        return T0 + timedelta(seconds=self.seconds)



def patience_records(timeline: SpawnTimeline) -> list[dict]:
    return [dict(r) for r in timeline.records() if str(r["id"]).startswith("patience-")]
