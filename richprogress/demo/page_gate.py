"""The demo's spawner for browser tests: a spawn begins once its pending page reads it.

A scenario replayed at twenty times a real cluster's pace can end within a second or two.
On a busy machine the browser may open the pending page only after that, and JupyterHub
then shows the page of a spawn that already ended: a test that came to read the live rows
finds none, and fails by the machine's luck. ``PageGatedSpawner`` holds the start until the
spawn's first progress reader (the pending page's stream) arrives, at most ``page_wait``
seconds, as a pod may wait for the API server on a real cluster: what the page shows from
then on is what it would have shown, never missed. The demo itself does not use it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from traitlets import Float

from richprogress.kube.spawner import RichKubeSpawner


class PageGatedSpawner(RichKubeSpawner):
    """``RichKubeSpawner`` whose ``start()`` first waits for a ``progress()`` reader."""

    page_wait = Float(
        10.0,
        config=True,
        help="Seconds a start waits for its first progress reader before it goes on anyway.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._page_reading = asyncio.Event()

    async def start(self) -> Any:
        try:
            await asyncio.wait_for(self._page_reading.wait(), self.page_wait)
        except asyncio.TimeoutError:
            self.log.info("No page read the spawn of %s within %g s; starting anyway", self._log_name, self.page_wait)
        # the next spawn waits for a reader of its own
        self._page_reading = asyncio.Event()
        return await super().start()

    def progress(self) -> AsyncGenerator[dict[str, Any], None]:
        self._page_reading.set()
        return super().progress()
