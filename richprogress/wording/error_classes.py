"""The classes of error a cause can be: how each is recognised in a clause, its words, who
can fix it, and the decisive token it keeps.

A clause of an error chain (``error_chain``) is classified by the first class whose pattern
it holds. Classes are *specific* (the clause says why: DNS, a certificate, a full disk, a
missing lock service) or *generic* (it says only how it showed: not found, timed out,
refused). The cause of a chain is its innermost specific clause, else its innermost generic
one: "no match for platform in manifest: not found" is about the platform, "dial tcp:
lookup quay.io on 10.96.0.10:53: i/o timeout" about the name lookup.

The texts come from Go's ``net`` and ``crypto/x509`` packages, gRPC's status codes,
containerd (``core/remotes/docker``, the CRI plugin), runc (``libcontainer``), the Docker
daemon, nfs-utils' ``mount.nfs``, the NVIDIA container toolkit, kubelet's device manager
and prober, and the cloud APIs' error codes (EC2's ``*LimitExceeded``, ``UnauthorizedOperation``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from richprogress.wording.error_chain import ErrorChain

#: who can fix a cause: the user (another image, another option), their administrator, or
#: nobody but time (the cluster tries again); the same words as a verdict's ``Cause.fixer``
Fixer = Literal["you", "admin", "cluster"]


@dataclass(frozen=True)
class ErrorClass:
    """One class of error: ``name`` (also the cause-reader rule's id suffix), the
    ``pattern`` searched in a lower-cased clause, ``specific`` (it says why, not only how it
    showed), ``fixer``, ``words(found, chain, text)`` (the cause in words, keeping its
    decisive token), ``hint`` (what to do), and the ``keys`` and ``pieces`` that gate it."""

    name: str
    pattern: re.Pattern[str]
    specific: bool
    fixer: Fixer
    words: Callable[[re.Match[str], ErrorChain, str], str]
    hint: str
    #: words (lower case, letters and digits) one of which any text of the class holds, and
    #: pieces of words it may hold instead: a cheap gate before the pattern is searched
    keys: frozenset[str] = frozenset()
    pieces: tuple[str, ...] = ()


ADMIN = "This needs your administrator: ask them for help and send them this page."
RETRY = "The cluster will try again; if it keeps failing, ask your administrator and send them this page."

_PATH_RE = re.compile(r'(?:exec|stat|open|mkdir|write|chdir to cwd \(|at|mounting):? \\?"?(?P<path>/[^\s":)\\]{1,300})')


def _role(chain: ErrorChain) -> str:
    """Who the machine was talking to, by the operation."""
    return {"pull": "the registry", "inspect": "the container runtime", "mount": "the file server",
            "attach": "the storage service", "provision": "the storage service", "resize": "the storage service",
            "probe": "your server",
            "sandbox": "the container runtime"}.get(chain.operation, "the server it called")


_NAME_AT = re.compile(r"[\w.-]{1,253}(?::\d{1,5})?")


def _host(text: str) -> str:
    """The name the machine looked up or called, from Go's "lookup <name>", a URL or "dial
    tcp <addr>" (plain finds, then one anchored match: cheaper than a search)."""
    for marker in ("lookup ", "https://", "http://", "dial tcp ", "host "):
        at = text.find(marker)
        if at >= 0:
            found = _NAME_AT.match(text, at + len(marker))
            if found is not None:
                name = found.group(0)
                return name.split(":")[0] if marker == "lookup " else name
    return ""


def _path(text: str) -> str:
    found = _PATH_RE.search(text)
    return found.group("path") if found else ""


def _with(token: str, words: str) -> str:
    return words.format(token=f" {token}" if token else "")


def _dns(found: re.Match[str], chain: ErrorChain, text: str) -> str:
    host = _host(text)
    role = {"pull": "the registry's name", "mount": "the file server's name"}.get(chain.operation, "the name")
    return _with(host, role + "{token} could not be looked up (DNS)")


def _tls(found: re.Match[str], chain: ErrorChain, text: str) -> str:
    who = _host(text) or _role(chain)
    if "http response to https" in found.group(0):
        return f"{who} does not offer a secure (HTTPS) connection"
    if "expired" in text:
        return f"the certificate of {who} has expired (x509)"
    if "unknown authority" in text:
        return f"the certificate of {who} is not trusted by the machine (x509: unknown authority)"
    return f"the certificate of {who} could not be verified (x509)"


def _timeout(found: re.Match[str], chain: ErrorChain, text: str) -> str:
    host = _host(text)
    return f"{_role(chain)}{' ' + host if host and chain.operation != 'probe' else ''} did not answer in time ({found.group(0)})"


def _refused(found: re.Match[str], chain: ErrorChain, text: str) -> str:
    host = _host(text)
    said = found.group(0).lower()
    who = f"{_role(chain)}{' ' + host if host else ''}"
    if "refused" in said:
        return f"{who} refused the connection (nothing is listening there)"
    if "reset" in said or "eof" in said or "broken pipe" in said:
        return f"the connection to {who} was cut ({said})"
    return f"{who} could not be reached ({said})"


def _not_found(found: re.Match[str], chain: ErrorChain, text: str) -> str:
    named = _NAMED_RE.search(text)
    if named is not None:
        return f"the {named.group('what').rstrip('s')} {named.group('name')} does not exist"
    path = _path(text)
    if path:
        return f"{path} does not exist"
    if chain.operation == "pull":
        return "the image or its tag does not exist in the registry"
    return f"what it needs does not exist ({found.group(0)})"


_NAMED_RE = re.compile(r'(?P<what>secrets?|configmaps?|persistentvolumeclaims?|serviceaccounts?) "(?P<name>[^"]{1,253})" not found',
                       re.IGNORECASE)


def _platform(found: re.Match[str], chain: ErrorChain, text: str) -> str:
    plat = re.search(r"(?:platform|manifest for) (?P<p>(?:linux|windows|darwin)/[\w/]+)", text)
    return "the image has no build for this kind of machine" + (f" ({plat.group('p')})" if plat else " (platform)")


def _exec_format(found: re.Match[str], chain: ErrorChain, text: str) -> str:
    path = _path(text)
    return _with(path, "the program{token} is built for another kind of machine (exec format error)")


def _space(found: re.Match[str], chain: ErrorChain, text: str) -> str:
    limit = re.search(r"(?:limit of containers|exceeds the limit|ephemeral storage limit) \"?(?P<q>\d[\w.]*)", text)
    if limit is not None:
        return f"it used more disk space than its limit of {limit.group('q').rstrip('.')} allows"
    return "the machine's disk is full (no space left on device)"


def _read_only(found: re.Match[str], chain: ErrorChain, text: str) -> str:
    target = re.search(r'rootfs at \\?"(?P<path>/[^"\\]{1,300})', text)
    path = target.group("path") if target else _path(text)
    return _with(path, "it tried to write{token} on a read-only file system")


def _permission(found: re.Match[str], chain: ErrorChain, text: str) -> str:
    cwd = re.search(r'chdir to cwd \(\\?"(?P<cwd>[^"\\]{1,300})', text)
    if cwd is not None:
        return f"the container's user may not enter its working folder {cwd.group('cwd')} (permission denied)"
    path = _path(text)
    return f"permission was denied for {path}" if path else "permission was denied"


def _denied(found: re.Match[str], chain: ErrorChain, text: str) -> str:
    code = re.search(r"\b(?P<c>40[13]|UnauthorizedOperation|AccessDenied\w*|NotAuthenticated|Forbidden|Unauthorized)\b", text)
    token = f" ({code.group('c')})" if code else ""
    if chain.operation == "pull":
        return f"the registry refused access: the image is private or its name is wrong{token}"
    if chain.operation in ("provision", "attach", "resize"):
        return f"the storage service is not allowed to do it (its credentials or permissions){token}"
    return f"access was refused{token}"


def _rate(found: re.Match[str], chain: ErrorChain, text: str) -> str:
    return f"{_role(chain)} is limiting requests right now (rate limit{', 429' if '429' in text else ''})"


def _quota(found: re.Match[str], chain: ErrorChain, text: str) -> str:
    code = re.search(r"\b(?P<c>\w*LimitExceeded|\w*QuotaExceeded\w*)\b", text)
    return "a limit of the cloud account or cluster was reached" + (f" ({code.group('c')})" if code else "")


def _in_use(found: re.Match[str], chain: ErrorChain, text: str) -> str:
    return "it is in use elsewhere (attached to another machine or held by another pod)"


def _device(found: re.Match[str], chain: ErrorChain, text: str) -> str:
    resource = re.search(r"unavailable for (?P<r>[\w./-]+)", text)
    if resource is not None:
        return f"no {resource.group('r').rstrip('.')} device is free on the machine"
    if "driver not loaded" in text or "nvml" in text.lower():
        return "the machine's GPU driver is not working (driver not loaded)"
    return "the GPU or device it needs is not available on the machine"


def _runtime(found: re.Match[str], chain: ErrorChain, text: str) -> str:
    handler = re.search(r'no runtime for "(?P<h>[^"]{1,100})" is configured', text)
    if handler is not None:
        return f"the machine's container runtime has no {handler.group('h')} runtime set up"
    sock = re.search(r"/run/[\w/.-]{0,100}?(?P<s>containerd|crio|docker|cri-dockerd)[\w.-]*\.sock", text)
    if sock is not None:
        return f"the machine's container runtime ({sock.group('s')}) is not answering"
    return "the machine's container runtime is not working"


def _driver(text: str) -> str:
    found = re.search(r"driver name (?P<d>[\w.-]{1,200}) not found", text)
    return found.group("d") if found else ""


def _network(found: re.Match[str], chain: ErrorChain, text: str) -> str:
    plugin = re.search(r'plugin type="(?P<p>[\w-]{1,50})"', text)
    if "IP address" in text or "IPAM" in text or "no available IP" in text:
        return "the network has no free address for it"
    return "the machine's network plugin" + (f" {plugin.group('p')}" if plugin else "") + " failed"


def _lock(found: re.Match[str], chain: ErrorChain, text: str) -> str:
    return "the NFS lock service (rpc.statd) is not running on the machine"


def _status(found: re.Match[str], chain: ErrorChain, text: str) -> str:
    return f"it answered with HTTP status {found.group(0)[-3:]}"


def _invalid(found: re.Match[str], chain: ErrorChain, text: str) -> str:
    return "the image name is not a valid image name" if chain.operation in ("pull", "inspect") else \
        "it was asked something it cannot read (invalid)"


def _class(name: str, pattern: str, specific: bool, fixer: Fixer,
           words: Callable[[re.Match[str], ErrorChain, str], str], hint: str, keys: str,
           pieces: tuple[str, ...] = ()) -> ErrorClass:
    return ErrorClass(name, re.compile(pattern), specific, fixer, words, hint, frozenset(keys.split()), pieces)


#: The patterns read a clause in lower case (one ``lower()`` beats case-insensitive scans).
#: First match wins within a clause: the specific classes come before the generic ones.
CLASSES: tuple[ErrorClass, ...] = (
    _class("platform", r"no match(?:ing manifest)? for (?:current )?platform|no matching manifest for|"
           r"no supported platform|image operating system .{0,40} cannot be used", True, "you", _platform,
           "Choose another image (or another server option): this one is not built for the cluster's machines.", "platform manifest operating"),
    _class("exec-format", r"exec format error", True, "you", _exec_format,
           "Choose another image: this one is built for another kind of machine. " + ADMIN, "format"),
    _class("lock-service", r"rpc\.statd|remote locking", True, "admin", _lock,
           ADMIN + " The machine needs the NFS lock service (rpc.statd), or the volume the 'nolock' option.", "statd locking"),
    _class("dns", r"no such host|server misbehaving|\Alookup [\w.-]+|temporary failure in name resolution|"
           r"name or service not known", True, "admin", _dns, ADMIN + " A name could not be looked up (DNS).", "host misbehaving lookup resolution known"),
    _class("tls", r"x509|\Atls\b|certificate|server gave http response to https client", True, "admin", _tls, ADMIN, "x509 tls certificate https"),
    _class("rate-limited", r"toomanyrequests|too many requests|\b429\b|rate limit|rateexceeded|rate exceeded|throttl", True, "cluster", _rate,
           "Wait a few minutes. If it keeps happening, ask your administrator (the cluster may need a registry "
           "login or a mirror).", "toomanyrequests requests 429 rate", ("rateexceeded", "throttl")),
    _class("quota", r"limitexceeded|quotaexceeded|exceeded quota|exceeded your maximum|quota exceeded", True,
           "admin", _quota, ADMIN, "quota exceeded maximum", ("limitexceeded", "quotaexceeded")),
    _class("no-space", r"no space left on device|diskpressure|disk pressure|ephemeral local storage usage exceeds|"
           r"emptydir volume .{1,260} exceeds the limit|exceeded its local ephemeral storage limit", True, "admin",
           _space, "Free some space in your server's files or choose an option with more disk. " + ADMIN, "space diskpressure pressure ephemeral emptydir"),
    _class("read-only", r"read-only file system", True, "admin", _read_only, ADMIN, "only"),
    _class("permission", r"permission denied|operation not permitted", True, "admin", _permission, ADMIN, "permission permitted"),
    _class("denied", r"unauthorized|forbidden|access denied|authentication required|not authorized|"
           r"notauthenticated|accessdenied|failed to authorize|\b40[13]\b|\Adenied\b", True, "admin", _denied,
           ADMIN, "unauthorized forbidden denied authentication authorized notauthenticated authorize 401 403", ("accessdenied", "unauthorized", "forbidden")),
    _class("in-use", r"already attached|volumeinuse|already in use|is already used by|multi-attach|"
           r"already exists|name conflict", True, "admin", _in_use, ADMIN, "attached volumeinuse use used multi exists conflict"),
    _class("driver-missing", r"not found in the list of registered csi drivers", True, "admin",
           lambda found, chain, text: _with(_driver(text), "the storage driver{token} is not running on this machine"),
           ADMIN, "csi"),
    _class("runtime", r'no runtime for "|runtime handler|(?:containerd|crio|dockershim|cri-dockerd)\.sock|'
           r"failed to get sandbox runtime|oci runtime .{0,20}not found", True, "admin", _runtime, ADMIN, "runtime sock"),
    _class("network", r"failed to (?:setup|set up) network|plugin type=|\bcni\b|networkplugin|"
           r"no ip addresses available|failed to assign an ip|ipam", True, "admin", _network, ADMIN, "network plugin cni networkplugin ip ipam"),
    _class("device", r"nvidia-container-cli|nvml error|driver not loaded|devices? unavailable for|"
           r"no devices? (?:found|available)|gpu is lost|device plugin", True, "admin", _device, ADMIN, "nvidia nvml driver devices device gpu"),
    _class("probe-status", r"statuscode: \d{3}", True, "admin", _status,
           "Your server started but does not answer as it should yet. " + RETRY, "statuscode"),
    _class("invalid", r"invalid reference format", True, "you", _invalid,
           "Check the image name for typos (spaces, capital letters, a stray quote, a missing tag).", "reference"),
    # generic: how it showed, not why
    _class("timeout", r"i/o timeout|deadline exceeded|deadlineexceeded|timed out|client\.timeout", False,
           "cluster", _timeout, RETRY, "timeout deadline deadlineexceeded timed"),
    _class("unreachable", r"connection refused|no route to host|network is unreachable|host is down|"
           r"connection reset by peer|broken pipe|\Aeof\Z|unexpected eof", False, "cluster", _refused, RETRY, "refused route unreachable down reset pipe eof"),
    _class("not-found", r"not found|no such file or directory|does not exist|manifest unknown|name unknown|"
           r"\Anotfound\b", False, "you", _not_found, "Check the names in your server's settings. " + ADMIN, "found file exist unknown notfound"),
)

#: name -> class
BY_NAME: dict[str, ErrorClass] = {cls.name: cls for cls in CLASSES}


_WORD_RE = re.compile(r"[a-z0-9]+")


def _gates() -> tuple[dict[str, frozenset[int]], tuple[tuple[str, int], ...]]:
    keys: dict[str, set[int]] = {}
    pieces: list[tuple[str, int]] = []
    for index, cls in enumerate(CLASSES):
        for key in cls.keys:
            keys.setdefault(key, set()).add(index)
        pieces.extend((piece, index) for piece in cls.pieces)
    return {key: frozenset(found) for key, found in keys.items()}, tuple(pieces)


_KEYS, _PIECES = _gates()
_ALL_KEYS = frozenset(_KEYS)


def candidates(low: str) -> list[ErrorClass]:
    """The classes a lower-cased text may hold (in their order), by their keys and pieces:
    searching only these keeps a new message's first sight cheap."""
    found: set[int] = set()
    for key in _ALL_KEYS.intersection(_WORD_RE.findall(low)):
        found |= _KEYS[key]
    for piece, index in _PIECES:
        if piece in low:
            found.add(index)
    return [CLASSES[index] for index in sorted(found)]


def classify_lower(clause: str, specific: bool, among: list[ErrorClass] | None = None
                   ) -> tuple[ErrorClass, re.Match[str]] | None:
    """The first class (of the specific ones, or of the generic ones) whose pattern the
    lower-cased ``clause`` holds, with its match, searching ``among`` (default: all)."""
    for cls in CLASSES if among is None else among:
        if cls.specific is specific:
            found = cls.pattern.search(clause)
            if found is not None:
                return cls, found
    return None


def classify_clause(clause: str) -> ErrorClass | None:
    """The class of ``clause`` (a specific one before a generic one), or None."""
    low = clause.lower()
    found = classify_lower(low, True) or classify_lower(low, False)
    return found[0] if found else None


def fixer_of(rule_id: str | None) -> Fixer | None:
    """Who can fix the cause a cause-reader rule id (``cause-<class>``) names; None otherwise."""
    if not rule_id or not rule_id.startswith("cause-"):
        return None
    cls = BY_NAME.get(rule_id[len("cause-"):])
    return cls.fixer if cls else None
