"""Print the spawn history's fault table: each fault case, spawns made, stored, duplicates.

Run from the repository root::

    python scripts/fault_table.py                     # every case, this tree's code
    python scripts/fault_table.py sqlite-locked ...   # some cases
    python scripts/fault_table.py --code /other/tree  # another checkout's richprogress

Each case runs in a process of its own (``tests/helpers/fault_cases.py`` says what each does), so
a case whose process dies shows how it died. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).absolute().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers.fault_cases import CASES, run_case, table  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cases", nargs="*", default=CASES, help=f"among {', '.join(CASES)}")
    parser.add_argument("--code", help="the folder whose richprogress package runs the cases")
    args = parser.parse_args()
    results = []
    for case in args.cases:
        found = run_case(case, args.code)
        results.append(found)
        print(f"{case}: {found}", file=sys.stderr, flush=True)
    print(table(results))


if __name__ == "__main__":
    main()
