"""Runs of characters that may be random: a token nobody gave a name or a vendor's format.

``redaction`` replaces what these find; they only read. Two kinds:

- runs of 32 or more hexadecimal characters (``secrets.token_hex(16)`` is what JupyterHub
  issues) that may be random (digits and letters, 8 different characters or more: not
  ``aaaa...``), whatever surrounds them, except what names public content: a digest after
  ``sha256:`` or ``sha256=`` (``@sha256:`` of an image, in every event about a pull; pip's
  wheel hashes), a content-addressed path (folders of two hex characters: PyPI's
  ``/packages/ab/cd/<hex>/``, pip's cache, git's objects), a container's id
  (``containerd://<hex>``), git's commit ids (``commit <hex>``, ``<hex> refs/heads/x``,
  ``.git@<hex>``, ``switching to '<hex>'``), and a run of a digest's length (32, 40, 64,
  128) on a line (or after a line) that names a digest: ``md5``, ``sha256``, ``ETag``,
  ``checksum``, ``commit``, ``revision``, a Hugging Face ``snapshots`` folder;
- long unknown tokens: a run of 20 or more base64 characters (``A-Z a-z 0-9 + / _ -``)
  with upper case, lower case and digits, whose Shannon entropy is near that of random
  text of its length and whose characters change kind (upper case, lower case, digit)
  as often as random text's do, so names and paths made of words stay
  (``/home/jovyan/src/MyPackage2``, ``github.com/CryoInTheCloud/hub-image/pull/20``):
  a run that is 70% words (``V1PodSecurityContext``) or a path with two folder or file
  names of lower case stays. UUIDs inside a run are not counted (pod uids, GPU ids), nor
  a fingerprint after ``SHA256:``, an SSH public key (``ssh-ed25519 AAAA...``), go.sum's
  ``h1:`` and npm's ``sha512-`` integrity hashes, a value named an id (``x-amz-id-2:``),
  a certificate's or a public key's PEM body, nor base64 that decodes to readable text (an
  image label's JSON) in which the caller finds no secret.

The thresholds were measured on a million random runs and on real logs (each constant
says how). Both finders first ask, in C, whether the text holds a run long enough at all
(one ``translate`` and one ``in``), so an ordinary line costs two scans.
"""

from __future__ import annotations

import base64
import math
import re
from collections import Counter
from collections.abc import Callable

__all__ = ["Span", "as_bytes", "hex_runs", "random_runs", "token_like_run"]

#: (start, end) of a run in the text
Span = tuple[int, int]


_HEX = re.compile(rb"(?<![0-9a-fA-F])[0-9a-fA-F]{32,}")
_B64 = re.compile(rb"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{20,}={0,2}")
#: whether a text has such runs at all, in C: one byte a character (``_ascii``), each
#: character of the class to "x", the others to " ", then one ``in``
_HEX_TABLE = bytes(ord("x") if chr(b) in "0123456789abcdefABCDEF" else ord(" ") for b in range(256))
_B64_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
_B64_TABLE = bytes(ord("x") if chr(b) in _B64_CHARS else ord(" ") for b in range(256))
#: a digest's or a fingerprint's prefix (``sha256:``, ``SHA256:``, ``sha512:``)
_DIGEST_PREFIX = re.compile(r"(?i)(?:sha\d{1,3}[:=]|\bh1:)$")
#: an integrity string that starts the run itself (npm's ``sha512-<base64>``, SRI)
_INTEGRITY = re.compile(r"sha(?:256|384|512)-")
#: a digest's length in hexadecimal: md5, sha1 (git's commit ids), sha256, sha512
_DIGEST_LENGTHS = frozenset((32, 40, 64, 128))
#: a word that says the run after it on its line (or on the line before: pip's "Expected
#: sha256 X" then "Got X") is a digest of public content: a checksum, an ETag, a commit,
#: a revision, a snapshot's folder (Hugging Face's cache names them by commit)
_DIGEST_WORDS = re.compile(
    r"(?i)\b(?:md5|sha-?(?:1|224|256|384|512)|sha3|blake2[bs]?|etag|checksums?|digest|hash(?:es)?|"
    r"commit|revision|snapshots?)\b"
)
#: a name that says its value is an identifier, not a credential: ``x-amz-id-2:``, ``S3
#: Extended Request ID:``, ``trace_id=`` (a run after it is a request's id)
_ID_NAME = re.compile(r"(?i)\bid(?:-\d)?[\"']?[ \t]*[:=][ \t]*[\"']?$")
#: the blocks whose body is public by name: a certificate, a public key
_PUBLIC_BLOCK = re.compile(r"-----BEGIN (?:CERTIFICATE|PUBLIC KEY|[A-Z ]*PUBLIC KEY BLOCK)-----.*?(?:-----END [A-Z ]+-----|\Z)", re.S)
#: what names a hexadecimal run as public, just before it: a content-addressed path
#: (PyPI's ``/packages/ab/cd/``, pip's wheel cache, git's objects: folders of two hex
#: characters), a container runtime's id (``containerd://``, ``docker://``, ``cri-o://``)
#: or git naming a commit (``commit <id>``, ``Commit: <id>``, ``to commit <id>``)
_PUBLIC_HEX_BEFORE = re.compile(
    r"(?:/[0-9a-f]{2}/|(?:containerd|docker|cri-o)://|\bcommit:? |\.git@|\bcheckout |switching to ')$", re.IGNORECASE
)
#: and just after it: git's ``<id> refs/heads/main`` (``git ls-remote``, ``show-ref``)
_PUBLIC_HEX_AFTER = re.compile(r"[ \t]+refs/")
#: an SSH public key's algorithm: what follows it is the public key (public by name)
_SSH_PUBLIC = re.compile(r"(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d{3}|sk-ssh-ed25519@openssh\.com)[ \t]+$")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
#: a run's entropy against the most its length allows (log2 of its length, up to the
#: alphabet's 64): random runs of 20 to 64 characters score 0.80 or more 999 times in 1000
_MIN_ENTROPY_RATIO = 0.78
#: how often the kind of character (upper case, lower case, digit) changes from one to
#: the next, a change to lower case after an upper case letter not counted (``Python``):
#: random runs change at 0.21 or more 995 times in 1000 (0.29 at 64 characters); paths,
#: names and URLs of real logs at 0.13 at most (``com/CryoInTheCloud/hub-image/pull/20``
#: 0.12, ``S3AFileSystem`` 0.25 is one short word, ``python3`` 0.17)
_MIN_CHANGES = 0.18
_KIND = {**dict.fromkeys("ABCDEFGHIJKLMNOPQRSTUVWXYZ", 1), **dict.fromkeys("abcdefghijklmnopqrstuvwxyz", 2)}
_KIND.update(dict.fromkeys("0123456789", 3))
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_DIGITS = frozenset("0123456789")
_SEGMENT = re.compile(r"[A-Za-z0-9]+")


def as_bytes(text: str) -> bytes:
    """``text`` as one byte a character (positions are the same), for the byte patterns."""
    return text.encode("ascii", "replace")


def hex_runs(text: str, raw: bytes) -> list[Span]:
    """Where ``text`` (``raw``: ``as_bytes(text)``) holds hexadecimal runs that may be
    random and name nothing public."""
    if b"x" * 32 not in raw.translate(_HEX_TABLE):
        return []

    def keep(start: int, end: int) -> bool:
        before = text[max(0, start - 20) : start]
        if _DIGEST_PREFIX.search(before[-7:]) or _PUBLIC_HEX_BEFORE.search(before):
            return True
        if _PUBLIC_HEX_AFTER.match(text, end):
            return True
        if end - start in _DIGEST_LENGTHS and _DIGEST_WORDS.search(_this_and_last_line(text, start)):
            return True
        return not _random_hex(text[start : min(end, start + 64)])

    return [m.span() for m in _HEX.finditer(raw) if not keep(*m.span())]


def _random_hex(run: str) -> bool:
    """Whether a hexadecimal run (its first 64 characters) may be random: digits and
    letters, and 8 different characters or more. 32 random ones miss that about once in
    10**13; "aaaa...", "0000...", "deadbeefdeadbeef..." are no token."""
    return len(set(run.lower())) >= 8 and not run.isdigit() and not run.isalpha()


def random_runs(text: str, raw: bytes, holds_secret: Callable[[str], bool] | None = None) -> list[Span]:
    """Where ``text`` (``raw``: ``as_bytes(text)``) holds base64 runs that read as random
    (``holds_secret``: whether a run's decoded text holds a secret; by default, whether it
    holds a random run itself)."""
    if b"x" * 20 not in raw.translate(_B64_TABLE):
        return []
    spans = []
    public = [m.span() for m in _PUBLIC_BLOCK.finditer(text)] if "-----BEGIN" in text else []
    for found in _B64.finditer(raw):
        start, end = found.span()
        if _DIGEST_PREFIX.search(text[max(0, start - 7) : start]) or _INTEGRITY.match(text, start):
            continue  # SHA256:+DiY3wvv... (a host key's fingerprint), go.sum's h1:, sha512-...
        if _SSH_PUBLIC.search(text[max(0, start - 40) : start]):
            continue  # ssh-ed25519 AAAAC3Nza...: a public key
        if _ID_NAME.search(text[max(0, start - 30) : start]):
            continue  # x-amz-id-2: ...: a request's id
        if any(low <= start < high for low, high in public):
            continue  # a certificate's body
        if _looks_random(text[start:end]) and not public_text(text[start:end], holds_secret or token_like_run):
            spans.append((start, end))
    return spans


def _this_and_last_line(text: str, at: int) -> str:
    """The text from the start of the line before ``at``'s up to ``at`` (at most 300)."""
    line_start = text.rfind("\n", 0, at)
    last_start = text.rfind("\n", 0, line_start) if line_start > 0 else -1
    return text[max(last_start + 1, at - 300) : at]


#: what readable text decoded from base64 holds: JSON, or words between spaces
_READABLE = re.compile(r"^\s*[\[{]|\S \S.* \S")


def public_text(run: str, holds_secret: Callable[[str], bool]) -> bool:
    """Whether a base64 run decodes to readable text (an image label's JSON, a config)
    that ``holds_secret`` finds no secret in: then it is data, not a key."""
    decoded = decoded_text(run)
    return decoded is not None and _READABLE.search(decoded) is not None and not holds_secret(decoded)


def decoded_text(run: str) -> str | None:
    """``run`` decoded from base64 (standard or URL-safe) as UTF-8 text of printable
    characters, or None."""
    body = run.rstrip("=")
    if len(body) % 4 == 1:
        return None
    padded = body + "=" * (-len(body) % 4)
    try:
        data = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
        text = data.decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    if not text or sum(c.isprintable() or c in "\n\t" for c in text) < 0.95 * len(text):
        return None
    return text


def _looks_random(run: str) -> bool:
    """Whether ``run`` (of base64 characters) reads as random rather than as words, a
    path, a name or a UUID."""
    pieces = _UUID.split(run.rstrip("=")) if "-" in run else [run.rstrip("=")]
    return any(_random_piece(piece) for piece in pieces)


#: a word in an identifier or a path: ``Pod``, ``Security``, ``kernel``
_WORD = re.compile(r"[A-Z]?[a-z]{3,}")
#: a path's folder or file name of lower case: ``work``, ``site-packages``, ``run12``
_PATH_PIECE = re.compile(r"[a-z][a-z0-9._-]{2,}")
#: the share of a run's characters in words above which it reads as words
#: (``V1PodSecurityContext`` 0.75, ``MappingKernelManager2`` 0.95): random runs of 20
#: characters reach 0.75 once in 1000, of 32 or more 0.63
_MOST_WORDS = 0.7


def _reads_as_words(piece: str) -> bool:
    """A CamelCase identifier, or a path with two folder or file names of lower case (a
    random run of 64 has such two once in 7,000: measured on a million)."""
    if sum(len(word) for word in _WORD.findall(piece)) >= _MOST_WORDS * len(piece):
        return True
    return "/" in piece and sum(bool(_PATH_PIECE.fullmatch(part)) for part in piece.split("/")) >= 2


def _random_piece(piece: str) -> bool:
    if len(piece) < 20:
        return False
    chars = set(piece)
    if chars.isdisjoint(_UPPER) or chars.isdisjoint(_LOWER) or chars.isdisjoint(_DIGITS):
        return False  # upper case, lower case and digits, or it is a word, a name, a number
    if _reads_as_words(piece):
        return False
    counts = Counter(piece)
    size = len(piece)
    entropy = -sum(n / size * math.log2(n / size) for n in counts.values())
    if entropy < _MIN_ENTROPY_RATIO * math.log2(min(size, 64)):
        return False
    pairs = changes = 0
    for segment in _SEGMENT.findall(piece):
        # "/", "-", "_", "+" separate words: no pair across them, and none in a word of
        # three characters or less ("fs/s3a/" of a path)
        if len(segment) > 3:
            kinds = [_KIND[c] for c in segment]
            pairs += len(kinds) - 1
            changes += sum(one != two and not (one == 1 and two == 2) for one, two in zip(kinds, kinds[1:], strict=False))
    return changes >= _MIN_CHANGES * pairs > 0


def token_like_run(word: str) -> bool:
    """Whether ``word`` holds a hexadecimal or a base64 run that may be random."""
    raw = as_bytes(word)
    return bool(hex_runs(word, raw) or random_runs(word, raw))
