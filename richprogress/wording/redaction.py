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

_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # Authorization: Bearer xyz / Authorization: token xyz / Authorization: Basic xyz
    (
        re.compile(r"(?i)(\bauthorization\b[\"']?\s*[:=]\s*[\"']?)(?:(bearer|token|basic|digest|negotiate)\s+)?([^\s\"',;]+)"),
        r"\1\2 " + REDACTED,
    ),
    # "api_token": "..." (JSON, any member whose name names a secret)
    (
        re.compile(r"(?i)(\"[^\"\n]{0,80}?(?:token|password|passwd|secret|key)[^\"\n]{0,80}?\"\s*:\s*\")(?:[^\"\\\n]|\\.)*(\")"),
        r"\1" + REDACTED + r"\2",
    ),
    # JUPYTERHUB_API_TOKEN=..., DB_PASSWORD: ..., AWS_SECRET_ACCESS_KEY=... (quoted or not)
    (
        re.compile(
            r"(?i)(\b(?:[A-Za-z0-9_.-]{0,80}?(?:TOKEN|PASSWORD|PASSWD|SECRET)|(?:[A-Za-z0-9_.-]{0,80}?[_.-])?KEY)"
            r"\b[\"']?\s*(?:=|:\s)\s*)(?!\"?\[redacted\])(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;&]+)"
        ),
        r"\1" + REDACTED,
    ),
    # ?token=..., &token=..., token: ..., token ... (a value with a digit: a secret, not a word)
    (
        re.compile(r"(?i)(\b(?:access_|api_|auth_)?token\b\s*[=:]\s*)([^\s\"',;&]+)"),
        r"\1" + REDACTED,
    ),
    (
        re.compile(r"(?i)(\btoken\s+)(?=[A-Za-z0-9._~+/=-]*[0-9])([A-Za-z0-9._~+/=-]{8,})"),
        r"\1" + REDACTED,
    ),
    # https://user:password@host
    (re.compile(r"(://[^/\s:@]{1,200}:)[^@\s/]{1,200}(@)"), r"\1" + REDACTED + r"\2"),
    # a JupyterHub token anywhere: 32 hex characters or more, whatever touches them (so a
    # 64-character digest goes too: safer than a token glued to a word getting through)
    (re.compile(r"[0-9a-fA-F]{32,}"), REDACTED),
]

_DOUBLE_SPACE = re.compile(r"(?i)(authorization\b[\"']?\s*[:=]\s*[\"']?) \[redacted\]")


def redact(text: str) -> str:
    """``text`` with every value that looks like a secret replaced by ``[redacted]``."""
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    # "Authorization: [redacted]" when the header had no scheme (the group was empty)
    return _DOUBLE_SPACE.sub(r"\1" + REDACTED, text)


def redact_lines(lines: list[str]) -> list[str]:
    """Each line redacted on its own (a secret never spans lines in a log)."""
    return [redact(line) for line in lines]
