"""The well-known causes a failed server's own log names, read from its last lines.

``read_log_cause(lines, listening=...)`` reads a container's log tail (already cleaned and
redacted, ``story.container_log``) as its writers write it and names at most one cause:

- **what the shell, the init process or the runtime says** when a command is missing
  (bash ``X: command not found``, dash ``X: not found``, tini ``exec X failed: No such file
  or directory``, ``env: 'python': No such file or directory``);
- **the end of the last Python traceback**: its exception line (``ModuleNotFoundError: No
  module named 'x'``, ``ImportError: cannot import name``, ``PermissionError``, ``OSError``
  with errno 98 or 28); any other exception is named by its class only (its message may
  hold what redaction missed);
- **what the notebook server itself logs**: jupyter_server's "The port 8888 is already in
  use", its refusal to run as root or of an unknown option, JupyterHub's "jupyterhub
  version A != jupyterhub-singleuser version B" (``jupyterhub/_version.py``, a warning:
  such a mismatch *may* break the server, so it is named only when nothing else is);
- **where the server said it listens** ("is running at:" and the URLs after it, "Listening
  on", "Uvicorn running on"), read only for a server that still runs and never answered:
  only on 127.0.0.1, or on another port than the hub waits on. For such a server only
  what explains a silence is read: an error it logged did not stop it.

The last line that names a specific cause wins (the log's end is nearest to the failure).
Each cause keeps its decisive token (the command, the module, the path, the port, the
versions), bounded: it is said to anyone who may see the page, while the log lines
themselves are shown only to those ``show_container_log`` names. Pure: strings in, words out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

#: the kinds of cause, in the order a page's reader would look for them
LOG_CAUSE_KINDS: tuple[str, ...] = (
    "command-not-found", "module-not-found", "import-failed", "home-permission", "permission-denied",
    "address-in-use", "disk-full", "bad-arguments", "python-error", "version-mismatch", "localhost-only",
    "wrong-port",
)  # fmt: skip

#: kinds that say the server stopped because of them; the rest only say it may have
MAY_KINDS = frozenset({"version-mismatch", "python-error"})

#: the longest decisive token kept (a path, a module's dotted name, a list of options)
_SUBJECT_LIMIT = 120
#: the longest decisive line kept as the evidence
_LINE_LIMIT = 300


class LogCause(NamedTuple):
    """A cause the log names: its ``kind`` (``LOG_CAUSE_KINDS``), its decisive ``subject``
    (None when the log shows none), and the ``line`` that says so (bounded)."""

    kind: str
    subject: str | None
    line: str


def _bounded(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _subject(text: str | None) -> str | None:
    if text is None:
        return None
    # the event's message carries it in parentheses: none inside, and quotes gone
    cleaned = _bounded(text.strip().strip("'\"‘’“”`").replace("(", "").replace(")", ""), _SUBJECT_LIMIT)
    return cleaned or None


# -- a missing command: what the shells, init processes and the runtime say ------------------

# bash "bash: X: command not found", "/start.sh: line 5: X: command not found", and any
# program that runs a command by name (sudo: "sudo: X: command not found"); dash and
# busybox "/bin/sh: 1: X: not found", "exec: X: not found": a bare "not found" only after a
# shell's or a script's name (an HTTP "404 GET /x: not found" has neither)
_COMMAND_NOT_FOUND = re.compile(r": (?P<s>[^\s:'\"]{1,200}): command not found\s*$")
# zsh turns it round: "zsh: command not found: jupyter"
_ZSH_MISSING = re.compile(r"\bcommand not found: (?P<s>[^\s:'\"]{1,200})\s*$")
_SHELL_MISSING = re.compile(
    r"(?:^|[\s\]])(?:[\w./-]*sh|[\w./-]+\.sh|exec)(?:: line \d+)?(?:: \d+)?(?:: exec)?: "
    r"(?P<s>[^\s:'\"]{1,200}): not found\s*$"
)
# tini "[FATAL tini (7)] exec X [its arguments] failed: No such file or directory";
# dumb-init "[dumb-init] X: No such file or directory"; docker's
# "exec /usr/local/bin/start.sh: no such file or directory"
_INIT_MISSING = re.compile(
    r"exec (?P<s>\S{1,200})(?: [^\n]{0,2000}?)? failed: No such file or directory|"
    r"\[dumb-init\] (?P<d>\S{1,200}): No such file or directory|"
    r"^exec (?P<e>/\S{1,200}): no such file or directory\s*$"
)
# coreutils env: "/usr/bin/env: 'python': No such file or directory" (and its curly quotes)
_ENV_MISSING = re.compile(r"\benv: ['‘\"]?(?P<s>[^'’\"\s:]{1,200})['’\"]?: No such file or directory")
# runc, as a log line: exec: "jupyterhub-singleuser": executable file not found in $PATH
_EXEC_MISSING = re.compile(r'exec: \\?"(?P<s>[^"\\]{1,200})\\?": executable file not found')



def _missing_command(line: str) -> str | None:
    for pattern in (_COMMAND_NOT_FOUND, _SHELL_MISSING, _ZSH_MISSING, _INIT_MISSING, _ENV_MISSING, _EXEC_MISSING):
        found = pattern.search(line)
        if found:
            return next(value for value in found.groups() if value)
    return None


# -- Python's own words -----------------------------------------------------------------------

_NO_MODULE = re.compile(r"\bNo module named ['\"]?(?P<s>[\w.]{1,200})")
_CANNOT_IMPORT = re.compile(r"\bcannot import name ['\"]?(?P<s>[\w.]{1,200})")
# "[Errno 13] Permission denied: '/home/jovyan/.local'", "mkdir: cannot create directory
# '/home/jovyan/work': Permission denied", "chown: changing ownership of '/x': Operation not permitted"
_DENIED_PATH = re.compile(
    r"Permission denied: ['\"]?(?P<a>[/~][^'\"\s]{0,300})|"
    r"['\"‘](?P<b>[/~][^'\"’]{0,300})['\"’]\s*: (?:Permission denied|Operation not permitted)|"
    r"(?:^|\s)(?P<c>[/~][^'\"\s:]{0,300}): (?:Permission denied|Operation not permitted)"
)
_DENIED = re.compile(r"Permission denied|\[Errno 13\]|\bEACCES\b")
# ... and the notebook server giving up after trying ports: "could not be started because no
# available port could be found"
_IN_USE = re.compile(r"address already in use|\bis already in use\b|\[Errno 98\]|\bEADDRINUSE\b|"
                     r"no available port could be found", re.IGNORECASE)
# jupyter_server's "The port 8888 is already in use", uvicorn's "('0.0.0.0', 8888): address already in use"
_IN_USE_PORTS = (re.compile(r"\bport (\d{2,5}) is already in use"), re.compile(r"['\"][^'\"]*['\"], (\d{2,5})\)"))
_DISK_FULL = re.compile(r"No space left on device|Disk quota exceeded|\[Errno 28\]|\[Errno 122\]|\bENOSPC\b")
# argparse "error: unrecognized arguments: --x", traitlets "Unrecognized flag: '--x'" and
# "Unrecognized alias: 'x'", jupyter_server's refusal to run as root
_BAD_OPTION = re.compile(
    r"\bunrecognized arguments?: (?P<a>.{1,200}?)\s*$|\bUnrecognized (?:flag|alias|option): ['\"]?(?P<b>[^'\"\s,]{1,200})",
    re.IGNORECASE,
)
_ROOT_REFUSED = re.compile(r"Running as root is not recommended\. Use --allow-root")
_BAD_CONFIG = re.compile(r"\bBad config encountered during initialization\b")
# traitlets, naming the setting: "The 'ip' trait of a ServerApp instance expected ...",
# "Error loading argument NotebookApp.default_url[...]"
_BAD_TRAIT = re.compile(r"\bThe '(?P<a>\w{1,100})' trait of an? \w+ instance\b|\bError loading argument (?P<b>[\w.]{1,200})")

_TRACEBACK = re.compile(r"Traceback \(most recent call last\):")
# a frame line: a tail cut after the header still shows where the traceback is
_FRAME = re.compile(r'^\s*File "[^"]+", line \d+')
# the exception line ending a traceback: "pkg.mod.SomeError: words" or a bare "KeyError"
_EXCEPTION_LINE = re.compile(r"^(?P<cls>(?:[A-Za-z_]\w*\.)*[A-Z]\w*)(?::\s|:?$)")
#: exceptions that end a traceback without naming a cause (the cause was logged before)
_NOT_A_CAUSE = frozenset({"SystemExit", "KeyboardInterrupt", "GeneratorExit"})


#: folders Jupyter and Python keep in the user's home (XDG, Jupyter's and IPython's own):
#: a path through one is in the home folder, wherever the image puts it
_HOME_FOLDERS = re.compile(r"/\.(?:jupyter|local|cache|config|ipython|conda)(?:/|$)")


def _home(path: str) -> bool:
    return path.startswith(("/home/", "~")) or path == "/home" or "/home/" in path or bool(_HOME_FOLDERS.search(path))


#: words one of the specific causes' patterns needs (lowercase): a line with none of them
#: is passed over with a few substring tests, not some twenty patterns (most lines of a log)
_CAUSE_WORDS = (
    "not found", "no such file", "no module", "cannot import", "denied", "not permitted", "errno", "in use",
    "eaddrinuse", "available port", "no space", "quota", "enospc", "unrecognized", "allow-root", "bad config",
    "trait of", "error loading argument", "eacces",
)  # fmt: skip


def _specific(line: str) -> LogCause | None:
    """The specific cause ``line`` names, or None."""
    low = line.lower()
    if not any(word in low for word in _CAUSE_WORDS):
        return None
    command = _missing_command(line)
    if command is not None:
        return LogCause("command-not-found", _subject(command), line)
    found = _NO_MODULE.search(line)
    if found:
        return LogCause("module-not-found", _subject(found["s"]), line)
    found = _CANNOT_IMPORT.search(line)
    if found:
        return LogCause("import-failed", _subject(found["s"]), line)
    if _DISK_FULL.search(line):
        return LogCause("disk-full", None, line)
    found = _DENIED_PATH.search(line)
    if found:
        path = next(value for value in found.groups() if value).rstrip(".,;")
        return LogCause("home-permission" if _home(path) else "permission-denied", _subject(path), line)
    if _IN_USE.search(line):
        port = next((found[1] for pattern in _IN_USE_PORTS if (found := pattern.search(line))), None)
        return LogCause("address-in-use", _subject(port), line)
    if _DENIED.search(line):
        return LogCause("permission-denied", None, line)
    if _ROOT_REFUSED.search(line):
        return LogCause("bad-arguments", "--allow-root", line)
    found = _BAD_OPTION.search(line)
    if found:
        return LogCause("bad-arguments", _subject(found["a"] or found["b"]), line)
    found = _BAD_TRAIT.search(line)
    if found:
        return LogCause("bad-arguments", _subject(found["a"] or found["b"]), line)
    if _BAD_CONFIG.search(line):
        return LogCause("bad-arguments", None, line)
    return None


def _last_exception(lines: Sequence[str]) -> LogCause | None:
    """The exception line ending the last Python traceback, named by its class."""
    start = next((i for i in range(len(lines) - 1, -1, -1) if _TRACEBACK.search(lines[i])), None)
    if start is None:
        start = next((i for i, line in enumerate(lines) if _FRAME.match(line)), None)
        if start is None:
            return None
        start -= 1
    for line in lines[start + 1 :]:
        if line[:1].isspace() or not line.strip() or _FRAME.match(line):
            continue  # a frame ("  File ...") or its code line
        found = _EXCEPTION_LINE.match(line)
        if found is None:
            continue
        name = found["cls"].rpartition(".")[2]
        if name in _NOT_A_CAUSE:
            return None
        return LogCause("python-error", _subject(name), line)
    return None


# -- JupyterHub's version warning ----------------------------------------------------------

_VERSIONS = re.compile(
    r"\bjupyterhub version (?P<hub>[\w.+-]{1,40}?)\.? != jupyterhub-singleuser version (?P<user>[\w.+-]{1,40}?)\.?(?:\s|$)"
)


def _version_mismatch(lines: Sequence[str]) -> LogCause | None:
    for line in reversed(lines):
        found = _VERSIONS.search(line) if "!=" in line else None
        if found:
            return LogCause("version-mismatch", f"{found['hub']} != {found['user']}", line)
    return None


# -- where the server said it listens ---------------------------------------------------------

_ANNOUNCES = re.compile(r"\b(?:is running at|running on|listening on|listening at|serving on|serving at|bound to)\b",
                        re.IGNORECASE)
# a URL's host, or a bare address; never "name:123" alone (a logger's "serverapp:2923")
_ANNOUNCE_WORDS = ("running", "listening", "serving", "bound to")
_ADDRESS = re.compile(r"https?://(?P<host>\[[0-9A-Fa-f:]+\]|[\w.-]+):(?P<port>\d{2,5})\b|"
                      r"(?<![\w.:])(?P<bare>\[[0-9A-Fa-f:]+\]|localhost|\d{1,3}(?:\.\d{1,3}){3}):(?P<bare_port>\d{2,5})\b")
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "[::1]"})
#: lines after "... is running at:" that may hold its URLs (jupyter_server prints them there)
_URL_LINES_AFTER = 3


def _announced(lines: Sequence[str]) -> list[tuple[str, int, str]]:
    """(host, port, line) of each address the server said it listens on."""
    found: list[tuple[str, int, str]] = []
    after = 0
    for line in lines:
        low = line.lower()
        announces = any(word in low for word in _ANNOUNCE_WORDS) and bool(_ANNOUNCES.search(line))
        if announces or (after > 0 and "://" in line):
            for address in _ADDRESS.finditer(line):
                host = address["host"] or address["bare"]
                found.append((host.lower(), int(address["port"] or address["bare_port"]), line))
        after = _URL_LINES_AFTER if announces and line.rstrip().endswith(":") else max(after - 1, 0)
    return found


def _listening(lines: Sequence[str], expected_port: int | None) -> LogCause | None:
    announced = _announced(lines)
    if not announced:
        return None
    host, port, line = announced[-1]
    if all(h in _LOOPBACK for h, _p, _l in announced):
        return LogCause("localhost-only", _subject(f"{host}:{port}"), _without_query(line))
    ports = {p for _h, p, _l in announced}
    if expected_port is not None and expected_port not in ports:
        return LogCause("wrong-port", f"{port}, expected {expected_port}", _without_query(line))
    return None


def _without_query(line: str) -> str:
    # a Jupyter URL carries its login token in the query: the evidence needs only the address
    return re.sub(r"\?\S*", "", line)


#: what a server that still runs may have logged that explains why it never answered: it
#: moved off its port, or listens where the hub cannot reach it. A traceback or a refusal
#: it logged did not stop it (jupyter_server logs an extension it cannot load and goes on)
_WHILE_RUNNING = frozenset({"address-in-use"})


def read_log_cause(
    lines: Sequence[str], *, listening: bool = False, expected_port: int | None = None
) -> LogCause | None:
    """The cause a container's last log ``lines`` name (see the module's docstring), or None.

    ``listening``: the container still runs (the hub's check got no answer): then only what
    explains a server that runs but never answers is read (its port was taken, where it
    said it listens, the version warning); ``expected_port``: the port the hub waits on.
    """
    kept = [str(line) for line in lines[-200:]]
    found: LogCause | None = None
    for line in reversed(kept):
        cause = _specific(line)
        if cause is not None and (not listening or cause.kind in _WHILE_RUNNING):
            found = cause
            break
    if found is None and not listening:
        found = _last_exception(kept)
    if found is None and listening:
        found = _listening(kept, expected_port)
    if found is None:
        found = _version_mismatch(kept)
    return found._replace(line=_bounded(found.line, _LINE_LIMIT)) if found is not None else None


# -- the words ------------------------------------------------------------------------------

_FROM = "from the server's log"


def log_cause_sentence(kind: str, subject: str | None = None) -> str:
    """One sentence for a cause the log names (``kind``, ``subject`` as ``read_log_cause``
    gives them): the cause first, where it was read after it."""
    s = subject or ""
    if kind == "command-not-found":
        if s:
            return f"The command {s} was not found when the server started ({_FROM})"
        return f"A command the server's start needs was not found ({_FROM})"
    if kind == "module-not-found":
        return f"Python could not find the module {s} (ModuleNotFoundError in the server's log)"
    if kind == "import-failed":
        return (f"Python could not import {s}; the packages in the server's image may not fit together "
                "(ImportError in the server's log)")
    if kind == "home-permission":
        return f"The server may not write to {s} in its home folder (permission denied, {_FROM})"
    if kind == "permission-denied":
        if s:
            return f"The server was denied access to {s} (permission denied, {_FROM})"
        return f"The server was denied access to a file or folder it needs (permission denied, {_FROM})"
    if kind == "address-in-use":
        if s:
            return f"The server's port {s} was already in use inside its container ({_FROM})"
        return f"The address the server wanted to listen on was already in use ({_FROM})"
    if kind == "disk-full":
        return f"The server's disk is full (no space left on device, {_FROM})"
    if kind == "bad-arguments":
        if s == "--allow-root":
            return f"The notebook server refused to run as root: it needs --allow-root, or a user other than root ({_FROM})"
        if s:
            return f"The notebook server refused its options: {s} ({_FROM})"
        return f"The notebook server refused its configuration ({_FROM})"
    if kind == "python-error":
        return f"The server's program ended with a Python error, {s or 'an exception'} ({_FROM})"
    if kind == "version-mismatch":
        hub, _, user = s.partition(" != ")
        return (f"The server's jupyterhub-singleuser is version {user} while the hub runs {hub}; such a mismatch "
                f"may keep the server from working ({_FROM})")
    if kind == "localhost-only":
        return f"The notebook server listens only on {s}, inside its container, where the hub cannot reach it ({_FROM})"
    if kind == "wrong-port":
        port, _, expected = s.partition(", expected ")
        return f"The notebook server listens on port {port}, but the hub waits for it on port {expected} ({_FROM})"
    return f"The server's log names why it stopped ({_FROM})"


_ASK = "ask your administrator"


def log_cause_hint(kind: str, subject: str | None = None) -> str:
    """What the user can do about a cause the log names, and who can fix it."""
    s = subject or ""
    if kind == "command-not-found":
        return (f"The server's image lacks a command its start needs. Choose another image, or {_ASK} to add it "
                "to the image or to change the start command.")
    if kind == "module-not-found":
        return (f"The server's image lacks the Python package that provides {s}, or the server is set up to load "
                f"it. Choose another image, or {_ASK} to install it or to stop loading it.")
    if kind == "import-failed":
        return f"Choose another image, or {_ASK} to install versions of its packages that work together."
    if kind in ("home-permission", "permission-denied"):
        return ("The server's user may not write where it must. This needs your administrator: the folder's owner, "
                "or the pod's user or fsGroup, may need a change.")
    if kind == "address-in-use":
        return f"Something else in the server's container already uses its port; {_ASK} to check the start command."
    if kind == "disk-full":
        return "Your server's disk is full. Ask your administrator to free some space or to give you a larger disk."
    if kind == "bad-arguments":
        return f"The server's command line or configuration needs a change; {_ASK}, and send them this page."
    if kind == "version-mismatch":
        hub = s.partition(" != ")[0]
        return f"Choose another image, or {_ASK} to install JupyterHub {hub} (the hub's version) in the image."
    if kind == "localhost-only":
        return (f"The notebook server must listen on all of its container's addresses (for example with "
                f"--ip=0.0.0.0), not on 127.0.0.1 alone; {_ASK} to check the image's start command.")
    if kind == "wrong-port":
        return (f"The notebook server must listen on the port the hub gives it, not one its start command or "
                f"configuration sets; {_ASK} to check them.")
    return f"Try another image, or {_ASK} to look at the server's log."
