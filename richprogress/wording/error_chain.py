"""An error message as Kubernetes and its runtimes nest it: the operation, its object, the causes.

Go programs wrap an error in the error that called it, each adding ``"<what>: "`` in front
(``fmt.Errorf("...: %w", err)``), gRPC adds ``rpc error: code = X desc = ``, the Docker
daemon ``Error response from daemon: ``, old kubelets ``Error syncing pod, skipping:
failed to "StartContainer" for "notebook" with ErrImagePull: "<why>"``; a mount's
``Output:`` lines are the mount program's own words. ``parse_chain`` reads a message into
the operation (in a few letters), the object it acted on (the image, volume, StorageClass,
container) and the chain of causes, innermost last. Pure and linear in the message's length.

The operations' formats are kubelet's (``pkg/kubelet/images/image_manager.go``,
``pkg/volume/util/operationexecutor/operation_generator.go``, ``pkg/kubelet/prober``,
``kuberuntime``), the external provisioner's (``sig-storage-lib-external-provisioner``:
"failed to provision volume with StorageClass %q: %v") and containerd's CRI plugin.
"""

from __future__ import annotations

import re
from typing import NamedTuple

#: How much of a message is read: the causes of real messages fit in far less.
_READ = 4000

# (operation, pattern), by the message's first four letters (one dict lookup, then one or
# three anchored matches, instead of trying every pattern); group "object" is what the
# operation acted on.
_QUOTED = r'"(?P<object>[^"\\]*(?:(?:\\.|"(?![:\s]|\Z))[^"\\]*)*)"'
_OPERATIONS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        ("pull", r"Failed to pull image " + _QUOTED + r":?\s*"),
        ("inspect", r"Failed to inspect image " + _QUOTED + r":?\s*"),
        ("resize", r"MountVolume\.NodeExpandVolume failed for volume " + _QUOTED + r"\s*:?\s*"),
        ("mount", r"MountVolume\.\w+ failed for volume " + _QUOTED + r"\s*:?\s*"),
        ("unmount", r"UnmountVolume\.\w+ failed for volume " + _QUOTED + r"\s*:?\s*"),
        ("attach", r"AttachVolume\.Attach failed for volume " + _QUOTED + r"\s*:?\s*"),
        ("provision", r"failed to provision volume with StorageClass " + _QUOTED + r":?\s*"),
        ("resize", r"resize volume " + _QUOTED + r".{0,200}? failed:?\s*"),
        ("sandbox", r"Failed to create pod sandbox:?\s*"),
        ("probe", r"(?P<object>Readiness|Liveness|Startup) probe failed:?\s*"),
        ("start", r"Error:\s*"),
    )
)
_BY_START: dict[str, tuple[tuple[str, re.Pattern[str]], ...]] = {}
for _operation in _OPERATIONS:
    _start = _operation[1].pattern[:4].replace("(?P<", "")
    for _word in ("Readiness", "Liveness", "Startup") if _operation[0] == "probe" else (_start,):
        _BY_START[_word[:4]] = (*_BY_START.get(_word[:4], ()), _operation)
# kubelet v1.5-v1.9: Error syncing pod, skipping: failed to "StartContainer" for "c" with X: "<why>"
_SYNC = re.compile(
    r'Error syncing pod(?:, skipping)?: failed to "(?P<action>\w+)" for "(?P<container>[^"]{1,253})" '
    r'with (?P<code>\w+): "?'
)
# Wrappers that say nothing about the cause: dropped where they start a clause.
_WRAPPER = re.compile(
    r"(?:rpc error: code = \w+ desc = |Error response from daemon: |connection error: desc = "
    r'|\{\\*"message\\*":\\*"|transport: (?:Error while dialing:? )?)+'
)
# Go's ": " between a wrapper and its cause; also a mount's "Output:" lines.
_TRAILER = ' \t\n"\\}'


class ErrorChain(NamedTuple):
    """An error message, read: ``operation`` ("pull", "mount", ...; "" when none is known),
    the ``object`` it acted on ("" when the message names none), and its ``causes``, the
    clauses after the operation, outermost first and innermost last."""

    operation: str
    object: str
    causes: tuple[str, ...]
    #: read from the old kubelet's "Error syncing pod" form, whose object is the container
    synced: bool = False


def parse_chain(message: str) -> ErrorChain:
    """The operation, object and causes of ``message`` (see ``ErrorChain``)."""
    text = (message or "")[:_READ]
    operation = obj = ""
    rest = text
    synced = _SYNC.match(text)
    if synced is not None:
        code = synced.group("code")
        operation = "pull" if "Image" in code else "start"
        obj = synced.group("container")
        rest = text[synced.end():]
    else:
        for name, pattern in _BY_START.get(text[:4], ()):
            found = pattern.match(text)
            if found is not None:
                operation = name
                obj = found.groupdict().get("object") or ""
                rest = text[found.end():]
                break
    rest = rest.rstrip(_TRAILER)
    while rest.endswith(": unknown"):  # runc's and containerd's gRPC code, said again
        rest = rest[:-9].rstrip(_TRAILER)
    if "desc = " in rest or "daemon: " in rest or "message" in rest or "transport: " in rest:
        rest = _WRAPPER.sub("", rest)
    causes = []
    for part in rest.replace("statuscode: ", "statuscode:\0").split(": "):
        for line in part.split("\n") if "\n" in part else (part,):
            clause = line.replace("\0", " ").strip(' \t"\\{}')
            if clause.startswith("Output:"):
                clause = clause[7:].lstrip()
            if clause:
                causes.append(clause)
    return ErrorChain(operation, obj.replace('\\"', '"'), tuple(causes), synced is not None)
