"""scripts/kubespawner_suite.py's argument handling: it runs KubeSpawner's own suite only when
given that suite's tests/ folder, and says what to give instead (CI does not run the suite:
it installs from the package registry)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

SCRIPT = REPO / "scripts" / "kubespawner_suite.py"
CONFTEST = '''import pytest

@pytest.fixture(scope="session")
def ssl_app(tmpdir_factory, kube_ns):
    return None
'''


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=60)


def fake_suite(tmp_path: Path, conftest: str = CONFTEST) -> Path:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "conftest.py").write_text(conftest)
    (tests / "test_spawner.py").write_text("")
    return tests


def test_a_folder_that_is_not_kubespawners_tests_is_refused(tmp_path):
    result = run(tmp_path / "nowhere")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"kubespawner_suite: {tmp_path / 'nowhere'} is not a folder: give the tests/ folder of "
        "KubeSpawner's repository at tag 7.1.0"
    )
    result = run(tmp_path)
    assert result.returncode == 2
    assert "has no conftest.py or test_spawner.py" in result.stderr


def test_dry_run_names_the_pins_the_connection_and_the_pytest_run(tmp_path):
    tests = fake_suite(tmp_path)
    result = run(tests, "--dry-run", "--out", tmp_path / "out", "--", "tests/test_utils.py", "-k", "exec")
    assert result.returncode == 0, result.stderr
    plan = dict(line.split(": ", 1) for line in result.stdout.splitlines())
    assert "pytest-asyncio>=0.21,<0.23" in plan["venv"] and "kubernetes==36.0.3" in plan["venv"]
    assert "-m richprogress.demo.cluster" in plan["cluster"] and "--exec-commands" in plan["cluster"]
    assert "--extra-image python:3.12-slim" in plan["cluster"]
    assert plan["pytest"].endswith("tests/test_utils.py -k exec")
    assert not (tmp_path / "out").exists()  # a dry run makes nothing


@pytest.mark.parametrize("value", ["0", "-1"])
def test_speed_must_be_positive(tmp_path, value):
    result = run(fake_suite(tmp_path), "--dry-run", "--speed", value)
    assert result.returncode == 2 and "must be positive" in result.stderr


def test_a_conftest_other_than_7_1_0s_is_refused_not_half_adapted(tmp_path):
    tests = fake_suite(tmp_path, conftest="import pytest\n")
    result = run(tests, "--out", tmp_path / "out", "--venv", tmp_path / "venv")
    assert result.returncode == 2
    assert "ssl_app fixture is not the one of KubeSpawner 7.1.0" in result.stderr
    assert not (tmp_path / "venv").exists()
