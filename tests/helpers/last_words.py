"""``LastWordsSpawner``, the spawner of a real hub whose servers fail with a container log
that holds secrets (the config lines for ``tests.helpers.hub.hub_process``).

``SPAWNER_CODE`` defines it: RichProgressMixin over a spawner whose start fails, with
``_rp_last_words`` keeping ``LOG`` (a hub token ``TOKEN``, a password ``SECRET``, HTML, and
``LAST_LINE`` last) through ``story.container_log`` (cut and redacted), as
``RichKubeSpawner`` keeps what the Kubernetes API answers. Its ``show_container_log`` comes
from the server's name: the default server keeps the default (``owner``), ``adm`` is
``admins``, ``hide`` is ``nobody``. ``USERS``: the hub's users; ``EXTRA_CONFIG``: the lines
after the common settings.
"""

from __future__ import annotations

import textwrap

TOKEN = "0123456789abcdef0123456789abcdef"



SECRET = "hunter2-pg-password"



USERS = ["alice", "bob", "admin", "reader", "visitor"]



SPAWNER_CODE = textwrap.dedent(
    f'''
    import asyncio

    from jupyterhub.spawner import Spawner

    import richprogress
    from richprogress import RichProgressMixin
    from richprogress.story.container_log import container_log

    LOG = (
        "[I 10:00:00 ServerApp] connecting with JUPYTERHUB_API_TOKEN={TOKEN}\\n"
        "[E 10:00:01 ServerApp] <script>alert(1)</script> DB_PASSWORD={SECRET}\\n"
        "Traceback (most recent call last):\\n"
        "PermissionError: [Errno 13] Permission denied: '/home/jovyan/work'\\n"
    )
    SHOW = {{"": "owner", "adm": "admins", "hide": "nobody"}}

    class Exits(Spawner):
        async def start(self):
            await asyncio.sleep(0.2)
            raise RuntimeError("The server exited before it was ready.")

        async def poll(self):
            return 0

        async def stop(self):
            pass

    class LastWordsSpawner(RichProgressMixin, Exits):
        async def start(self):
            self.show_container_log = SHOW.get(self.name, "owner")
            return await super().start()

        async def _rp_last_words(self, timeline):
            # what RichKubeSpawner keeps of the Kubernetes API's answer
            timeline.container_log = dict(container_log("notebook", True, LOG))
    '''
)



EXTRA_CONFIG = "richprogress.setup(c)\n"



LAST_LINE = "PermissionError: [Errno 13] Permission denied: '/home/jovyan/work'"
