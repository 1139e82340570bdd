"""A stand-in for a user's notebook server, started by the simulated kubelet.

When a simulated pod becomes Running and ready, a tiny aiohttp server listens on the pod's
IP and notebook port (or the scenario's ``listen_port``), so that JupyterHub's readiness check (``GET <prefix>api``, any status
below 500) passes and the proxy has something to route the user to. It serves a small page,
"simulated notebook server for <user>", with a link back to the hub's home (where the
user stops the server or starts another). It is stopped when the pod is deleted.
"""

from __future__ import annotations

import html
import json
import socket
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from aiohttp import web

try:  # the hub only warns when this header is missing; send it when we can
    from jupyterhub import __version__ as _HUB_VERSION
except ImportError:  # pragma: no cover - jupyterhub is a dependency of the demo
    _HUB_VERSION = "0"


def pod_env(pod: dict[str, Any]) -> dict[str, str]:
    """The environment of the pod's first container, as a dict."""
    containers = pod.get("spec", {}).get("containers") or [{}]
    env: dict[str, str] = {}
    for item in containers[0].get("env") or []:
        if isinstance(item, dict) and "name" in item and isinstance(item.get("value"), str):
            env[item["name"]] = item["value"]
    return env


def notebook_port(pod: dict[str, Any]) -> int:
    """The pod's ``notebook-port`` containerPort (KubeSpawner's name), else 8888."""
    for container in pod.get("spec", {}).get("containers") or []:
        ports = container.get("ports") or []
        for port in ports:
            if port.get("name") == "notebook-port":
                return int(port["containerPort"])
        if ports:
            return int(ports[0]["containerPort"])
    return 8888


class NotebookStandIn:
    """One stand-in server for one pod; ``start()`` raises OSError if the address is taken."""

    def __init__(
        self, pod: dict[str, Any], ip: str, log: Callable[[str], None] | None = None, port: int | None = None
    ) -> None:
        env = pod_env(pod)
        labels = pod.get("metadata", {}).get("labels") or {}
        self.user = env.get("JUPYTERHUB_USER") or labels.get("hub.jupyter.org/username", "")
        self.prefix = env.get("JUPYTERHUB_SERVICE_PREFIX") or f"/user/{self.user}/"
        base_url = env.get("JUPYTERHUB_BASE_URL") or "/"
        self.hub_home = base_url.rstrip("/") + "/hub/home"
        self.ip = ip
        # a scenario may have it listen elsewhere than the pod says (a server on the wrong
        # port: the hub's check never gets an answer)
        self.port = port or notebook_port(pod)
        self.pod_name = pod.get("metadata", {}).get("name", "")
        self._runner: web.AppRunner | None = None
        self.requests: list[str] = []  # paths served, for tests
        # the container's output (``kubectl logs``): lines like a Jupyter server's
        self._log = log or (lambda text: None)

    def _say(self, text: str) -> None:
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        self._log(f"[I {stamp} ServerApp] {text}")

    @property
    def url(self) -> str:
        return f"http://{self.ip}:{self.port}"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        # Bind a socket ourselves so a busy address fails here, at once, with OSError.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        # Allows rebinding right after a previous stand-in closed (TIME_WAIT); two live
        # listeners on one address still conflict on Linux, which is what we want.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.ip, self.port))
            site = web.SockSite(runner, sock)
            await site.start()
        except BaseException:
            # busy address, or the pod was deleted while we started: leave nothing open
            sock.close()
            await runner.cleanup()
            raise
        self._runner = runner
        self._say(f"simulated notebook server for {self.user or '(no user)'} is running at:")
        self._say(f"{self.url}{self.prefix}")

    async def stop(self) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    async def _handle(self, request: web.Request) -> web.Response:
        started = time.monotonic()
        response = await self._answer(request)
        took = (time.monotonic() - started) * 1000
        self._say(f"{response.status} {request.method} {request.path} ({request.remote}) {took:.2f}ms")
        return response

    async def _answer(self, request: web.Request) -> web.Response:
        self.requests.append(request.path)
        headers = {"X-JupyterHub-Version": _HUB_VERSION}
        path = request.path
        if path == "/" and self.prefix != "/":
            # as jupyterhub-singleuser does: the root sends the user to the server's prefix
            return web.Response(status=302, headers={**headers, "Location": self.prefix})
        if not (path + "/").startswith(self.prefix):
            return web.Response(status=404, text="not found\n", headers=headers)
        rest = path[len(self.prefix) :]
        if rest == "api" or rest.startswith("api/"):
            body = {"version": "simulated", "user": self.user, "pod": self.pod_name}
            return web.Response(text=json.dumps(body), content_type="application/json", headers=headers)
        # every value escaped: the user name can hold anything
        user, home = html.escape(self.user), html.escape(self.hub_home, quote=True)
        page = (
            '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{user}: simulated notebook server</title></head>\n"
            f"<body><main><h1>simulated notebook server for {user}</h1>\n"
            "<p>The demo's stand-in for a notebook server: the spawn worked.</p>\n"
            f'<p><a id="hub-home" href="{home}">Back to the hub\'s home page</a></p>'
            "</main></body></html>\n"
        )
        return web.Response(text=page, content_type="text/html", headers=headers)
