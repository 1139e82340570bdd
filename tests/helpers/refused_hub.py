"""A real ``jupyterhub`` process whose config holds a bad setting: it must not start.

``refused_at_start(folder, lines, line)``: ``jupyterhub -f`` on a config of
``richprogress.setup(c)``, then ``tests.helpers.config.SPAWNER``, then ``lines``, run in
``folder``, exits with status 1, one ``richprogress:`` line in its log saying ``line``,
before it opened its database or wrote its cookie secret.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.helpers.config import SPAWNER
from tests.helpers.hub import CHP_BIN


def refused_at_start(folder: Path, lines: str, line: str) -> None:
    """A real hub with ``lines`` after setup(c) stops at start, saying ``line``."""
    config = folder / "jupyterhub_config.py"
    # the bad setting comes after setup(c), and the spawner class after it (as in z2jh)
    config.write_text(textwrap.dedent(
        f"""
        import os
        import richprogress
        richprogress.setup(c)
        c.JupyterHub.ip = "127.0.0.1"
        c.JupyterHub.port = 1  # never listened on: the hub must stop before
        {SPAWNER}"""
    ) + lines)
    env = {**os.environ, "PATH": f"{CHP_BIN}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-m", "jupyterhub", "-f", str(config)],
        cwd=folder, env=env, capture_output=True, text=True, timeout=120,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    refused = [row for row in output.splitlines() if "richprogress:" in row]
    assert len(refused) == 1, output
    assert "Bad config encountered during initialization: " + line in refused[0], output
    # stopped before it opened its database or wrote its cookie secret
    assert not (folder / "jupyterhub.sqlite").exists()
    assert not (folder / "jupyterhub_cookie_secret").exists()
