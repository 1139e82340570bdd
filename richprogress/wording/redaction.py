"""Secrets out of text that people will read: values that look like tokens, passwords or
keys are replaced with ``[redacted]`` before a container's log is kept or shown.

Pattern-based, so it can miss a secret it has no pattern for (a password printed on a
line of its own, a key in a format not listed here); that is why the container log is
shown only to the server's owner and admins by default (``show_container_log``). What it
catches:

- JupyterHub API tokens: any run of 32 or more hexadecimal characters
  (``secrets.token_hex(16)`` is what JupyterHub issues), whatever surrounds it; image
  digests and container ids go too;
- ``Authorization:`` headers (``Bearer``, ``token``, ``Basic`` or any scheme): the value
  after the scheme;
- ``token <value>`` / ``token: <value>`` / ``token=<value>``, as in ``?token=...`` query
  strings and ``Authorization: token ...``: the value;
- environment-style assignments (``=``, or ``:`` and a space) whose name ends in ``TOKEN``,
  ``PASSWORD``, ``PASSWD`` or ``SECRET``, or in ``_KEY`` / ``-KEY`` / ``.KEY`` or is ``KEY``
  (``JUPYTERHUB_API_TOKEN=...``, ``AWS_SECRET_ACCESS_KEY: ...``; not ``monkey=3``): the value;
- JSON members whose name holds ``token``, ``password``, ``secret`` or ``key``
  (``"api_token": "..."``): the string value;
- the password of a URL's user part (``https://user:password@host``).

Pure: no hub, no cluster; linear-time patterns (no nested repeats), so hostile text costs
no more than its length.
"""

from __future__ import annotations

import re

REDACTED = "[redacted]"

#: the words a line must hold for each pattern to be tried (lowercase): a
#: log line is mostly none of them, and looking for a word costs far less than a pattern
_SECRET_WORDS = ("token", "password", "passwd", "secret", "key")

_PATTERNS: list[tuple[tuple[str, ...], re.Pattern[str], str]] = [
    # Authorization: Bearer xyz / Authorization: token xyz / Authorization: Basic xyz
    (
        ("authorization",),
        re.compile(r"(?i)(\bauthorization\b[\"']?[ \t]*[:=][ \t]*[\"']?)(?:(bearer|token|basic|digest|negotiate)[ \t]+|(?=[^\s\"',;]*[^A-Za-z\s\"',;]))([^\s\"',;]+)"),
        r"\1\2 " + REDACTED,
    ),
    # "api_token": "..." (JSON, any member whose name names a secret)
    (
        _SECRET_WORDS,
        re.compile(r"(?i)(\"[^\"\n]{0,80}?(?:token|password|passwd|secret|key)[^\"\n]{0,80}?\"[ \t]*:[ \t]*\")(?:[^\"\\\n]|\\.)*(\")"),
        r"\1" + REDACTED + r"\2",
    ),
    # https://user:password@host
    (("://",), re.compile(r"(://[^/\s:@]{1,200}:)[^@\s/]{1,200}(@)"), r"\1" + REDACTED + r"\2"),
]

# JUPYTERHUB_API_TOKEN=..., DB_PASSWORD: ..., AWS_SECRET_ACCESS_KEY=... (quoted or not):
# tried at each place the name's last word ends (``_assignments``), so the line is not
# scanned by a pattern at every position (which costs ~0.5 us a character)
_NAME_ENDS = ("token", "password", "passwd", "secret", "key")
#: after ``token``: ``?token=...``, ``token: ...``, ``token:...`` too
#: (an unquoted value of lowercase letters only is a word, as in containerd's "failed to
#: fetch anonymous token: unexpected status: 401", not a token)
_TOKEN_ASSIGNED = re.compile(
    r"[\"']?[ \t]*[=:][ \t]*(?!\"?\[redacted\])(\"[^\"\n]*\"|'[^'\n]*'|(?=[^\s\"',;&]*[^a-z\s\"',;&])[^\s\"',;&]+)"
)
#: ``token <value>`` (``Authorization: token ...``, "using token ..."): a value with a
#: digit, of 8 characters or more, so "token expired" stays
_TOKEN_WORD = re.compile(r"[ \t]+(?=[A-Za-z0-9._~+/=-]*[0-9])([A-Za-z0-9._~+/=-]{8,})")
_ASSIGNED = re.compile(r"[\"']?[ \t]*(?:=|:[ \t])[ \t]*(?!\"?\[redacted\])(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;&]+)")

# a JupyterHub token anywhere: 32 hex characters or more, whatever touches them (so a
# 64-character digest goes too: safer than a token glued to a word getting through)
_HEX = re.compile(r"[0-9a-fA-F]{32,}")
# whether a line has such a run at all, in C: hex bytes to "x", the rest to " "
_HEX_TABLE = bytes(ord("x") if chr(b) in "0123456789abcdefABCDEF" else ord(" ") for b in range(256))
_HEX_RUN = b"x" * 32

#: an image's content digest (``image@sha256:<64 hex>``, ``imageID``): it names public
#: content, not a secret, and the page must name the image it downloads
_DIGEST_PREFIX = "sha256:"


def _unless_a_digest(found: re.Match[str]) -> str:
    start = found.start()
    if found.string[max(0, start - len(_DIGEST_PREFIX)) : start].lower() == _DIGEST_PREFIX:
        return found.group(0)
    return REDACTED


_DOUBLE_SPACE = re.compile(r"(?i)(authorization\b[\"']?[ \t]*[:=][ \t]*[\"']?) \[redacted\]")


def redact(text: str) -> str:
    """``text`` with every value that looks like a secret replaced by ``[redacted]``; a
    text of many lines at once, as well (no pattern reaches across a line's end)."""
    low = text.lower()
    for words, pattern, replacement in _PATTERNS:
        if any(word in low for word in words):
            text = pattern.sub(replacement, text)
    if any(word in low for word in _NAME_ENDS):
        text = _assignments(text)
    if _HEX_RUN in text.encode("utf-8", "surrogatepass").translate(_HEX_TABLE):
        text = _HEX.sub(_unless_a_digest, text)
    if "authorization" not in low:
        return text
    # "Authorization: [redacted]" when the header had no scheme (the group was empty)
    return _DOUBLE_SPACE.sub(r"\1" + REDACTED, text)


def _assignments(text: str) -> str:
    """``text`` with the value of each ``NAME=value`` / ``NAME: value`` whose name ends in
    one of ``_NAME_ENDS`` redacted (``KEY`` only as a word of its own or after ``_ . -``,
    so ``monkey=3`` stays), and of ``token <value>``."""
    low = text.lower()
    ends = sorted(
        (at + len(word), word, at)
        for word in _NAME_ENDS
        for at in _positions(low, word)
    )
    out: list[str] = []
    done = 0
    for end, word, at in ends:
        if at < done:
            continue  # inside a value already redacted
        after_word = at == 0 or not low[at - 1].isalnum()
        if word == "key" and not after_word:
            continue
        if word == "token":
            found = _TOKEN_ASSIGNED.match(text, end) or (_TOKEN_WORD.match(text, end) if after_word else None)
        else:
            found = _ASSIGNED.match(text, end)
        if found is None or found.group(1) == REDACTED:
            continue
        out += [text[done : found.start(1)], REDACTED]
        done = found.end(1)
    if not out:
        return text
    return "".join(out) + text[done:]


def _positions(low: str, word: str) -> list[int]:
    found: list[int] = []
    at = low.find(word)
    while at >= 0:
        found.append(at)
        at = low.find(word, at + 1)
    return found


def redact_lines(lines: list[str]) -> list[str]:
    """Each line redacted on its own (a secret never spans lines in a log)."""
    return [redact(line) for line in lines]
