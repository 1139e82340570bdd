"""Where the templates and static files are, for wheel and editable installs alike."""

from __future__ import annotations

from pathlib import Path

#: the richprogress package (this module is in its web/ folder)
_PACKAGE_DIR = Path(__file__).resolve().parent.parent


def _find(name: str) -> Path:
    # A wheel carries them inside the package (pyproject's force-include); an editable
    # install or a source checkout has them at the top level of the repository.
    for candidate in (_PACKAGE_DIR / "_share" / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"richprogress cannot find its {name}/ folder; looked in {_PACKAGE_DIR / '_share'} "
        f"and {_PACKAGE_DIR.parent}. Reinstall jupyterhub-richprogress."
    )


def template_dir() -> str:
    """The folder to put first in ``c.JupyterHub.template_paths``."""
    return str(_find("templates"))


def static_dir() -> str:
    """The folder served at richprogress's static URL."""
    return str(_find("static"))
