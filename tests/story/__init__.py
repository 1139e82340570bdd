"""Tests of richprogress/story/: records -> what happened (verdict, diagnosis, fail-fast, report)."""
