"""The test tiers, given in one place: what a test module imports decides its tier.

conftest.py at the repository root marks each test with ``tier_of_file`` of its file.

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
modules (``OWN``: ``tests.*``, ``richprogress.*``, ...), read with ``ast`` and never
imported, so a helper that starts a hub makes every module that uses it a ``hub`` module. Nobody marks a
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
    """The heavier of two tiers."""
    return a if TIERS.index(a) >= TIERS.index(b) else b


@cache
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


@cache
def _imported_names(path: Path) -> frozenset[str]:
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
    return frozenset(names)


def _next_modules(name: str) -> list[str]:
    """What importing ``name`` (a module, or ``module.attribute``) runs next: its packages'
    ``__init__`` files and the module itself, as names to follow."""
    parts = name.split(".")
    chain = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return [module for module in chain if _source_file(module) is not None]


def _own_tier(name: str, used: bool) -> str:
    """The tier ``name`` says by itself: a starter's (where a module imports it to use it:
    a package that only re-exports ``SimulatedCluster`` starts nothing), a third-party
    package's, else unit."""
    if used and name in STARTERS:
        return STARTERS[name]
    top = name.partition(".")[0]
    if top in OWN:
        return "unit"
    pure = top in PURE_PACKAGES or top in sys.stdlib_module_names or top == "__future__"
    return "unit" if pure else "stack"


def _closure_tier(name: str, used: bool, *, package_cached: bool) -> str:
    """The heaviest tier among ``name`` and every module it imports in turn (cycles
    included). With ``package_cached``, a module of the package counts by its cached
    ``package_tier`` instead of being followed again for each test."""
    tier, seen = "unit", set()
    todo = [(name, used)]
    while todo:
        name, used = todo.pop()
        if (name, used) in seen:
            continue
        seen.add((name, used))
        tier = heavier(tier, _own_tier(name, used))
        if package_cached and name.startswith("richprogress."):
            tier = heavier(tier, package_tier(name))
            continue
        for own in _next_modules(name):
            source = _source_file(own)
            assert source is not None
            # a package's __init__ of the product re-exports what it imports; any other
            # module imports a starter to use it (the demo's launcher starts a DemoHub)
            uses = not (own.startswith("richprogress") and source.name == "__init__.py")
            todo += [(imported, uses) for imported in _imported_names(source)]
    return tier


@cache
def package_tier(name: str) -> str:
    """The heaviest tier that importing ``name``, a module of the package, can reach."""
    return _closure_tier(name, False, package_cached=False)


@cache
def module_tier(module: str) -> str:
    """The heaviest tier that importing ``module`` can reach, through every module of the
    repository it imports in turn."""
    return _closure_tier(module, True, package_cached=True)


def file_tier(path: Path) -> str:
    """The tier of the module in ``path``: the heaviest its imports reach."""
    return module_tier(_module_name(path))


def tier_of_file(path: Path) -> str | None:
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
        tier = tier_of_file(Path(item.path))
        if tier is None:
            continue
        by_hand = [m.name for m in item.iter_markers() if m.name in TIERS]
        if by_hand:
            raise pytest.UsageError(
                f"{item.nodeid}: marked {by_hand[0]!r} by hand; tiers come from what the module "
                "imports (tests/helpers/tiers.py), remove the marker"
            )
        item.add_marker(getattr(pytest.mark, tier))
