"""The example Grafana dashboard and Prometheus alerts in examples/ work with our metrics.

- ``promtool check rules`` accepts the alert file, and ``promtool test rules`` fires each
  alert on made-up series (examples/prometheus-alerts.test.yml);
- every PromQL expression of the dashboard parses (promtool checks it as a recording rule,
  with Grafana's variables filled in);
- every metric name and label in the dashboard and the alerts is one that
  ``richprogress.metrics`` exposes, read from a registry after observing real spawns.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml  # PyYAML, a dependency of kubernetes_asyncio
from prometheus_client import CollectorRegistry

from richprogress.metrics import SpawnMetrics, count_store_error, observe_spawn_end
from richprogress.model.records import PHASE_NAMES
from richprogress.model.timeline import SpawnTimeline
from tests.helpers.paths import REPO

EXAMPLES = REPO / "examples"
DASHBOARD = EXAMPLES / "grafana-dashboard.json"
ALERTS = EXAMPLES / "prometheus-alerts.yml"
ALERT_TESTS = EXAMPLES / "prometheus-alerts.test.yml"

# What Grafana puts in place of its variables before it sends a query.
GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$__range": "7d", "$__interval": "1m", "$profile": ".*"}
# PromQL words that are not metric names (functions, aggregations, operators).
PROMQL_WORDS = {
    "sum", "rate", "increase", "histogram_quantile", "sort_desc", "by", "without", "and",
    "or", "unless", "label_values", "max", "min", "avg", "count", "topk",
}


def promtool() -> str:
    found = shutil.which("promtool")
    assert found, "promtool is missing: run scripts/dev setup (Debian package prometheus)"
    return found


def run_promtool(*args: str, cwd: Path | None = None) -> str:
    result = subprocess.run([promtool(), *args], capture_output=True, text=True, timeout=120, cwd=cwd)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    return output


@pytest.fixture(scope="module")
def exposed() -> dict[str, set[str]]:
    """Sample name -> its label names, as a scrape shows them after a few real spawns."""
    registry = CollectorRegistry()
    metrics = SpawnMetrics(registry)
    start = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)
    for outcome, message in (("ready", None), ("failed", "pod did not start in 300 seconds!")):
        clock = [start]
        timeline = SpawnTimeline(started_at=start, clock=lambda c=clock: c[0])
        record = {
            "id": f"r-{outcome}", "timestamp": "2026-11-30T09:00:05Z",
            "first_timestamp": "2026-11-30T09:00:05Z", "type": "Normal", "severity": "info",
            "reason": "TriggeredScaleUp", "object": {"kind": "Pod", "name": "jupyter-a",
            "container": None, "field_path": None}, "component": "cluster-autoscaler",
            "count": 1, "message": "m", "raw_message": "m", "rule": "triggered-scale-up",
            "phase": "scaling",
        }
        timeline.add(record)  # type: ignore[arg-type]
        clock[0] = start + timedelta(seconds=120)
        timeline.finish(outcome, message)  # type: ignore[arg-type]
        observe_spawn_end(timeline, profile_slug="small", diagnosis=None, stopped_early=outcome == "failed", metrics=metrics)
    count_store_error("write", metrics)
    names: dict[str, set[str]] = {}
    for family in registry.collect():
        for sample in family.samples:
            names.setdefault(sample.name, set()).update(sample.labels)
    return names


def dashboard() -> dict[str, Any]:
    data = json.loads(DASHBOARD.read_text())
    assert isinstance(data, dict)
    return data


def dashboard_queries() -> Iterator[tuple[str, str]]:
    """(where, PromQL) for every query of the dashboard, variables included."""
    data = dashboard()
    for panel in data["panels"]:
        for target in panel.get("targets") or []:
            yield f"panel {panel['title']!r} {target['refId']}", target["expr"]
    for variable in data["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]["query"]
            inner = re.fullmatch(r"label_values\((\w+),\s*(\w+)\)", query)
            assert inner, f"variable {variable['name']}: {query}"
            yield f"variable {variable['name']}", f"count by ({inner.group(2)}) ({inner.group(1)})"


def alert_queries() -> Iterator[tuple[str, str]]:
    for group in yaml.safe_load(ALERTS.read_text())["groups"]:
        for rule in group["rules"]:
            yield f"alert {rule['alert']}", rule["expr"]


def fill(expr: str) -> str:
    for name, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(name, value)
    assert "$" not in expr, expr
    return expr


def names_and_labels(expr: str) -> tuple[set[str], set[str]]:
    """The metric names and the label names an expression uses."""
    labels: set[str] = set()
    for matchers in re.findall(r"\{([^}]*)\}", expr):
        labels.update(re.findall(r"(\w+)\s*(?:=~|!~|!=|=)", matchers))
    for grouping in re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", expr):
        labels.update(name.strip() for name in grouping.split(",") if name.strip())
    bare = re.sub(r'"[^"]*"', "", expr)
    bare = re.sub(r"\{[^}]*\}|\[[^\]]*\]|\b(?:by|without)\s*\([^)]*\)", " ", bare)
    words = set(re.findall(r"\b[a-zA-Z_:][a-zA-Z0-9_:]*\b", bare))
    return words - PROMQL_WORDS, labels


def test_promtool_accepts_the_alert_rules():
    assert "SUCCESS: 7 rules found" in run_promtool("check", "rules", str(ALERTS))


def test_each_alert_fires_on_its_made_up_series():
    output = run_promtool("test", "rules", ALERT_TESTS.name, cwd=EXAMPLES)
    assert "SUCCESS" in output
    tested = set(re.findall(r"alertname: (\S+)", ALERT_TESTS.read_text()))
    declared = {where.split()[1] for where, _ in alert_queries()}
    assert len(declared) == 7 and tested == declared


def test_every_dashboard_query_is_valid_promql(tmp_path):
    queries = list(dashboard_queries())
    assert len(queries) >= 10
    rules = {
        "groups": [
            {
                "name": "dashboard",
                "rules": [{"record": f"dashboard:query:{n}", "expr": fill(expr)} for n, (_, expr) in enumerate(queries)],
            }
        ]
    }
    path = tmp_path / "dashboard-queries.yml"
    path.write_text(json.dumps(rules))  # JSON is YAML
    assert f"SUCCESS: {len(queries)} rules found" in run_promtool("check", "rules", str(path))


@pytest.mark.parametrize("source", ["dashboard", "alerts"])
def test_only_our_metric_names_and_labels_are_used(exposed, source):
    queries = list(dashboard_queries() if source == "dashboard" else alert_queries())
    assert queries
    for where, expr in queries:
        names, labels = names_and_labels(fill(expr))
        assert names, f"{where}: no metric in {expr!r}"
        unknown = names - set(exposed)
        assert not unknown, f"{where}: {sorted(unknown)} are not metrics richprogress exposes"
        allowed = set().union(*(exposed[name] for name in names))
        assert labels <= allowed, f"{where}: labels {sorted(labels - allowed)} not on {sorted(names)}"


def test_the_dashboard_shows_what_admins_asked_for():
    queries = [expr for _, expr in dashboard_queries()]
    for quantile in ("0.5", "0.9"):
        assert any(
            f"histogram_quantile({quantile}, sum by (le, profile)" in q and "richprogress_spawn_duration_seconds_bucket" in q
            for q in queries
        ), f"spawn time p{quantile[2:]}0 by profile"
    assert any("sum by (cause)" in q and "richprogress_spawn_failures_total" in q for q in queries)
    assert any("sum by (le, step)" in q and "richprogress_spawn_step_duration_seconds_bucket" in q for q in queries)
    data = dashboard()
    ids = [panel["id"] for panel in data["panels"]]
    assert len(ids) == len(set(ids))
    for panel in data["panels"]:
        if panel["type"] != "row":
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
            assert panel["description"], panel["title"]


def test_names_and_labels_catches_a_typo(exposed):
    """The checker itself: a misspelt metric or label is reported."""
    names, labels = names_and_labels('sum by (stepp) (rate(richprogress_spawn_failure_total{cause="x"}[5m]))')
    assert names == {"richprogress_spawn_failure_total"} and not names <= set(exposed)
    assert labels == {"stepp", "cause"}
    assert set(PHASE_NAMES) >= {"scaling", "image"}  # the steps the dashboard's text names
