"""The import rules (``[tool.importlinter]`` in pyproject.toml) cover every folder of the package:
a folder nobody placed in a layer breaks them, whatever it imports."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

LINT_IMPORTS = shutil.which("lint-imports")


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the copy of the package in ``tree`` (first on the import path)."""
    assert LINT_IMPORTS is not None
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run([LINT_IMPORTS, "--no-cache"], cwd=tree, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "richprogress", tmp_path / "richprogress", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


@pytest.mark.skipif(LINT_IMPORTS is None, reason="import-linter is not installed")
def test_the_copy_keeps_the_rules_as_the_package_does(package_copy: Path) -> None:
    result = lint_imports(package_copy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.skipif(LINT_IMPORTS is None, reason="import-linter is not installed")
@pytest.mark.parametrize(
    ("folder", "source"),
    [
        ("zz_new", "import richprogress.web\nimport richprogress.demo\nimport richprogress.hub_setup\n"),
        ("web/zz_new", "from richprogress.web import pages\n"),
        ("web/views/zz_new", ""),
    ],
)
def test_a_folder_placed_in_no_layer_breaks_the_rules(package_copy: Path, folder: str, source: str) -> None:
    new = package_copy / "richprogress" / folder
    new.mkdir()
    (new / "__init__.py").write_text(source)
    result = lint_imports(package_copy)
    assert result.returncode == 1, result.stdout
    assert "not listed as layers" in result.stdout
    assert f"richprogress.{folder.replace('/', '.')}" in result.stdout
