"""A container's exit in words: its exit code, how soon it ended, how often, its last words.

Kubernetes reports a container that exited only in the pod's status (``lastState.terminated``:
``exitCode``, ``reason``, ``startedAt``, ``finishedAt``, ``message``); RichKubeSpawner turns it
into an event (``kube.pod_status``) whose message this module's ``exit_sentence`` words.
Pure: strings in, a sentence out.

What each code means is the shell's and the runtime's convention: 127 "command not found"
(and runc's ``exec: "x": executable file not found in $PATH``, which containerd reports as
``StartError`` with code 128), 126 "found but not executable". Any other code is only a
number: the sentence gives it, never a meaning it may not have.
"""

from __future__ import annotations

import re

#: "right after it started": the container ran less than this many seconds
SOON_SECONDS = 10

#: the longest last line quoted: a sentence, not a log (the log is on the page below)
_LAST_WORDS_LIMIT = 200

# runc and docker: exec: "jupyterhub-singleuser": executable file not found in $PATH
_EXEC_MISSING = re.compile(r'exec: \\?"(?P<program>[^"\\]{1,200})\\?": executable file not found')
# runc: exec: "/bin/sh": stat /bin/sh: no such file or directory
_STAT_MISSING = re.compile(r"(?:stat|exec) (?P<path>/[^:\s\"]{1,300}): no such file or directory")
_NOT_EXECUTABLE = re.compile(r"permission denied|not executable|exec format error", re.IGNORECASE)

#: the links of runc's error chain before the reason itself
_RUNTIME_CHAIN = ("unable to start container process: ", "error during container init: ")

#: the reasons the runtime gives when it could not run the container's command at all
CANNOT_RUN = frozenset({"ContainerCannotRun", "StartError"})


def _whose(container: str) -> str:
    # KubeSpawner names the server's container "notebook"; any other is named
    return "The server's" if container in ("", "notebook") else f"The {container} container's"


def last_words(detail: str) -> str:
    """The last line the container left in its termination message (a traceback ends in its
    error), cut short; "" when it left none."""
    lines = [line.strip() for line in detail.splitlines() if line.strip()]
    if not lines:
        return ""
    line = lines[-1]
    # a runtime's error is a chain, "failed to create containerd task: failed to create shim
    # task: OCI runtime create failed: runc create failed: ... : <why>: unknown": the why is last
    for step in _RUNTIME_CHAIN:
        line = line.rpartition(step)[2] or line
    line = line.removesuffix(": unknown")
    return line if len(line) <= _LAST_WORDS_LIMIT else line[: _LAST_WORDS_LIMIT - 3].rstrip() + "..."


def _times(times: int) -> str:
    return f", {times} times" if times >= 2 else ""


def missing_command(detail: str, code: int | None) -> str | None:
    """The command the runtime could not find in the image ("" when it does not name one),
    or None when the exit does not say a command is missing."""
    found = _EXEC_MISSING.search(detail[:4000])
    if found:
        return found.group("program")
    found = _STAT_MISSING.search(detail[:4000])
    if found:
        return found.group("path")
    return "" if code == 127 else None


def exit_sentence(
    container: str = "",
    why: str = "",
    code: int | None = None,
    ran: float | None = None,
    times: int = 1,
    detail: str = "",
) -> str:
    """One sentence for a container that exited.

    ``why``: the termination reason (``Error``, ``ContainerCannotRun``, ``StartError``, ...);
    ``code``: its exit code; ``ran``: seconds from ``startedAt`` to ``finishedAt`` (None when
    the status does not show it: "right after it started" is said only when it does);
    ``times``: how often it exited so far; ``detail``: its termination message.
    """
    whose = _whose(container)
    image = "the server's image" if container in ("", "notebook") else f"the {container} container's image"
    tries = f" ({times} tries)" if times >= 2 else ""
    missing = missing_command(detail, code)
    if missing:
        return f"The command {missing} is not in {image}, so it could not start{tries}"
    if missing is not None:
        return f"{whose} command was not found in its image (exit code 127){tries}"
    if code == 126 or (why in CANNOT_RUN and _NOT_EXECUTABLE.search(detail[:4000])):
        return f"{whose} command is in its image but cannot be run (not executable){tries}"
    if why in CANNOT_RUN:
        facts = ([f"exit code {code}"] if code is not None else []) + ([f"{times} tries"] if times >= 2 else [])
        said = last_words(detail)
        facts_said = f" ({', '.join(facts)})" if facts else ""
        return f"{whose} container could not be run{facts_said}" + (f": {said}" if said else "")
    program = "The server's program" if container in ("", "notebook") else f"The program of the {container} container"
    sentence = f"{program} exited with code {code}" if code is not None else f"{program} stopped with an error"
    if ran is not None and 0 <= ran < SOON_SECONDS:
        sentence += " right after it started"
    sentence += _times(times)
    said = last_words(detail)
    return f"{sentence}: {said}" if said else sentence


def exit_hint(container: str = "", why: str = "", code: int | None = None, detail: str = "") -> str:
    """What the user can do about the exit."""
    if missing_command(detail, code) is not None or code == 126:
        return ("The image chosen does not have the command this server runs. Choose another image, "
                "or ask your administrator for help and send them this page.")
    return ("Your server stopped while starting. Try a different image, or ask your administrator to look at "
            "the server's logs.")
