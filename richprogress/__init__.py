"""richprogress: readable, trustworthy, screenshot-friendly spawn progress for JupyterHub.

The formatter (``EventFormatter``) needs only traitlets; the hub pieces (``setup``,
``RichProgressMixin``, ``RichKubeSpawner``, and ``note`` for hooks' own progress rows) are
imported on first use so that the command line and the formatter work without JupyterHub
or KubeSpawner installed.
"""

from __future__ import annotations

from typing import Any

from richprogress._version import __version__

__all__ = [
    "__version__",
    "EventFormatter",
    "RichProgressMixin",
    "RichKubeSpawner",
    "setup",
    "note",
]

_LAZY = {
    "EventFormatter": "richprogress.wording.formatter",
    "RichProgressMixin": "richprogress.stream.mixin",
    "RichKubeSpawner": "richprogress.kube.spawner",
    "setup": "richprogress.hub_setup",
    "note": "richprogress.stream.notes",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'richprogress' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module_name), name)
