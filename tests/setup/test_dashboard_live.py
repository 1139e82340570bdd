"""The example dashboard and alerts, live: a real Prometheus scrapes a real hub.

A ``DemoHub`` (JupyterHub, RichKubeSpawner, the simulated cluster) runs spawns; a real
Prometheus server (Debian's ``prometheus`` package, the one that ships promtool) scrapes
its ``/hub/metrics`` every second and loads examples/prometheus-alerts.yml. Then every
query of examples/grafana-dashboard.json runs through Prometheus's HTTP API, as Grafana
would send it, and the panels that matter must show data: start time by profile, failures
by cause, time per step. Every alert rule must evaluate without error, and the very first
spawn whose pod never triggers a scale-up must raise the alert for it.

Both servers listen on 127.0.0.1 on free ports and are stopped by their pid.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from richprogress.demo.hub import DemoHub, free_port
from tests.helpers.paths import REPO
from tests.helpers.spawner_hub import spawn_and_wait

EXAMPLES = REPO / "examples"
# What Grafana fills in; the range is short because the hub lived only a minute.
VARIABLES = {"$__rate_interval": "1m", "$__range": "10m", "$__interval": "1s", "$profile": ".*"}


class Prometheus:
    """A Prometheus server scraping one target each second, with our alert rules."""

    def __init__(self, target: str, metrics_path: str, workdir: Path) -> None:
        binary = shutil.which("prometheus")
        assert binary, "prometheus is missing: run scripts/dev setup (Debian package prometheus)"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        shutil.copy(EXAMPLES / "prometheus-alerts.yml", workdir / "alerts.yml")
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": ["alerts.yml"],
            "scrape_configs": [
                {
                    "job_name": "jupyterhub",
                    "metrics_path": metrics_path,
                    "static_configs": [{"targets": [target]}],
                }
            ],
        }
        (workdir / "prometheus.yml").write_text(json.dumps(config))  # JSON is YAML
        self.log = open(workdir / "prometheus.log", "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [
                binary,
                f"--config.file={workdir / 'prometheus.yml'}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
            ],
            cwd=workdir,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        wait_for(lambda: self._ready(), 30, "Prometheus to answer")

    def _ready(self) -> bool:
        assert self.process.poll() is None, "Prometheus exited; see prometheus.log"
        try:
            with urllib.request.urlopen(self.url + "-/ready", timeout=2) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def api(self, path: str, **params: str) -> Any:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}api/v1/{path}?{query}", timeout=10) as response:
            body = json.loads(response.read())
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        data = self.api("query", query=expr)
        assert data["resultType"] == "vector", data
        return list(data["result"])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.log.close()


def wait_for(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DemoHub, Prometheus]]:
    with DemoHub(
        speed=100.0,
        start_timeout=6.0,
        extra_config="c.JupyterHub.authenticate_prometheus = False\n",
    ) as hub:
        parsed = urllib.parse.urlparse(hub.url)
        prometheus = Prometheus(
            f"{parsed.hostname}:{parsed.port}", parsed.path + "hub/metrics", tmp_path_factory.mktemp("prometheus")
        )
        try:
            yield hub, prometheus
        finally:
            prometheus.stop()


def dashboard_queries() -> list[tuple[str, str]]:
    data = json.loads((EXAMPLES / "grafana-dashboard.json").read_text())
    out = []
    for panel in data["panels"]:
        for target in panel.get("targets") or []:
            expr = target["expr"]
            for name, value in VARIABLES.items():
                expr = expr.replace(name, value)
            out.append((panel["title"], expr))
    return out


def series_count(prometheus: Prometheus, expr: str) -> float:
    result = prometheus.query(expr)
    return float(result[0]["value"][1]) if result else 0.0


async def test_dashboard_queries_show_data_from_a_real_scrape(stack):
    hub, prometheus = stack
    wait_for(lambda: prometheus.query('up{job="jupyterhub"} == 1') != [], 30, "the first scrape of the hub")
    # the series are born (at 1) with the first spawns; rate() needs them seen before they grow
    assert (await spawn_and_wait(hub, "ada", "happy-path")).get("ready") is True
    assert (await spawn_and_wait(hub, "bo", "image-not-found")).get("failed") is True
    wait_for(
        lambda: series_count(prometheus, "sum(richprogress_spawn_duration_seconds_count)") >= 2,
        30,
        "Prometheus to see the first two spawns",
    )
    time.sleep(2)  # a few more scrapes at those values
    for name in ("cy", "di"):
        assert (await spawn_and_wait(hub, name, "happy-path")).get("ready") is True
    assert (await spawn_and_wait(hub, "ed", "image-not-found")).get("failed") is True
    wait_for(
        lambda: series_count(prometheus, "sum(richprogress_spawn_duration_seconds_count)") >= 5,
        30,
        "Prometheus to see all five spawns",
    )

    results = {}
    for title, expr in dashboard_queries():
        results[(title, expr)] = prometheus.query(expr)  # each one runs without error

    def shown(title_part: str) -> list[dict[str, Any]]:
        found = [r for (title, _), rs in results.items() if title_part in title for r in rs]
        return found

    p50 = {r["metric"].get("profile"): float(r["value"][1]) for r in shown("Spawn time p50 by profile")}
    assert "happy-path" in p50 and 0 < p50["happy-path"] < 60  # speed 100: seconds
    p90 = {r["metric"].get("profile"): float(r["value"][1]) for r in shown("Spawn time p90 by profile")}
    assert p90["happy-path"] >= p50["happy-path"]
    causes = {r["metric"].get("cause") for r in shown("Failures by cause")}
    assert "image-not-found" in causes
    steps = {r["metric"].get("step") for r in shown("Step time p90")}
    assert {"image", "starting"} <= steps
    outcomes = {r["metric"].get("outcome") for r in shown("Spawns by outcome")}
    assert {"ready", "failed"} <= outcomes
    slowest = shown("Slowest steps")
    assert slowest and all(r["metric"].get("step") for r in slowest)

    # the example alerts are loaded and evaluate without error on real data
    wait_for(
        lambda: all(
            rule.get("health") == "ok"
            for group in prometheus.api("rules")["groups"]
            for rule in group["rules"]
        ),
        15,
        "every alert rule to evaluate",
    )
    names = {rule["name"] for group in prometheus.api("rules")["groups"] for rule in group["rules"]}
    assert len(names) == 7
    assert not [a for a in prometheus.api("alerts")["alerts"] if a["labels"]["alertname"] == "JupyterHubScaleUpNotTriggered"]

    # a pod that never triggers a scale-up: the very first such failure raises the alert
    # (the series was scraped at 0 before it, so increase() sees it)
    assert (await spawn_and_wait(hub, "flo", "no-node-fits")).get("failed") is True

    def scale_up_alert() -> list[dict[str, Any]]:
        return [
            alert
            for alert in prometheus.api("alerts")["alerts"]
            if alert["labels"]["alertname"] == "JupyterHubScaleUpNotTriggered" and alert["state"] == "firing"
        ]

    wait_for(lambda: bool(scale_up_alert()), 20, "the no-scale-up alert to fire")
    assert "would not add a machine" in scale_up_alert()[0]["annotations"]["summary"]
    for name in ("ada", "cy", "di"):
        hub.api("DELETE", f"users/{name}/server")
