"""A real JupyterHub process for tests with a spawner of their own. It is started, awaited
and stopped as the demo's hub is (``richprogress.demo.hub_process``), so the two kinds of
test hub differ only in their config.

A real ``jupyterhub`` (with configurable-http-proxy from ``node_modules``) runs in a folder
of its own, on 127.0.0.1 free ports, at a non-root base_url, configured by a generated
``jupyterhub_config.py``: the test's spawner code, then the settings every test hub
shares (``COMMON_CONFIG``), then the test's own lines (``richprogress.setup(c)`` and
whatever it wants). It is stopped by its pid (SIGTERM, then SIGKILL after 20 s), and its
proxy by the pid in its pid file, so nothing is left running.

- ``hub_process(work, spawner_code, ...)``: context manager, yields a ``Hub`` once the hub
  answers; usable from a script too (e.g. to take screenshots).
- ``Hub``: the running hub's URL, tokens and log, with the requests tests make (API with a
  token, pages with a login cookie, starting a server).
- ``free_port()``: a free TCP port on 127.0.0.1.
- ``HOSTILE``: text holding HTML, which the spawners put in image names and messages.

Users: every hub has ``admin`` (an admin), ``reader`` (``read:servers`` on alice's servers
only) and ``visitor`` (``access:servers`` on them only), besides the test's own users.
Used by the hub tests of ``tests/web/``, ``tests/history/`` and ``tests/setup/``, and by
``ui-tests/test_container_log_page.py``.
"""

from __future__ import annotations

import html
import os
import re
import signal
import textwrap
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import requests

from richprogress.demo.hub_process import launch_jupyterhub, terminate, wait_until_answering
from richprogress.demo.processes import free_port
from tests.helpers.paths import REPO

__all__ = ["BASE_URL", "CHP_BIN", "COMMON_CONFIG", "HOSTILE", "Hub", "free_port", "hub_process"]

CHP_BIN = REPO / "node_modules" / ".bin"
BASE_URL = "/prefix/"
#: text holding HTML, for names and messages that must stay inert on every page
HOSTILE = "<img src=x onerror=alert(1)>"

#: The settings every test hub shares, after the test's spawner code. ``{spawner_class}``
#: names a class that code defines; the ports and paths are filled in by ``hub_process``.
COMMON_CONFIG = textwrap.dedent(
    """
    c = get_config()  # noqa
    c.JupyterHub.ip = "127.0.0.1"
    c.JupyterHub.port = {port}
    c.JupyterHub.hub_ip = "127.0.0.1"
    c.JupyterHub.hub_port = {hub_port}
    c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
    c.ConfigurableHTTPProxy.pid_file = {chp_pid!r}
    c.JupyterHub.base_url = {base_url!r}
    c.JupyterHub.db_url = "sqlite:///" + {db!r}
    c.JupyterHub.cookie_secret_file = {secret!r}
    c.JupyterHub.pid_file = {hub_pid!r}
    c.JupyterHub.allow_named_servers = True
    c.JupyterHub.authenticator_class = "dummy"
    c.Authenticator.admin_users = {{"admin"}}
    # allowed users are created at start with the "user" role (token users are not)
    c.Authenticator.allowed_users = {users!r}
    c.JupyterHub.spawner_class = {spawner_class}
    c.JupyterHub.tornado_settings = {{"slow_spawn_timeout": 0}}
    c.JupyterHub.api_tokens = {tokens!r}
    c.JupyterHub.load_roles = [
        {{"name": "alice-reader", "scopes": ["read:servers!user=alice"], "users": ["reader"]}},
        {{"name": "alice-visitor", "scopes": ["access:servers!user=alice"], "users": ["visitor"]}},
    ]
    c.JupyterHub.cleanup_servers = True
    """
)


@dataclass
class Hub:
    """A running hub: its public URL (with base_url), a token per user, its log and folder."""

    url: str
    tokens: dict[str, str]
    log: Path
    work: Path

    def api(self, path: str, user: str | None, **params: str) -> requests.Response:
        """GET ``hub/api/{path}`` with ``user``'s token (None: no token)."""
        headers = {"Authorization": f"token {self.tokens[user]}"} if user else {}
        return requests.get(self.url + "hub/api/" + path, headers=headers, params=params, timeout=10)

    def page(self, path: str, user: str) -> requests.Response:
        """A hub page as a logged-in browser sees it (pages take cookies, not tokens)."""
        return self.login(user).get(self.url + "hub/" + path, timeout=10)

    def login(self, user: str) -> requests.Session:
        """A session logged in as ``user`` through the login form (the dummy authenticator)."""
        session = requests.Session()
        form = session.get(self.url + "hub/login", timeout=10)
        xsrf = re.search(r'name="_xsrf" value="([^"]+)"', form.text)
        assert xsrf, "no _xsrf field on the login form"
        r = session.post(
            self.url + "hub/login",
            data={"username": user, "password": "x", "_xsrf": html.unescape(xsrf.group(1))},
            timeout=10,
            allow_redirects=False,
        )
        assert r.status_code == 302, r.text
        return session

    def start_server(self, user: str, server_name: str = "", options: dict[str, object] | None = None) -> None:
        """Ask the hub to start a server (``options``: the JSON body, the user options;
        None sends no body)."""
        name = quote(user, safe="")
        path = f"users/{name}/servers/{quote(server_name, safe='')}" if server_name else f"users/{name}/server"
        r = requests.post(
            self.url + "hub/api/" + path,
            headers={"Authorization": f"token {self.tokens[user]}"},
            json=options,
            timeout=10,
        )
        assert r.status_code in (201, 202), r.text

    def wait_api(self, path: str, done: Callable[[Any], bool], what: str, *, every: float, settle: float) -> Any:
        """GET ``hub/api/{path}`` as admin every ``every`` seconds until ``done(its JSON)``,
        then wait ``settle`` seconds more (the hub marks a spawner failed right after its
        ``start()`` raised); the JSON. After 30 s: fails saying ``what`` did not happen,
        with the end of the hub's log."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            r = self.api(path, "admin")
            if r.status_code == 200 and done(r.json()):
                time.sleep(settle)
                return r.json()
            time.sleep(every)
        raise AssertionError(f"{what}; log:\n{self.log.read_text()[-3000:]}")


def _stop_pid_file(pid_file: Path) -> None:
    """SIGTERM the process whose pid the file holds, if it is still there."""
    if pid_file.exists():
        try:
            os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)
        except (ValueError, ProcessLookupError):
            pass


@contextmanager
def hub_process(
    work: Path,
    spawner_code: str,
    *,
    spawner_class: str,
    users: list[str],
    tokens: dict[str, str],
    extra_config: str = "",
    env: Mapping[str, str] | None = None,
    base_url: str = BASE_URL,
) -> Iterator[Hub]:
    """A real jupyterhub (and its proxy) in ``work``, until the block ends.

    ``spawner_code``: Python that defines ``spawner_class`` (and imports what the config
    uses); ``extra_config``: lines after the common ones; ``tokens``: user -> API token;
    ``env``: more environment for the hub. Run again in the same ``work``, it is the same
    hub restarted (its database, cookie secret and log are kept; the log is appended to).
    """
    port = free_port()
    config = work / "jupyterhub_config.py"
    common = COMMON_CONFIG.format(
        port=port,
        hub_port=free_port(),
        proxy_api_port=free_port(),
        chp_pid=str(work / "chp.pid"),
        hub_pid=str(work / "hub.pid"),
        base_url=base_url,
        db=str(work / "hub.sqlite"),
        secret=str(work / "cookie_secret"),
        users=set(users),
        spawner_class=spawner_class,
        tokens={token: user for user, token in tokens.items()},
    )
    config.write_text(textwrap.dedent(spawner_code) + common + textwrap.dedent(extra_config))
    log = work / "hub.log"
    hub_env = {**os.environ, "PATH": f"{CHP_BIN}{os.pathsep}{os.environ['PATH']}", **(env or {})}
    with open(log, "ab") as out:
        proc = launch_jupyterhub(config, cwd=work, env=hub_env, log=out)
    hub = Hub(url=f"http://127.0.0.1:{port}{base_url}", tokens=tokens, log=log, work=work)
    try:
        wait_until_answering(proc, hub.url, timeout=120, log=log)
        yield hub
    finally:
        terminate(proc, 20)
        # the hub stops its proxy on a clean exit; make sure of it either way
        _stop_pid_file(work / "chp.pid")
