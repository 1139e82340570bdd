"""The wheel carries templates/ and static/, and code finds them from a wheel and a checkout."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import richprogress
from richprogress.web import paths
from tests.helpers.paths import REPO


def _shipped_files(folder: str) -> set[str]:
    return {
        p.relative_to(REPO / folder).as_posix()
        for p in (REPO / folder).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(REPO)],
        check=True,
    )
    (built,) = out.glob("jupyterhub_richprogress-*.whl")
    return built


@pytest.mark.parametrize("folder", ["templates", "static"])
def test_wheel_carries_folder(wheel: Path, folder: str) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    prefix = f"richprogress/_share/{folder}/"
    in_wheel = {n[len(prefix):] for n in names if n.startswith(prefix)}
    assert _shipped_files(folder), f"{folder}/ is empty in the checkout"
    assert _shipped_files(folder) <= in_wheel


def test_wheel_install_finds_its_own_copies(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
    )
    code = "import richprogress.web.paths as p; print(p.template_dir()); print(p.static_dir())"
    out = subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
    ).stdout.split()
    assert out == [
        str(target / "richprogress" / "_share" / "templates"),
        str(target / "richprogress" / "_share" / "static"),
    ]


def test_checkout_finds_top_level_folders() -> None:
    # This test session imports richprogress from the checkout (editable install).
    assert Path(richprogress.__file__).resolve().parent == REPO / "richprogress"
    assert paths.template_dir() == str(REPO / "templates")
    assert paths.static_dir() == str(REPO / "static")
