"""Tests of richprogress/wording/: event -> sentence (the formatter, the rules, the corpora)."""
