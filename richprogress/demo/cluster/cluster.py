"""``SimulatedCluster``: the simulated Kubernetes API server, its kubelet, one object.

Usage::

    cluster = SimulatedCluster(speed=10)
    url = await cluster.start()            # http://127.0.0.1:PORT
    cluster.write_kubeconfig("kubeconfig.json")
    ...                                    # point KUBECONFIG (or k8s_api_host) at it
    await cluster.stop()
"""

from __future__ import annotations

import json
import os
import socket
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from aiohttp import web

from .api import KubeAPI
from .events import build_event
from .kubelet import SimulatedKubelet
from .scenarios import (
    Scenario,
    builtin_registry,
    builtin_scenarios,
    load_scenarios,
    normalize_image,
)
from .store import Obj, ObjectStore


class SimulatedCluster:
    """A Kubernetes API server on loopback that plays scenarios for the pods created on it.

    ``speed`` divides every simulated delay (10 makes a 3-minute scale-up take 18 s) and can
    be changed while running. ``scenario_dir`` holds extra scenario files (added to the
    shipped ones, replacing same-named ones); ``registry`` replaces the image list. ``exec_commands`` lets
    ``pods/exec`` run the command on this machine with the pod's environment (off: anyone
    who reaches the API could run anything; see podexec.py). ``real_event_rates`` (on by
    default) writes events as client-go's recorders do (throttled, merged, late; expired after
    an hour: recorder.py), as the pages meet them on a real cluster; ``False`` writes every
    occurrence at once, for a test that wants each write. ``forget_events_on_delete`` drops a pod's Events when the pod
    goes (real clusters keep them for about an hour, so the default keeps them).
    """

    def __init__(
        self,
        speed: float = 1.0,
        *,
        forget_events_on_delete: bool = False,
        scenario_dir: str | os.PathLike[str] | None = None,
        registry: Iterable[str] | None = None,
        exec_commands: bool = False,
        real_event_rates: bool = True,
    ) -> None:
        self.speed = float(speed)
        # Extra scenario files add to (or replace, by name) the shipped ones.
        self.scenarios: dict[str, Scenario] = dict(builtin_scenarios())
        if scenario_dir:
            self.scenarios.update(load_scenarios(Path(scenario_dir)))
        self.registry: frozenset[str] = (
            frozenset(normalize_image(i) for i in registry) if registry is not None else builtin_registry()
        )
        self.store = ObjectStore(speed=lambda: self.speed)
        self.kubelet = SimulatedKubelet(
            self.store,
            self.scenarios,
            self.registry,
            speed=lambda: self.speed,
            forget_events_on_delete=forget_events_on_delete,
            real_event_rates=real_event_rates,
        )
        self.api = KubeAPI(self.store, self.kubelet, speed=lambda: self.speed, exec_commands=exec_commands)
        self.api.ensure_namespace("default")
        self._runner: web.AppRunner | None = None
        self.url: str | None = None

    def scenario_names(self) -> list[str]:
        """Names of the scenarios this cluster can play, sorted."""
        return sorted(self.scenarios)

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Listen on ``host:port`` (0 picks a free port) and return the base URL."""
        runner = web.AppRunner(self.api.app, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        site = web.SockSite(runner, sock)
        await site.start()
        self._runner = runner
        bound_port = sock.getsockname()[1]
        self.url = f"http://{host}:{bound_port}"
        return self.url

    async def stop(self) -> None:
        """Stop playbacks and notebook stand-ins, end watches, stop listening."""
        await self.kubelet.stop()
        await self.api.close_watches()
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    def write_kubeconfig(self, path: str | os.PathLike[str], namespace: str = "default") -> Path:
        """Write a kubeconfig (JSON, which YAML loaders read) pointing at this server."""
        if self.url is None:
            raise RuntimeError("start() the cluster before writing its kubeconfig")
        config = kubeconfig(self.url, namespace)
        target = Path(path)
        target.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        return target

    # -- helpers for tests and benchmarks --------------------------------------------
    def pod(self, name: str, namespace: str = "default") -> Obj | None:
        """The stored pod, or None."""
        return self.store.find("pods", namespace, name)

    def events_for(self, name: str, namespace: str = "default") -> list[Obj]:
        """Stored events whose involved object has this name, in creation order."""
        return [
            e
            for e in self.store.list("events", namespace)
            if e["involvedObject"]["name"] == name
        ]

    def add_event(
        self,
        involved_name: str,
        reason: str,
        message: str,
        *,
        namespace: str = "default",
        event_type: str = "Normal",
        kind: str = "Pod",
        involved_uid: str | None = None,
        component: str = "kubelet",
        field_path: str | None = None,
    ) -> Obj:
        """Store one extra Event (e.g. background load for a benchmark) and return it."""
        involved: dict[str, Any] = {
            "kind": kind,
            "namespace": namespace,
            "name": involved_name,
            # a stable uid per name, like one pod's events share their pod's uid
            "uid": involved_uid or str(uuid.uuid5(uuid.NAMESPACE_URL, f"{namespace}/{involved_name}")),
            "apiVersion": "v1",
        }
        if field_path:
            involved["fieldPath"] = field_path
        self.api.ensure_namespace(namespace)
        event = build_event(
            namespace=namespace,
            involved=involved,
            reason=reason,
            message=message,
            event_type=event_type,
            component=component,
            instance="sim-node-1" if component == "kubelet" else "",
        )
        return self.store.create("events", event)


def kubeconfig(url: str, namespace: str = "default") -> dict[str, Any]:
    """A minimal kubeconfig for ``url`` (plain HTTP, no credentials)."""
    name = "richprogress-simulated"
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": url}}],
        "users": [{"name": name, "user": {}}],
        "contexts": [
            {"name": name, "context": {"cluster": name, "user": name, "namespace": namespace}}
        ],
        "current-context": name,
        "preferences": {},
    }
