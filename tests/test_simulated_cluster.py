"""The simulated Kubernetes cluster: its API protocol, its scenarios, and the real
KubeSpawner running against it unchanged."""

from __future__ import annotations

import asyncio
import ipaddress
from urllib.parse import urlparse

import aiohttp
import pytest
from cluster_fixtures import make_kubespawner, running_cluster


async def test_happy_path_start_returns_url_and_standin_answers(tmp_path):
    async with running_cluster(tmp_path, speed=20) as cluster:
        spawner = make_kubespawner(cluster, "alice")
        url = await spawner.start()
        parsed = urlparse(url)
        assert ipaddress.ip_address(parsed.hostname) in ipaddress.ip_network("127.0.0.0/8")
        assert parsed.hostname != "127.0.0.1"  # each pod gets its own loopback address
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{url}/user/alice/") as response:
                assert response.status == 200
                assert "simulated notebook server for alice" in await response.text()
            async with session.get(f"{url}/user/alice/api") as response:
                assert response.status < 500  # what JupyterHub's readiness check needs
        reasons = [e["reason"] for e in cluster.events_for("jupyter-alice")]
        assert reasons == ["Scheduled", "Pulling", "Pulled", "Created", "Started"]
        await spawner.stop()
        assert cluster.pod("jupyter-alice") is None
        assert await spawner.poll() == 1
        with pytest.raises(aiohttp.ClientConnectionError):
            async with aiohttp.ClientSession() as session:
                await asyncio.wait_for(session.get(f"{url}/user/alice/"), 5)
