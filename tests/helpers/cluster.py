"""Helpers to run the real KubeSpawner against the simulated cluster in tests.

- ``running_cluster(tmp_path, speed=..., **options)``: async context manager; starts a
  ``SimulatedCluster`` on 127.0.0.1, writes a kubeconfig and points ``KUBECONFIG`` at it
  (KubeSpawner's ``load_config`` needs a loadable one; kubernetes_asyncio's default
  location is patched too, as it reads the variable at import; KubeSpawner's cached
  ``load_config`` is cleared, as it keys on the host and ports get reused), and on exit stops KubeSpawner's
  class-wide reflectors and the cluster, restoring the environment.
- ``fake_user(name)``: the few attributes KubeSpawner reads from a JupyterHub user.
- ``make_kubespawner(cluster, name, **traits)``: a standalone ``KubeSpawner(_mock=True)``
  whose API host is the cluster.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from richprogress.demo.cluster import SimulatedCluster


def fake_user(name: str, user_id: int = 1) -> SimpleNamespace:
    return SimpleNamespace(name=name, id=user_id, url=f"/user/{name}/", escaped_name=name)


def make_kubespawner(cluster: SimulatedCluster, name: str, **traits: Any) -> Any:
    from kubespawner import KubeSpawner

    traits.setdefault("start_timeout", 20)
    return KubeSpawner(_mock=True, user=fake_user(name), k8s_api_host=cluster.url, **traits)


@asynccontextmanager
async def running_cluster(
    tmp_path: Path, speed: float = 20.0, **options: Any
) -> AsyncIterator[SimulatedCluster]:
    cluster = SimulatedCluster(speed, **options)
    await cluster.start()
    # KubeSpawner's load_config(host) is lru-cached and sets the process-wide default host
    # only on a miss: when the OS hands out a port an earlier test's cluster had, the cached
    # call would leave the default pointing at the cluster of the test in between.
    from kubespawner.clients import load_config

    load_config.cache_clear()
    kubeconfig = cluster.write_kubeconfig(tmp_path / "kubeconfig.json")
    previous = os.environ.get("KUBECONFIG")
    os.environ["KUBECONFIG"] = str(kubeconfig)
    # kubernetes_asyncio reads $KUBECONFIG once, at import: point it at ours as well.
    import kubernetes_asyncio.config.kube_config as kube_config

    previous_default = kube_config.KUBE_CONFIG_DEFAULT_LOCATION
    kube_config.KUBE_CONFIG_DEFAULT_LOCATION = str(kubeconfig)
    try:
        yield cluster
    finally:
        kube_config.KUBE_CONFIG_DEFAULT_LOCATION = previous_default
        try:
            from kubespawner import KubeSpawner

            await KubeSpawner._stop_all_reflectors()
        finally:
            await cluster.stop()
            if previous is None:
                os.environ.pop("KUBECONFIG", None)
            else:
                os.environ["KUBECONFIG"] = previous


async def wait_until(predicate: Any, timeout: float = 20.0, interval: float = 0.02) -> Any:
    """Poll ``predicate()`` until it returns something truthy; fail after ``timeout``."""
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await asyncio.sleep(interval)


def pod_body(
    name: str, image: str = "quay.io/jupyterhub/singleuser:latest", scenario: str | None = None
) -> dict[str, Any]:
    """A pod as KubeSpawner would POST it (the parts the simulated cluster reads)."""
    annotations = {} if scenario is None else {"richprogress.demo/scenario": scenario}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {"component": "singleuser-server", "hub.jupyter.org/username": name},
            "annotations": annotations,
        },
        "spec": {
            "containers": [
                {
                    "name": "notebook",
                    "image": image,
                    "ports": [{"containerPort": 8888, "name": "notebook-port"}],
                    "env": [
                        {"name": "JUPYTERHUB_USER", "value": name},
                        {"name": "JUPYTERHUB_SERVICE_PREFIX", "value": f"/user/{name}/"},
                    ],
                }
            ],
            "restartPolicy": "OnFailure",
        },
    }
