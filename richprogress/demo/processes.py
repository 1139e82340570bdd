"""Processes and ports of the demo, read from Linux's /proc: a free loopback port, the
descendants of a process, whether a pid still lives. ``DemoHub`` uses them to start on
free ports and to check that it leaves nothing running; the browser tests use them too."""

from __future__ import annotations

import os
import socket
from pathlib import Path

#: every process of the demo listens on this loopback address
HOST = "127.0.0.1"


#: ``FIRST-LAST``: the ports this process may hand out (``free_port``). Test runners that run
#: side by side give each run its own slice, below the kernel's ephemeral range (32768 and
#: up on Linux), so two runs never pick the same port, and no outgoing connection is given
#: a picked port before its server listens on it.
PORTS_VARIABLE = "RICHPROGRESS_DEMO_PORTS"
_handed_out: set[int] = set()


def _port_range() -> range | None:
    spec = os.environ.get(PORTS_VARIABLE, "").strip()
    if not spec:
        return None
    first, sep, last = spec.partition("-")
    if not (sep and first.isdigit() and last.isdigit() and 0 < int(first) <= int(last) < 65536):
        raise ValueError(f"{PORTS_VARIABLE}={spec!r}: expected FIRST-LAST, e.g. 20000-21999")
    return range(int(first), int(last) + 1)


def free_port(host: str = HOST) -> int:
    """A TCP port that is free on ``host`` right now and that this process has not handed
    out before (a hub asks for three at once, before any of them listens)."""
    ports = _port_range()
    if ports is None:
        for _attempt in range(100):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.bind((host, 0))
                port = int(sock.getsockname()[1])
            if port not in _handed_out:
                _handed_out.add(port)
                return port
        raise RuntimeError("the kernel gave 100 ports in a row that this process already handed out")
    for port in ports:
        if port not in _handed_out and port_is_free(port, host):
            _handed_out.add(port)
            return port
    raise RuntimeError(f"{PORTS_VARIABLE}: every port of {ports.start}-{ports.stop - 1} was handed out or is busy")


def port_is_free(port: int, host: str = HOST) -> bool:
    """Whether a TCP server could listen on ``host:port`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # as node (CHP) does: a port whose old connections linger in TIME_WAIT is free
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def descendant_pids(pid: int) -> list[int]:
    """Pids of every living descendant of ``pid`` (Linux /proc), deepest last."""
    children: dict[int, list[int]] = {}
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # the command name (field 2) may hold spaces and parentheses: split after the last ')'
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) < 2:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie still answers kill(0); it is dead for our purposes
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


def send_signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
