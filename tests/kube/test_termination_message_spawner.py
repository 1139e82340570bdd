"""RichKubeSpawner gives a container's own termination message to the gate for its text.

A crash-on-start whose container leaves its log's tail as its termination message (what
``terminationMessagePolicy: FallbackToLogsOnError`` does), its API token among the lines,
spawned by real KubeSpawner code on the simulated cluster: no record any viewer reads holds
a line of it; the cause it names is a record; the lines themselves are the log block's, for
the viewers ``show_container_log`` names, redacted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from richprogress.demo.cluster.scenarios import SCENARIO_DIR
from tests.helpers.kubespawner import make_spawner, rich_cluster, spawn

TOKEN = "5e1d9c7a3b2f4e6d8a0c1b3e5f7d9a2c"
TOKEN_LINE = f"[I 2026-12-02 10:00:00 ServerApp] JUPYTERHUB_API_TOKEN={TOKEN}"


def scenario_with_a_termination_message(folder: Path) -> str:
    """crash-on-start, whose exit leaves the log's tail as its termination message."""
    scenario = json.loads((SCENARIO_DIR / "crash-on-start.json").read_text(encoding="utf-8"))
    scenario["name"] = "crash-with-termination-message"
    (exit_step,) = [
        step
        for step in scenario["steps"]
        if step.get("pod", {}).get("container", {}).get("state") == "terminated"
    ]
    container = exit_step["pod"]["container"]
    container["log"] = [TOKEN_LINE, *container["log"]]
    container["message"] = "\n".join(container["log"])
    (folder / "crash-with-termination-message.json").write_text(
        json.dumps(scenario), encoding="utf-8"
    )
    return scenario["name"]


async def failed_spawn(tmp_path: Path, **traits: Any) -> Any:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    name = scenario_with_a_termination_message(folder)
    async with rich_cluster(tmp_path, 50, scenario_dir=folder) as cluster:
        spawner = make_spawner(cluster, "alice", name, start_timeout=4, **traits)
        _events, error = await spawn(spawner)
        assert error is not None
        await spawner.stop(now=True)
    return spawner


async def test_nobody_sees_a_line_everyone_reads_the_cause(tmp_path: Path) -> None:
    spawner = await failed_spawn(tmp_path, show_container_log="nobody")
    timeline = spawner.spawn_timeline
    assert timeline.container_log is None
    shown = json.dumps(timeline.to_dict())
    assert TOKEN not in shown and "JUPYTERHUB_API_TOKEN" not in shown and "Traceback" not in shown
    messages = [record["message"] for record in timeline.records()]
    assert any("jupyterlab_git" in message for message in messages), messages


async def test_without_a_log_read_the_block_holds_the_message_redacted(tmp_path: Path) -> None:
    spawner = await failed_spawn(tmp_path, container_log_timeout=0)
    kept = spawner.spawn_timeline.container_log
    assert kept is not None and kept["source"] == "termination message"
    assert kept["lines"][0].endswith("JUPYTERHUB_API_TOKEN=[redacted]") and TOKEN not in json.dumps(
        kept
    )
    assert kept["lines"][-1] == "ModuleNotFoundError: No module named 'jupyterlab_git'"
