"""The redaction corpus (``tests/wording/redaction_corpus/``) read, and scored against a
redacting function: shared by its test and by ``benchmarks/redaction.py``.

Each file holds one entry a line, ``#`` lines being comments. Escapes: ``\\n`` (an entry is
one text of many lines, as a log is redacted), ``\\t``, ``\\uXXXX``, ``\\\\``. In the secrets
files each secret stands between ``«`` and ``»``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

CORPUS = Path(__file__).resolve().parents[1] / "wording" / "redaction_corpus"
REDACTED = "[redacted]"
PARTS = ("tuned", "tuned2", "heldout")

E = TypeVar("E")

_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|[nt\\])")
_MARKED = re.compile(r"«([^»]*)»")
#: a secret counts as caught when no run of this many of its characters is left
_WINDOW = 8


@dataclass(frozen=True)
class SecretEntry:
    text: str
    secrets: tuple[str, ...]
    #: the text with each secret replaced by ``[redacted]``: what redaction should give
    expected: str


@dataclass(frozen=True)
class Score:
    total: int
    good: int
    failures: tuple[str, ...]

    @property
    def rate(self) -> float:
        return self.good / self.total if self.total else 1.0

    def __str__(self) -> str:
        return f"{self.good}/{self.total} ({100 * self.rate:.1f}%)"


def _unescape(line: str) -> str:
    def one(found: re.Match[str]) -> str:
        code = found.group(1)
        return {"n": "\n", "t": "\t", "\\": "\\"}.get(code) or chr(int(code[1:], 16))

    return _ESCAPE.sub(one, line)


def _entries(name: str) -> list[str]:
    lines = (CORPUS / name).read_text(encoding="utf-8").splitlines()
    return [_unescape(line) for line in lines if line and not line.startswith("#")]


def secret_entries(part: str) -> list[SecretEntry]:
    found = []
    for marked in _entries(f"secrets-{part}.txt"):
        secrets = tuple(_MARKED.findall(marked))
        assert secrets, f"an entry with no secret marked: {marked!r}"
        found.append(SecretEntry(_MARKED.sub(r"\1", marked), secrets, _MARKED.sub(REDACTED, marked)))
    return found


def ordinary_entries(part: str) -> list[str]:
    return _entries(f"ordinary-{part}.txt")


def leaked(secret: str, said: str, expected: str = "") -> bool:
    """Whether ``said`` still holds ``secret`` or a run of ``_WINDOW`` of its characters
    (but a run the text around it holds too: a cookie's name inside its own value)."""
    size = min(_WINDOW, len(secret))
    runs = (secret[at : at + size] for at in range(len(secret) - size + 1))
    return any(run in said and run not in expected for run in runs)


def caught(redact: Callable[[str], str], part: str) -> Score:
    """Entries of which no secret is left (``leaked``)."""

    def failure(entry: SecretEntry) -> str | None:
        said = redact(entry.text)
        leaks = any(leaked(secret, said, entry.expected) for secret in entry.secrets)
        return f"{entry.text!r} -> {said!r}" if leaks else None

    return _score(secret_entries(part), failure)


def exact(redact: Callable[[str], str], part: str) -> Score:
    """Entries redacted exactly as marked: each secret gone, all the rest kept."""

    def failure(entry: SecretEntry) -> str | None:
        said = redact(entry.text)
        return f"{entry.expected!r} != {said!r}" if said != entry.expected else None

    return _score(secret_entries(part), failure)


def kept(redact: Callable[[str], str], part: str) -> Score:
    """Ordinary entries left exactly as they are."""

    def failure(text: str) -> str | None:
        said = redact(text)
        return f"{text!r} -> {said!r}" if said != text else None

    return _score(ordinary_entries(part), failure)


def _score(entries: Sequence[E], failure: Callable[[E], str | None]) -> Score:
    """How many ``entries`` pass, and what ``failure`` said of each that did not."""
    failures = tuple(said for said in map(failure, entries) if said is not None)
    return Score(len(entries), len(entries) - len(failures), failures)
