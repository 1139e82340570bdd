"""What redaction catches and what it costs, against the redactor of an earlier commit.

- **rates** on the corpus (``tests/wording/redaction_corpus/``), tuned and held-out parts:
  secrets caught (no 8 characters of one left), entries redacted exactly as marked, and
  ordinary lines kept exactly;
- **cost**: microseconds of CPU to redact one ordinary log line, one line with a secret,
  an 8 KiB log of 40 lines (what a failed spawn keeps), and 100 kB of hostile text (one
  character repeated, a long random run, many ``key=`` names, each reader's own word
  repeated), for this checkout and the
  earlier redactor, with the ratio; and, as the stock path that does not redact, the cost
  of only copying the line (``str.replace`` of nothing).

Usage: ``python benchmarks/redaction.py [--against REF]`` (default ``HEAD~1``'s file; a few
seconds). The earlier redactor is read with ``git show REF:richprogress/wording/redaction.py``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).absolute().parents[1]
sys.path.insert(0, str(ROOT))

from richprogress.wording.redaction import redact  # noqa: E402
from tests.helpers.redaction_corpus import PARTS, caught, exact, kept  # noqa: E402

Redact = Callable[[str], str]


def earlier_redactor(ref: str) -> Redact:
    """``redact`` of ``richprogress/wording/redaction.py`` at ``ref``, loaded apart."""
    source = subprocess.run(
        ["git", "show", f"{ref}:richprogress/wording/redaction.py"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    module = types.ModuleType("redaction_at_" + ref.replace("~", "_"))
    exec(compile(source, f"{ref}:redaction.py", "exec"), module.__dict__)  # noqa: S102 - our own file at a commit
    return module.__dict__["redact"]


def log_8k() -> str:
    lines = []
    for n in range(40):
        secret = f" JUPYTERHUB_API_TOKEN={os.urandom(16).hex()}" if n % 4 == 0 else ""
        head = f"[I 2026-12-01 10:00:{n:02d}.123 ServerApp] /home/jovyan/work line {n}{secret} "
        lines.append((head + "x" * 200)[:200])
    return "\n".join(lines)


TEXTS = {
    "ordinary line": "[I 2026-12-02 10:00:01.123 ServerApp] Jupyter Server 2.14.2 is running at: http://127.0.0.1:8888/user/alice/lab",
    "line with a secret": "[I 2026-12-02 10:00:01 ServerApp] using token JUPYTERHUB_API_TOKEN=" + "3f2504e04f8911d39a0c0305e82c3301",
    "8 KiB log": log_8k(),
    "100 kB of one character": "a" * 100_000,
    "100 kB random run": os.urandom(75_000).hex()[:100_000],
    "100 kB of key= names": "a_key=" * 16_666,
    # each reader's own word, repeated with nothing it takes: a scan that went back to
    # every occurrence would cost seconds here, not milliseconds
    "100 kB of mysql words": "mysql " * 16_666,
    "100 kB of cookie headers": "Cookie: a=b " * 8_333,
    "100 kB of auth=(": 'auth=("a", "' * 8_333,
    "100 kB of password is": "password is " * 8_333,
    "100 kB of URL @ and .git": "https://a:b" + "@x.git" * 16_665,
}


def cpu_us(fn: Redact, text: str) -> float:
    """Microseconds of CPU one call takes (best of 5 rounds of repeated calls)."""
    repeat = max(1, int(20_000 / max(len(text), 100)))
    best = float("inf")
    for _ in range(5):
        t = time.process_time()
        for _ in range(repeat):
            fn(text)
        best = min(best, (time.process_time() - t) / repeat)
    return best * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", default="HEAD~1", help="the commit whose redactor to compare with")
    args = parser.parse_args()
    before = earlier_redactor(args.against)

    print(f"rates on the corpus (this checkout | {args.against})")
    for part in PARTS:
        for name, score in (("caught", caught), ("exact", exact), ("kept", kept)):
            print(f"  {part:8} {name:7} {str(score(redact, part)):>16} | {score(before, part)}")

    print(f"\ncost, microseconds of CPU (this checkout | {args.against} | ratio | no redaction)")
    for name, text in TEXTS.items():
        now, then = cpu_us(redact, text), cpu_us(before, text)
        stock = cpu_us(lambda t: t.replace("\0", ""), text)
        print(f"  {name:26} {now:10.1f} | {then:10.1f} | {now / then:5.2f}x | {stock:8.1f}")


if __name__ == "__main__":
    main()
