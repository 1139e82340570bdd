"""``RichScripted``: RichProgressMixin on ``ScriptedSpawner``, a real
``jupyterhub.spawner.Spawner`` subclass whose ``start()`` walks through steps that the test
releases one by one (no sleeps to race against), and whose own ``progress()`` yields one
message per step (``STEPS``), as a third-party spawner would.

- ``make(fail=None, **traits)``: a ``RichScripted`` for alice (``fail``: what ``start()``
  raises after the last step);
- ``run(spawner)``: ``start()`` with one progress reader, every step released; the events
  and the error; ``collect(spawner, into)``: one more reader; ``release_all(spawner)``.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from jupyterhub.spawner import Spawner

from richprogress.stream.mixin import RichProgressMixin


class ScriptedSpawner(Spawner):
    """start() waits for the test to release each step; progress() reports each step."""

    def __init__(self, steps: list[tuple[str, int]], fail: BaseException | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.steps = steps
        self.fail = fail
        self.gates = [asyncio.Event() for _ in steps]
        self.done_steps: asyncio.Queue[int] = asyncio.Queue()
        self.stopped = False

    async def start(self) -> str:
        for n, gate in enumerate(self.gates):
            await gate.wait()
            await self.done_steps.put(n)
        if self.fail is not None:
            raise self.fail
        return "http://127.0.0.1:9999"

    async def progress(self) -> Any:
        for _ in self.steps:
            n = await self.done_steps.get()
            message, progress = self.steps[n]
            yield {"progress": progress, "message": message}

    async def stop(self, now: bool = False) -> None:
        self.stopped = True

    async def poll(self) -> int | None:
        return None



class RichScripted(RichProgressMixin, ScriptedSpawner):
    pass



STEPS = [("Allocating a slot", 20), ("Copying the environment", 50), ("Booting", 70)]



def make(fail: BaseException | None = None, **traits: Any) -> RichScripted:
    traits.setdefault("patience_after", 0)
    user = SimpleNamespace(name="alice", id=1, url="/user/alice/", escaped_name="alice")
    return RichScripted(list(STEPS), fail=fail, user=user, **traits)



async def collect(spawner: Any, into: list[dict[str, Any]]) -> None:
    async for event in spawner.progress():
        into.append(event)



async def release_all(spawner: RichScripted) -> None:
    for gate in spawner.gates:
        gate.set()
        await asyncio.sleep(0.01)



async def run(spawner: RichScripted) -> tuple[list[dict[str, Any]], BaseException | None]:
    start = asyncio.ensure_future(spawner.start())
    await asyncio.sleep(0)
    events: list[dict[str, Any]] = []
    reader = asyncio.ensure_future(collect(spawner, events))
    await release_all(spawner)
    error = None
    try:
        await start
    except BaseException as exc:  # noqa: B036 - CancelledError is an outcome here
        error = exc
    await asyncio.wait_for(reader, 5)
    return events, error
