"""A jupyterhub_config.py loaded as the hub loads it, and the check that a bad setting in it
is refused.

- ``loaded(lines, tmp=None)``: a ``JupyterHub`` that loaded ``richprogress.setup(c)``,
  ``SPAWNER`` (RichKubeSpawner) then ``lines``, as z2jh's own settings often come after
  setup;
- ``refused_when_loaded(tmp, lines, setting, value, allowed)``: loading ``lines`` stops
  with one line naming ``setting``, a piece of its ``value`` and of what is ``allowed``.

A real ``jupyterhub`` process with a bad setting: ``tests.helpers.refused_hub``.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from jupyterhub.app import JupyterHub
from traitlets.config import Config

import richprogress
from richprogress.settings_check import SettingsError

SPAWNER = 'c.JupyterHub.spawner_class = "richprogress.RichKubeSpawner"\n'



def loaded(lines: str, *, tmp: Path | None = None) -> JupyterHub:
    """A JupyterHub that loaded ``setup(c)`` then ``lines`` (after setup, as z2jh's own
    settings often come): what the hub does with a jupyterhub_config.py."""
    c = Config()
    richprogress.setup(c)
    exec(compile(SPAWNER + lines, "jupyterhub_config.py", "exec"), {"c": c, "tmp": str(tmp or "")})
    app = JupyterHub(config=c)
    app.log.setLevel(logging.ERROR)
    return app



def refused_when_loaded(tmp: Path, lines: str, setting: str, value: str, allowed: str) -> None:
    """``lines`` after setup(c) are refused as the config loads: one line, naming the
    setting, its value and what is allowed."""
    with pytest.raises(SettingsError) as refused:
        loaded(lines, tmp=tmp)
    line = str(refused.value)
    assert "\n" not in line
    assert line.startswith(f"richprogress: {setting}"), line
    assert value in line and allowed in line, line
