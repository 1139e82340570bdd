"""A 1000-record timeline renders in one batch, and the time it takes.

The figure is printed, never asserted (a shared CI machine's timing says little); what is
asserted is that every record got exactly one row, in order, saying what its record says,
after the first delivery and after a replay of the same records (a reconnect).
``benchmarks/render_rows.py`` is the benchmark itself (and compares with an older
commit's static/).
"""

from __future__ import annotations

import json

from benchmarks import render_rows


def test_a_thousand_records_render_as_a_thousand_rows(browser, capsys) -> None:
    timings = render_rows.measure(browser, render_rows.static_files(None), n=1000, runs=3)
    records = [json.loads(event)["record"] for event in render_rows.make_events(1000)]
    expected = [[r["id"], r["message"], f"x{r['count']}" if r["count"] > 1 else ""] for r in records]
    assert timings.rows == expected
    with capsys.disabled():
        print("\n" + render_rows.report("1000-record timeline", timings))
