"""A real scrape: JupyterHub's own /hub/metrics serves richprogress's metrics after spawns.

``DemoHub`` runs the simulated cluster, JupyterHub (RichKubeSpawner, ``richprogress.setup``)
and configurable-http-proxy. We spawn through the REST API (one start that succeeds, one
whose image does not exist), wait for the progress stream to end, then scrape the hub as
Prometheus does and lint our part of the answer with ``promtool check metrics``.

The same hub serves typical start times in the timeline JSON (``typical``): the admin's
expected time at first, then the numbers of the spawns that ended since the hub started.

Fixtures: ``hub`` (module scope, one DemoHub at speed 100 with a 6 s start timeout,
``authenticate_prometheus`` off as on a z2jh hub scraped from inside the cluster, and an
expected start time for the happy-path profile).
"""

from __future__ import annotations

import shutil
import subprocess
import urllib.request
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from richprogress.demo.hub import DemoHub
from tests.helpers.spawner_hub import spawn_and_wait

SPEED = 100.0
START_TIMEOUT = 6.0


@pytest.fixture(scope="module")
def hub() -> Any:
    with DemoHub(
        speed=SPEED,
        start_timeout=START_TIMEOUT,
        extra_config=(
            "c.JupyterHub.authenticate_prometheus = False\n"
            "c.TypicalTimes.expected = {'happy-path': {'total': [120, 300]}}\n"
        ),
    ) as demo:
        yield demo


def scrape(hub: DemoHub) -> str:
    with urllib.request.urlopen(f"{hub.url}hub/metrics", timeout=30) as response:
        assert response.status == 200
        return response.read().decode()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """(sample name, sorted labels) -> value, from the exposition text."""
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def sample(parsed: dict[Any, float], name: str, **labels: str) -> float:
    return parsed.get((name, tuple(sorted(labels.items()))), 0.0)


async def test_hub_metrics_show_our_spawns(hub):
    before = scrape(hub)
    # registered by setup(c) at hub start, before any spawn: counters begin at 0
    assert 'richprogress_store_errors_total{operation="write"} 0.0' in before
    assert "# TYPE richprogress_spawn_duration_seconds histogram" in before

    ready = await spawn_and_wait(hub, "mona", "happy-path")
    assert ready.get("ready") is True
    failed = await spawn_and_wait(hub, "nils", "image-not-found")
    assert failed.get("failed") is True

    text = scrape(hub)
    parsed = samples(text)
    assert sample(parsed, "richprogress_spawn_duration_seconds_count", outcome="ready", profile="happy-path") == 1
    assert sample(parsed, "richprogress_spawn_duration_seconds_count", outcome="failed", profile="image-not-found") == 1
    # the failure's cause is the rule of its decisive event, not the hub's timeout
    assert sample(parsed, "richprogress_spawn_failures_total", cause="image-not-found", step="image") == 1
    assert sample(parsed, "richprogress_spawn_step_duration_seconds_count", step="image", outcome="ready") == 1
    failed_seconds = sample(parsed, "richprogress_spawn_duration_seconds_sum", outcome="failed", profile="image-not-found")
    # fail-fast ends a missing image's spawn long before the hub's start timeout,
    # and says so in its own counter
    assert 0 < failed_seconds < START_TIMEOUT * 0.9
    assert sample(parsed, "richprogress_spawn_stopped_early_total", cause="image-not-found") == 1
    # JupyterHub's own metrics are still there, in the same answer
    assert "jupyterhub_server_spawn_duration_seconds" in text
    # no user name and no image name in any of our labels
    ours = [line for line in text.splitlines() if line.startswith("richprogress_")]
    assert ours and not any(word in line for line in ours for word in ("mona", "nils", "quay.io"))

    hub.api("DELETE", "users/mona/server")

    promtool = shutil.which("promtool")
    assert promtool, "promtool is missing: run scripts/dev setup (Debian package prometheus)"
    our_text = "\n".join(
        line for line in text.splitlines() if "richprogress_" in line
    ) + "\n"
    result = subprocess.run([promtool, "check", "metrics"], input=our_text, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def typical_of(hub: DemoHub, name: str) -> Any:
    data = hub.api("GET", f"richprogress/users/{name}/timeline")
    assert isinstance(data, dict)
    return data["typical"]


async def test_the_timeline_json_serves_typical_times(hub):
    ready = await spawn_and_wait(hub, "olga", "happy-path")
    assert ready.get("ready") is True
    # fewer than 5 starts: the admin's expected time for the profile
    assert typical_of(hub, "olga") == {
        "samples": 0,
        "total": {"p50": 120.0, "p90": 300.0, "samples": 0},
        "steps": {},
        "source": "config",
    }
    for name in ("pia", "quinn", "ruth", "sven", "tara"):
        assert (await spawn_and_wait(hub, name, "happy-path")).get("ready") is True
    typical = typical_of(hub, "tara")
    # at least 5 successful happy-path starts ended (mona's from the other test may add one)
    assert typical["source"] == "history" and typical["samples"] >= 5
    assert typical["total"]["samples"] == typical["samples"]
    assert 0 < typical["total"]["p50"] <= typical["total"]["p90"] < 10  # speed 100: seconds, not minutes
    assert {"scheduled", "image", "starting"} <= set(typical["steps"])
    # a profile with neither history nor configuration: null, and the page reads as before
    failed = await spawn_and_wait(hub, "uma", "no-node-fits")
    assert failed.get("failed") is True
    assert typical_of(hub, "uma") is None
    for name in ("olga", "pia", "quinn", "ruth", "sven", "tara"):
        hub.api("DELETE", f"users/{name}/server")
