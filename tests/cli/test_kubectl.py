"""kubectl against the simulated cluster, as an admin runs it: ``kubectl get events -o json``
piped into ``richprogress explain`` (the README's example), and ``kubectl describe pod``.

kubectl reads discovery (``/api``, ``/apis``) first, then lists with ``limit=500``; describe
reads the pod and its events by field selector (involvedObject.name, namespace, uid).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sys

import aiohttp
import pytest

from tests.helpers.cluster import pod_body, running_cluster, wait_until

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(
    KUBECTL is None, reason="kubectl is not installed (Debian's kubernetes-client; scripts/dev setup installs it)"
)
MISSING_IMAGE = "quay.io/jupyter/scipy-notebook:2099-01-01"


async def run(*command: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run a command without blocking the loop the simulated cluster serves from."""
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await asyncio.wait_for(process.communicate(stdin), 60)
    return process.returncode or 0, out.decode(), err.decode()


async def test_kubectl_events_piped_into_explain_and_describe_name_the_failure(tmp_path):
    async with running_cluster(tmp_path, speed=50) as cluster:
        async with aiohttp.ClientSession(cluster.url) as session:
            async with session.post("/api/v1/namespaces/default/pods", json=pod_body("jupyter-kay", image=MISSING_IMAGE)) as r:
                assert r.status == 201
        await wait_until(lambda: any(e["reason"] == "BackOff" for e in cluster.events_for("jupyter-kay")))
        # its own HOME: kubectl caches discovery under ~/.kube
        env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(tmp_path / "kubeconfig.json")}
        assert KUBECTL is not None
        code, events, err = await run(
            KUBECTL, "get", "events", "-o", "json", "--field-selector", "involvedObject.name=jupyter-kay", env=env
        )
        assert code == 0, err
        listed = json.loads(events)
        assert listed["kind"] == "List" and {e["reason"] for e in listed["items"]} >= {"Scheduled", "Pulling", "Failed"}

        code, explained, err = await run(sys.executable, "-m", "richprogress.cli", "explain", stdin=events.encode(), env=env)
        assert code == 0, err
        verdict = [line for line in explained.splitlines() if line.startswith("What went wrong:")]
        assert verdict == [f"What went wrong: The image {MISSING_IMAGE} for the notebook container was not found in its registry"]

        code, described, err = await run(KUBECTL, "describe", "pod", "jupyter-kay", env=env)
        assert code == 0, err
        assert "Name:" in described and "jupyter-kay" in described
        # the kubelet's waiting reason goes back and forth as it retries the pull
        # (ErrImagePull at each try, ImagePullBackOff between): either is the pod's state
        assert re.search(r"Reason:\s+(ImagePullBackOff|ErrImagePull)\n", described), described
        events_part = described.split("Events:", 1)[1]
        assert f'Failed to pull image "{MISSING_IMAGE}"' in events_part and "not found" in events_part
