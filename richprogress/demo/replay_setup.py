"""What ``python -m richprogress.demo --replay FILE --config FILE`` adds to the demo hub.

``--replay``: the dump is read and checked here, before any server starts (one line and
exit status 2 for bad input, as ``richprogress explain`` does), then played by the
simulated cluster (``cluster/replay.py``) for the spawn form's first, default profile,
"Replay: FILE" (``replay_profile``, which the demo config adds). ``--config``: an admin's own config file, loaded after the demo's (their
``c.EventFormatter`` rules, a ``pre_spawn_hook`` calling ``richprogress.note``).
"""

from __future__ import annotations

from pathlib import Path

from .cluster.replay import REPLAY_SCENARIO, Replay, ReplayError, load_replay
from .cluster.scenarios import SCENARIO_ANNOTATION
from .hub import default_start_timeout

__all__ = ["Replay", "ReplayError", "check_config", "replay_profile", "replay_start_timeout", "load_replay"]


def check_config(path: str) -> Path:
    """The config file's absolute path; ``ReplayError`` (one line) when it cannot be read."""
    found = Path(path).expanduser()
    if not found.is_file():
        raise ReplayError(f"--config {path}: no such file")
    try:
        source = found.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ReplayError(f"--config {path}: cannot read ({error})") from None
    try:
        compile(source, str(found), "exec")
    except SyntaxError as error:
        raise ReplayError(f"--config {path}: not Python (line {error.lineno}: {error.msg})") from None
    return found.resolve()


def replay_profile(path: Path) -> dict[str, object]:
    """The spawn form's profile that plays the dump at ``path`` (the demo config puts it
    first, as the default)."""
    replay = load_replay(path)
    override: dict[str, object] = {"extra_annotations": {SCENARIO_ANNOTATION: REPLAY_SCENARIO}}
    if replay.image:
        # the facts and the report name the image the recorded spawn pulled
        override["image"] = replay.image
    return {
        "slug": REPLAY_SCENARIO,
        "display_name": f"Replay: {path.name}",
        "description": f"The {replay.events} recorded events of {replay.pod}, at their own times.",
        "default": True,
        "kubespawner_override": override,
    }


def replay_start_timeout(replay: Replay, speed: float) -> float:
    """A start timeout that lets the whole recording play (a few seconds more than it)."""
    return max(default_start_timeout(speed), round(replay.duration / speed + 15.0, 1))
