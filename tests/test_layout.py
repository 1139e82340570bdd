"""The tests are laid out like the package, and share code only through helper modules.

Every test module sits in the folder of the layer it tests (``tests/<layer>/test_*.py``),
or in ``ui-tests/``; none sits directly in ``tests/`` but this one. A test module imports
what it shares from ``tests.helpers`` (or ``benchmarks``), never from another test module
(``test_*``) nor from a ``conftest``, and never edits ``sys.path``: the repository's root
is on it (pytest's ``pythonpath``), for ``tests/`` and ``ui-tests/`` alike.

Pure: the files are read with ``ast``, nothing is imported.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _test_modules() -> list[Path]:
    return sorted([*(REPO / "tests").glob("**/test_*.py"), *(REPO / "ui-tests").glob("test_*.py")])


def _is_test_module(name: str) -> bool:
    """``test_x``, ``tests.web.test_x``, ``conftest``, ``tests.conftest``: not for importing."""
    parts = name.split(".")
    return any(part.startswith("test_") for part in parts) or parts[-1] == "conftest"


#: the list methods that change ``sys.path``
_LIST_EDITS = {"insert", "append", "extend", "remove", "pop", "clear", "reverse", "sort"}


def _is_sys_path(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "path"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    )


def wrong_imports(path: Path) -> Iterator[str]:
    """What ``path`` does that a test module must not, each as ``line N: what``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (f"line {node.lineno}: import {a.name}" for a in node.names if _is_test_module(a.name))
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names = ", ".join(a.name for a in node.names)
            if node.level:  # a relative import: helpers are imported by package
                yield f"line {node.lineno}: from {'.' * node.level}{module} import {names}"
            elif _is_test_module(module):
                yield f"line {node.lineno}: from {module} import {names}"
            elif module == "sys" and any(a.name == "path" for a in node.names):
                yield f"line {node.lineno}: from sys import path"
            else:  # ``from tests.web import test_pages``
                yield from (
                    f"line {node.lineno}: from {module} import {a.name}"
                    for a in node.names
                    if _is_test_module(a.name)
                )
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if _is_sys_path(node.func.value) and node.func.attr in _LIST_EDITS:
                yield f"line {node.lineno}: sys.path.{node.func.attr}(...)"
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            for target in targets:
                if _is_sys_path(target.value if isinstance(target, ast.Subscript) else target):
                    yield f"line {node.lineno}: sys.path changed"


def test_no_test_module_imports_another_or_a_conftest_or_edits_sys_path() -> None:
    wrong = [
        f"{path.relative_to(REPO)}: {what}" for path in _test_modules() for what in wrong_imports(path)
    ]
    assert not wrong, "test modules share code through tests.helpers only:\n" + "\n".join(wrong)


def test_every_test_module_is_in_a_layer_folder() -> None:
    loose = sorted(
        path.name for path in (REPO / "tests").glob("test_*.py") if path.name != Path(__file__).name
    )
    assert not loose, f"test modules directly in tests/ (move each to the folder of its layer): {loose}"


def test_every_folder_of_tests_is_a_package() -> None:
    folders = sorted({path.parent for path in (REPO / "tests").glob("**/test_*.py")})
    missing = [str(f.relative_to(REPO)) for f in folders if not (f / "__init__.py").is_file()]
    assert not missing, f"folders of tests without __init__.py (two test files could clash): {missing}"
