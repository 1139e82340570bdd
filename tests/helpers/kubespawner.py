"""RichKubeSpawner, standalone (``_mock=True``), against the simulated cluster.

- ``rich_cluster(tmp_path, speed)``: ``running_cluster`` plus our own reflectors stopped at
  the end, and kubernetes_asyncio pointed at the cluster's kubeconfig even if it was
  imported before ``KUBECONFIG`` was set (it reads the variable at import time).
- ``make_spawner(cluster, user, scenario, **traits)``: a standalone RichKubeSpawner.
- ``spawn(spawner)``: run ``start()`` with one progress reader, like the hub does;
  ``read_progress(spawner, into)``: one more reader.
- ``check_stream(events)``: what every progress stream must satisfy (``CONTRACT_KEYS`` in
  every record); returns the records.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from richprogress.demo.cluster import SCENARIO_ANNOTATION
from richprogress.model.records import PHASE_NAMES
from tests.helpers.cluster import fake_user, running_cluster

CONTRACT_KEYS = {
    "id", "timestamp", "first_timestamp", "type", "severity", "reason", "object",
    "component", "count", "message", "raw_message", "rule", "since_spawn",
}  # fmt: skip



@asynccontextmanager
async def rich_cluster(tmp_path: Path, speed: float = 50.0, **options: Any) -> AsyncIterator[Any]:
    """A simulated cluster (``options`` as ``SimulatedCluster`` takes them) that KubeSpawner
    reaches by its default configuration; the spawners' reflectors stopped at the end."""
    async with running_cluster(tmp_path, speed=speed, **options) as cluster:
        import kubernetes_asyncio.config.kube_config as kube_config

        previous = kube_config.KUBE_CONFIG_DEFAULT_LOCATION
        kube_config.KUBE_CONFIG_DEFAULT_LOCATION = os.environ["KUBECONFIG"]
        try:
            yield cluster
        finally:
            from richprogress.kube.spawner import RichKubeSpawner

            await RichKubeSpawner._stop_all_reflectors()
            kube_config.KUBE_CONFIG_DEFAULT_LOCATION = previous



def make_spawner(cluster: Any, user: str, scenario: str | None = "happy-path", **traits: Any) -> Any:
    from richprogress.kube.spawner import RichKubeSpawner

    traits.setdefault("start_timeout", 10)
    traits.setdefault("patience_after", 0)
    if scenario is not None:
        traits.setdefault("extra_annotations", {SCENARIO_ANNOTATION: scenario})
    user_id = traits.pop("user_id", 1)
    if "server_name" in traits:  # Spawner.name comes from the orm object
        traits["orm_spawner"] = SimpleNamespace(name=traits.pop("server_name"), started=None, server=None, state=None)
    return RichKubeSpawner(_mock=True, user=fake_user(user, user_id), k8s_api_host=cluster.url, **traits)



async def read_progress(spawner: Any, into: list[dict[str, Any]]) -> None:
    async for event in spawner.progress():
        into.append(event)



async def spawn(spawner: Any) -> tuple[list[dict[str, Any]], BaseException | None]:
    """start() plus one progress reader opened right after the spawn request."""
    events: list[dict[str, Any]] = []
    start = asyncio.ensure_future(spawner.start())
    await asyncio.sleep(0)  # start() has begun the timeline, as the hub's request has
    reader = asyncio.ensure_future(read_progress(spawner, events))
    error: BaseException | None = None
    try:
        await start
    except Exception as exc:
        error = exc
    await asyncio.wait_for(reader, 10)
    return events, error



def check_stream(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What every stream must satisfy; returns the records."""
    records = [event["record"] for event in events]
    last_progress = 0
    last_since = 0.0
    seen: dict[str, int] = {}
    for event in events:
        assert "html_message" not in event
        assert isinstance(event["progress"], int) and last_progress <= event["progress"] < 100
        last_progress = event["progress"]
        record = event["record"]
        assert CONTRACT_KEYS <= set(record)
        assert event["message"] == record["message"] and "<" not in record["message"]
        assert record["since_spawn"] >= last_since, "the since-spawn clock ran back"
        last_since = record["since_spawn"]
        if record["id"] in seen:  # a repeat is only ever an update with a bigger count
            assert record["count"] > seen[record["id"]], record
        seen[record["id"]] = record["count"]
        assert record.get("phase") in (None, *PHASE_NAMES)
    return records
