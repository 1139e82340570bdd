"""The tiers (conftest.py at the root) and the jobs that run them (scripts/lanes.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from scripts import lanes
from tests.helpers import tiers
from tests.helpers.paths import REPO


@pytest.mark.parametrize(
    ("test_file", "tier"),
    [
        ("tests/model/test_timeline.py", "unit"),
        ("tests/cli/test_cli_no_failure.py", "unit"),  # the CLI is pure
        # the demo's scenario files are read through richprogress.demo.cluster, whose
        # __init__ imports the simulated cluster (aiohttp), though nothing starts it
        ("tests/cli/test_cli.py", "stack"),
        ("tests/setup/test_metrics.py", "stack"),  # prometheus_client
        ("tests/stream/test_notes.py", "stack"),  # JupyterHub's Spawner, in process
        ("tests/demo/test_simulated_api.py", "cluster"),
        ("tests/kube/test_followed.py", "cluster"),  # through tests.helpers.kubespawner
        ("tests/kube/test_spawner_hub.py", "hub"),  # DemoHub
        ("tests/web/test_handlers.py", "hub"),  # tests.helpers.hub
        ("tests/history/test_history_faults.py", "postgres"),
        ("ui-tests/test_base_url.py", "browser"),
    ],
)
def test_a_module_has_the_tier_of_the_heaviest_thing_it_imports(test_file: str, tier: str) -> None:
    assert tiers.tier_of_file(REPO / test_file) == tier


def test_an_import_outside_the_standard_library_is_not_pure() -> None:
    assert tiers.module_tier("json") == tiers.module_tier("hypothesis") == "unit"
    assert tiers.module_tier("some_package_nobody_listed") == "stack"
    assert tiers.module_tier("sqlalchemy.orm") == "stack"
    # a module is as heavy as its packages' __init__ files, which importing it runs
    assert tiers.module_tier("richprogress.model.records") == "unit"
    assert tiers.module_tier("richprogress.kube.spawner") == "stack"
    assert tiers.module_tier("richprogress.demo.cluster.scenarios") == "stack"
    # a name that starts a server counts where a test or a helper imports it, not where
    # a package of the product re-exports it
    assert tiers.module_tier("richprogress.demo.cluster") == "stack"
    assert tiers.module_tier("tests.helpers.cluster") == "cluster"


def test_only_files_of_the_test_folders_get_a_tier() -> None:
    assert tiers.tier_of_file(Path(sys.modules["pytest"].__file__)) is None
    assert tiers.tier_of_file(REPO / "benchmarks" / "rows.py") is None


def test_every_test_file_gets_one_of_the_tiers() -> None:
    files = [*REPO.glob("tests/**/test_*.py"), *REPO.glob("ui-tests/test_*.py")]
    assert len(files) > 80
    assert {tiers.tier_of_file(path) for path in files} == set(tiers.TIERS)


def test_a_tier_marked_by_hand_stops_the_collection() -> None:
    item = SimpleNamespace(
        path=REPO / "tests" / "model" / "test_timeline.py",
        nodeid="tests/model/test_timeline.py::test_x",
        iter_markers=lambda: [pytest.mark.hub.mark],
        add_marker=lambda marker: None,
    )
    with pytest.raises(pytest.UsageError, match="marked 'hub' by hand"):
        tiers.mark_tiers([item])  # type: ignore[list-item]


def test_the_z2jh_lane_runs_every_tier_but_unit_and_replays_at_one_speed() -> None:
    jobs = lanes.all_jobs([])
    by_lane = {lane: {job.tier for job in jobs if job.lane == lane} for lane in ("newest", "z2jh")}
    assert by_lane["newest"] == {*tiers.TIERS, "jupyterhub", "checks"}
    assert by_lane["z2jh"] == {*tiers.TIERS, "setup"} - {"unit"}
    z2jh_browser = next(job for job in jobs if job.lane == "z2jh" and job.tier == "browser")
    assert z2jh_browser.env["RICHPROGRESS_REPLAY_SPEEDS"] == lanes.ONE_SPEED
    assert all(job.after == "z2jh virtualenv" for job in jobs if job.lane == "z2jh" and job.tier != "setup")
    # nothing two jobs write is shared
    junits = [junit for job in jobs for junit in job.junit]
    assert len(junits) == len(set(junits))
    temps = [job.temp for job in jobs if job.temp is not None]
    assert len(temps) == len(set(temps)) == len([job for job in jobs if "pytest" in str(job.commands)])


def test_each_job_gets_its_own_ports_below_the_ephemeral_range() -> None:
    jobs = lanes.all_jobs([])
    lanes.give_ports(jobs)
    spans = [tuple(map(int, job.env[lanes.PORTS_VARIABLE].split("-"))) for job in jobs]
    ports = [port for first, last in spans for port in range(first, last + 1)]
    assert len(ports) == len(set(ports)) and max(ports) < lanes.EPHEMERAL_FROM
    with pytest.raises(ValueError, match="do not fit"):
        lanes.give_ports([lanes.Job(f"j{i}", "unit", "newest", []) for i in range(20)])


def test_the_runner_says_which_job_failed_and_prints_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junit = tmp_path / "passing.xml"
    report = '<testsuites><testsuite name="pytest" tests="5" failures="1" errors="1" skipped="1"/></testsuites>'
    # a job's JUnit file is its own: removed before it starts, read after it ends
    junit.write_text("left by an earlier run")
    passing = lanes.Job("newest unit", "unit", "newest", [["bash", "-c", f"echo '{report}' > {junit}"]], junit=[junit])
    failing = lanes.Job("newest hub", "hub", "newest", [["bash", "-c", "echo the hub said no; exit 3"]])
    blocked = lanes.Job("z2jh hub", "hub", "z2jh", [["true"]], after="newest hub")

    assert lanes.run([passing, failing, blocked], parallel=2, output=tmp_path) == 1

    out = capsys.readouterr().out
    assert "== newest hub: FAILED (exit 3)" in out and "the hub said no" in out
    assert "== z2jh hub: not run (newest hub failed)" in out
    table = (tmp_path / "tiers.txt").read_text()
    assert out.endswith(table)
    rows = {tuple(line.split()[:2]): line.split()[2:] for line in table.splitlines()[1:]}
    assert rows[("unit", "newest")][:4] == ["5", "2", "2", "1"]
    assert rows[("hub", "newest")][-1] == "FAILED"
    assert rows[("hub", "z2jh")] == ["-"] * 5 + ["not", "run"]
