"""RichKubeSpawner on the simulated cluster at real event rates (its default): a merged event.

The kubelet's recorder (client-go tools/record) merges the 10th different message of one
reason for one pod within 10 minutes into "(combined from similar events): <message>".
Readiness probes that fail in different words before the server answers are the common
case: the stream and the timeline must word the merged event like the others.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from richprogress.demo.cluster.recorder import COMBINED_PREFIX, expire
from richprogress.web.views.failure import failure_view
from tests.helpers.cluster import running_cluster, wait_until
from tests.helpers.kubespawner import check_stream, make_spawner, spawn

PROBES = 12
CONTAINER = "spec.containers{{container}}"


def probe_failure(i: int) -> str:
    # the wording varies as a starting server's does: refused, then timing out, ...
    if i % 2:
        return f'Readiness probe failed: Get "http://10.0.{i}.5:8888/api": dial tcp 10.0.{i}.5:8888: connect: connection refused'
    return f'Readiness probe failed: Get "http://10.0.{i}.5:8888/api": context deadline exceeded'


def slow_server_scenario() -> dict[str, Any]:
    kubelet = {"component": "kubelet", "fieldPath": CONTAINER}
    steps: list[dict[str, Any]] = [
        {"delay": 0.2, "events": [{"reason": "Scheduled", "type": "Normal", "component": "{scheduler}",
                                   "message": "Successfully assigned {namespace}/{pod} to {node}"}],
         "pod": {"phase": "Pending", "scheduled": True, "container": {"state": "waiting", "reason": "ContainerCreating"}}},
        {"delay": 0.2, "events": [{"reason": "Started", "type": "Normal", "message": "Started container {container}", **kubelet}],
         "pod": {"phase": "Running", "container": {"state": "running", "ready": False}}},
    ]
    for i in range(PROBES):
        steps.append({"delay": 1.0, "events": [{"reason": "Unhealthy", "type": "Warning",
                                                "message": probe_failure(i), **kubelet}]})
    steps.append({"delay": 0.5, "pod": {"phase": "Running", "container": {"state": "running", "ready": True}}})
    return {"name": "slow-server", "title": "The server answers late", "outcome": "ready",
            "description": "Readiness probes fail in changing words before the server answers.",
            "steps": steps}


@asynccontextmanager
async def rich_cluster(tmp_path: Path, **options: Any) -> AsyncIterator[Any]:
    """``running_cluster`` (real event rates) with our reflectors stopped at the end."""
    async with running_cluster(tmp_path, speed=50, **options) as cluster:
        import kubernetes_asyncio.config.kube_config as kube_config

        previous = kube_config.KUBE_CONFIG_DEFAULT_LOCATION
        kube_config.KUBE_CONFIG_DEFAULT_LOCATION = os.environ["KUBECONFIG"]
        try:
            yield cluster
        finally:
            from richprogress.kube.spawner import RichKubeSpawner

            await RichKubeSpawner._stop_all_reflectors()
            kube_config.KUBE_CONFIG_DEFAULT_LOCATION = previous


async def test_a_merged_probe_failure_is_worded_like_the_others(tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    (scenarios / "slow-server.json").write_text(json.dumps(slow_server_scenario()), encoding="utf-8")
    async with rich_cluster(tmp_path, scenario_dir=scenarios) as cluster:
        if True:
            spawner = make_spawner(cluster, "mira", "slow-server")
            events, error = await spawn(spawner)
            assert error is None
            written = [e["message"] for e in cluster.events_for(spawner.pod_name) if e["reason"] == "Unhealthy"]
            assert any(m.startswith(COMBINED_PREFIX) for m in written), written  # the cluster merged
            records = check_stream(events)
            probes = [r for r in spawner.spawn_timeline.records() if r["reason"] == "Unhealthy"]
            merged = [r for r in probes if r.get("combined") is True]
            assert len(merged) == 1 and len(probes) == 10  # 9 alone, then one for the rest
            said = "The notebook container did not pass a health check yet (Readiness probe): "
            assert all(r["message"].startswith(said) for r in probes), [r["message"] for r in probes]
            # the merged one says its own (newest) message's cause, as the others do
            raw = merged[0]["raw_message"]
            assert raw in [probe_failure(i) for i in range(PROBES)]
            cause = "refused the connection" if "refused" in raw else "did not answer in time"
            assert cause in merged[0]["message"]
            assert all("combined" not in r["message"] for r in records)
            await spawner.stop(now=True)


async def test_the_failure_page_tells_the_story_after_the_events_expired(tmp_path: Path) -> None:
    """The API server deletes an event an hour after its last write (--event-ttl): a user
    who opens the failure page later still reads the cause and every row, from the stored
    timeline, not from the events the cluster no longer has."""
    async with rich_cluster(tmp_path) as cluster:
        spawner = make_spawner(cluster, "olga", "image-not-found")
        events, error = await spawn(spawner)
        assert error is not None
        before = failure_view("olga", "", spawner.spawn_timeline)
        assert before is not None and "not found" in before.summary and before.rows
        kubelet = cluster.kubelet
        assert expire(cluster.store, kubelet._written, kubelet.now() + 3600) > 0
        assert cluster.events_for(spawner.pod_name) == []
        # the hub hears the deletions; a reload reads the page again
        await wait_until(lambda: _known_events(spawner) == 0)
        after = failure_view("olga", "", spawner.spawn_timeline)
        assert after is not None
        assert (after.summary, after.hint) == (before.summary, before.hint)
        assert [(r.get("id"), r.get("message")) for r in after.rows] == [
            (r.get("id"), r.get("message")) for r in before.rows]
        await spawner.stop(now=True)


def _known_events(spawner: Any) -> int:
    """The pod's events the hub's events reflector still holds."""
    resources = spawner.event_reflector.resources
    return sum(1 for e in list(resources.values()) if e["involvedObject"]["name"] == spawner.pod_name)
