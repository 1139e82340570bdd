"""``pods/exec`` for the simulated pods: the command runs on this machine, with the pod's env.

Off unless the cluster is made with ``exec_commands=True`` (anyone who can reach the API
could run anything as this process's user): KubeSpawner's own test suite turns it on to run
its checks "inside" a pod (stdlib Python fetching the notebook's URL, which the stand-in on
the pod's loopback address answers). The protocol is the real one (Kubernetes v1.31,
``staging/src/k8s.io/apimachinery/pkg/util/remotecommand/constants.go`` and
``staging/src/k8s.io/kubelet/pkg/cri/streaming/remotecommand/websocket.go``): a websocket
whose binary messages start with a channel byte (1 stdout, 2 stderr, 3 the final Status),
where a non-zero exit is a ``NonZeroExitCode`` Status naming the code.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from aiohttp import WSMsgType, web

from .notebook import pod_env
from .store import Obj

PROTOCOLS = ("v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io")
STDOUT, STDERR, ERROR = 1, 2, 3
#: an exec'd command is stopped after this many seconds
EXEC_TIMEOUT_SECONDS = 120.0


def exit_status(code: int, command: list[str]) -> dict[str, Any]:
    """The Status sent on the error channel when the command ends."""
    if code == 0:
        return {"metadata": {}, "status": "Success"}
    return {
        "metadata": {},
        "status": "Failure",
        "message": f"command terminated with non-zero exit code: error executing command {command}, exit code {code}",
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]},
    }


def refusal(pod: Obj, container: str | None) -> str | None:
    """Why the kubelet cannot exec into this pod now, or None."""
    names = [str(c.get("name", "")) for c in (pod.get("spec") or {}).get("containers") or []]
    if container is not None and container not in names:
        return f"container {container} is not valid for pod {pod['metadata']['name']}"
    if (pod.get("status") or {}).get("phase") != "Running":
        return f'unable to upgrade connection: container not found ("{container or names[0]}")'
    return None


async def run_exec(request: web.Request, pod: Obj, command: list[str]) -> web.StreamResponse:
    """Answer the websocket upgrade and run ``command``, streaming its output."""
    ws = web.WebSocketResponse(protocols=PROTOCOLS)
    await ws.prepare(request)
    env = {**os.environ, **pod_env(pod)}
    try:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
        )
    except OSError as e:
        await ws.send_bytes(bytes([STDERR]) + f"{e}\n".encode())
        await ws.send_bytes(bytes([ERROR]) + json.dumps(exit_status(126, command)).encode())
        await ws.close()
        return ws

    async def pump(stream: asyncio.StreamReader | None, channel: int) -> None:
        if stream is None:
            return
        while chunk := await stream.read(65536):
            await ws.send_bytes(bytes([channel]) + chunk)

    try:
        await asyncio.wait_for(
            asyncio.gather(pump(process.stdout, STDOUT), pump(process.stderr, STDERR), process.wait()),
            EXEC_TIMEOUT_SECONDS,
        )
    except asyncio.TimeoutError:
        process.kill()
        await process.wait()
    code = process.returncode if process.returncode is not None else 137
    if code < 0:  # killed by a signal: the shell's 128 + signal number
        code = 128 - code
    await ws.send_bytes(bytes([ERROR]) + json.dumps(exit_status(code, command)).encode())
    await ws.close()
    # drain what the client still sends (a close frame)
    async for message in ws:
        if message.type in (WSMsgType.CLOSE, WSMsgType.ERROR):
            break
    return ws
