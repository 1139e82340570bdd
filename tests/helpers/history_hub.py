"""The spawn-history hub: a real ``jupyterhub`` whose spawns tell an image that does not
exist, then fail (or, with the options ``{"ok": true}``, become ready), with
``richprogress.setup(c)`` keeping them in the real store.

- ``history_hub_process(work, history_url=None, image=None, ...)``: context manager, yields
  a ``tests.helpers.hub.Hub`` (reusing ``work``'s database and secret when run again);
  its spawner is ``RichProgressMixin`` on ``HistoryTestSpawner`` (``SPAWNER_CODE``), its
  users ``USERS``;
- ``start(hub, user, server, ok=False, **options)``: start a server that fails, or one
  that becomes ready;
- ``spawns_path(user, server)``, ``wait_stored(hub, user, server, count)``: the stored
  spawns' endpoint, and waiting until they are there.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from tests.helpers.hub import HOSTILE, Hub, hub_process

USERS = ["alice", "bob", "admin", "reader", "visitor"]



# The spawner of the generated jupyterhub_config.py (``tests.helpers.hub`` adds the common settings).
SPAWNER_CODE = textwrap.dedent(
    '''
    import asyncio
    import os
    import socket

    from jupyterhub.spawner import Spawner
    from tornado import web
    from tornado.httpserver import HTTPServer
    from traitlets import Unicode

    import richprogress
    from richprogress import RichProgressMixin

    HOSTILE = {hostile!r}
    STEPS = [
        {{"progress": 10, "message": "Found a machine for your server"}},
        {{"progress": 50, "message": f"Downloading the image quay.io/x/{{HOSTILE}}:1"}},
        {{"progress": 60, "message": f"The image quay.io/x/{{HOSTILE}}:1 does not exist"}},
    ]

    class Ok(web.RequestHandler):
        def get(self, *args):
            self.write("ok")

    class HistoryTestSpawner(Spawner):
        """Tells STEPS, then fails; with user_options {{"ok": true}} it becomes ready (its own
        HTTP server is not `_server`, which is JupyterHub's record of the server)."""

        _http_server = None
        #: as KubeSpawner's: the hub's configured default until a spawn's options set it
        image = Unicode(os.environ.get("RP_TEST_IMAGE", "quay.io/x/base-notebook:latest"))

        async def start(self):
            await asyncio.sleep(0.6)
            if not self.user_options.get("ok"):
                raise RuntimeError(f"The image quay.io/x/{{HOSTILE}}:1 does not exist")
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
            sock.close()
            self._http_server = HTTPServer(web.Application([(r"/(.*)", Ok)]))
            self._http_server.listen(port, "127.0.0.1")
            return ("127.0.0.1", port)

        async def progress(self):
            for step in STEPS:
                await asyncio.sleep(0.1)
                yield step

        async def poll(self):
            return None if self._http_server is not None else 0

        async def stop(self, now=False):
            if self._http_server is not None:
                self._http_server.stop()
                self._http_server = None

    class Spawner(RichProgressMixin, HistoryTestSpawner):
        pass

    '''
)



# The lines after tests.helpers.hub's COMMON_CONFIG ({history_line}: c.SpawnHistory.url, or nothing).
EXTRA_CONFIG = """
c.Spawner.options_form = "<input name='anything'>"
c.Spawner.http_timeout = 10
# a spawn's options may name its image and start timeout (JupyterHub applies them before
# start(), on this spawn's spawner only)
c.Spawner.apply_user_options = {{"image": "image", "timeout": "start_timeout"}}
{history_line}
richprogress.setup(c)
"""



@contextmanager
def history_hub_process(
    work: Path,
    history_url: str | None = None,
    image: str | None = None,
    read_timeout: float | None = None,
    retry_seconds: float | None = None,
) -> Iterator[Hub]:
    """A real jupyterhub in ``work`` (reusing its database and secret when run again);
    ``image``: the spawners' default image, else the spawner's own default;
    ``read_timeout``, ``retry_seconds``: ``c.SpawnHistory``'s, else their defaults."""
    history_line = f"c.SpawnHistory.url = {history_url!r}" if history_url else ""
    if read_timeout is not None:
        history_line += f"\nc.SpawnHistory.read_timeout = {read_timeout!r}"
    if retry_seconds is not None:
        history_line += f"\nc.SpawnHistory.retry_seconds = {retry_seconds!r}"
    with hub_process(
        work,
        SPAWNER_CODE.format(hostile=HOSTILE),
        spawner_class="Spawner",
        users=USERS,
        tokens={user: f"token-{i}-{user}-stable" for i, user in enumerate(USERS)},
        extra_config=EXTRA_CONFIG.format(history_line=history_line),
        env={"RP_TEST_IMAGE": image} if image else None,
    ) as hub:
        yield hub



def start(hub: Hub, user: str, server: str = "", ok: bool = False, **options: object) -> None:
    """Start a server that fails, or with ``ok`` one that becomes ready; ``options``: more
    user options (``image``, ``timeout``)."""
    hub.start_server(user, server, {"ok": True, **options} if ok else options)



def spawns_path(user: str, server: str = "", suffix: str = "") -> str:
    base = f"richprogress/users/{quote(user, safe='')}"
    if server:
        base += f"/servers/{quote(server, safe='')}"
    return base + "/spawns" + suffix



def wait_stored(hub: Hub, user: str, server: str = "", count: int = 1) -> list[dict]:
    """Until the server has ``count`` stored spawns; its spawns, newest first."""
    found = hub.wait_api(
        spawns_path(user, server),
        lambda data: len(data["spawns"]) >= count,
        f"no stored spawn for {user}/{server}",
        every=0.2,
        settle=0.5,
    )
    return list(found["spawns"])
