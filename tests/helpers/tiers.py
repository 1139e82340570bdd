"""The test tiers, given in one place: what a test module imports decides its tier.

conftest.py at the repository root marks each test with ``test_tier`` of its file.

Every test under ``tests/`` and ``ui-tests/`` gets exactly one tier marker, the heaviest
thing its module can reach, lightest first:

``unit``
    pure code: the module reaches only the standard library, ``PURE_PACKAGES`` and the
    package's modules that need nothing more (the bottom layers, ``model``, ``wording``,
    ``story`` and ``typical``, which the import rules keep free of JupyterHub, tornado and
    KubeSpawner, and the CLI that reads them); no server of any kind.
``stack``
    in-process JupyterHub, tornado, SQLAlchemy, prometheus_client, KubeSpawner (any
    package outside the standard library and ``PURE_PACKAGES``); no server of its own.
``cluster``
    the simulated Kubernetes API server (``SimulatedCluster``, ``tests.helpers.cluster``).
``hub``
    a real JupyterHub process (``DemoHub``, ``tests.helpers.hub``, ``tests.helpers.demo_hub``).
``postgres``
    a throwaway PostgreSQL server (``tests.helpers.postgres``).
``browser``
    everything in ``ui-tests/``: Chromium against a real hub.

"Reach" follows imports (at any depth, in functions too) through the repository's own
modules (``OWN``: ``tests.*``, ``richprogress.*``, ...), read with ``ast`` and never imported, so a
helper that starts a hub makes every module that uses it a ``hub`` module. Nobody marks a
test's tier by hand: a hand-written tier marker is an error at collection.
"""

from __future__ import annotations

import ast
import sys
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: the repository's own top-level packages, whose files are read rather than trusted
OWN = ("tests", "richprogress", "scripts", "benchmarks")
TIERS = ("unit", "stack", "cluster", "hub", "postgres", "browser")

#: the names (a module, or a module's attribute) that start a server of a tier
STARTERS = {
    "richprogress.demo.cluster.cluster.SimulatedCluster": "cluster",
    "tests.helpers.cluster": "cluster",
    "richprogress.demo.hub.DemoHub": "hub",
    "tests.helpers.hub": "hub",
    "tests.helpers.demo_hub": "hub",
    "tests.helpers.postgres": "postgres",
}
#: third-party packages pure code may use; any other package that is not the standard
#: library's makes a module ``stack``, so an unknown import never passes for pure
PURE_PACKAGES = frozenset({"pytest", "_pytest", "hypothesis", "traitlets", "yaml", "packaging"})
def heavier(a: str, b: str) -> str:
    return a if TIERS.index(a) >= TIERS.index(b) else b


def _source_file(module: str) -> Path | None:
    """The repository file of ``module`` (one of ``OWN``), else None."""
    if module.split(".")[0] not in OWN:
        return None
    base = REPO.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported_names(path: Path) -> set[str]:
    """Every module and ``module.name`` that ``path`` imports, relative imports resolved."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(anchor + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            names.add(source)
            names.update(f"{source}.{alias.name}" for alias in node.names)
    return names


@cache
def module_tier(module: str) -> str:
    """The heaviest tier that importing ``module`` can reach."""
    if module in STARTERS:
        return STARTERS[module]
    top = module.partition(".")[0]
    if top not in OWN:
        pure = top in PURE_PACKAGES or top in sys.stdlib_module_names or top == "__future__"
        return "unit" if pure else "stack"
    tier = "unit"
    parent = module.rpartition(".")[0]
    if parent:  # importing a module runs its packages' __init__ first
        tier = module_tier(parent)
    path = _source_file(module)
    if path is not None:
        tier = heavier(tier, file_tier(path))
    return tier


@cache
def file_tier(path: Path) -> str:
    tier = "unit"
    module_cache_key = _module_name(path)
    for name in _imported_names(path):
        if name == module_cache_key or name.startswith(module_cache_key + "."):
            continue  # a package importing its own parts
        if name in STARTERS:
            tier = heavier(tier, STARTERS[name])
        elif name.split(".")[0] not in OWN or _source_file(name):
            tier = heavier(tier, module_tier(name))
        else:
            # ``from package.module import attribute``: the module is the parent
            tier = heavier(tier, module_tier(name.rpartition(".")[0]))
    return tier


def test_tier(path: Path) -> str | None:
    """The tier of a test file of this repository, None for a file outside tests/ and ui-tests/."""
    try:
        folder = path.resolve().relative_to(REPO).parts[0]
    except ValueError:
        return None
    if folder == "ui-tests":
        return "browser"
    if folder == "tests":
        return file_tier(path.resolve())
    return None


def mark_tiers(items: list[pytest.Item]) -> None:
    """Give each item of this repository's tests its tier's marker; refuse one marked by hand."""
    for item in items:
        tier = test_tier(Path(item.path))
        if tier is None:
            continue
        by_hand = [m.name for m in item.iter_markers() if m.name in TIERS]
        if by_hand:
            raise pytest.UsageError(
                f"{item.nodeid}: marked {by_hand[0]!r} by hand; tiers come from what the module "
                "imports (tests/helpers/tiers.py), remove the marker"
            )
        item.add_marker(getattr(pytest.mark, tier))
