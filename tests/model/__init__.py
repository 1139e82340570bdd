"""Tests of richprogress/model/: records, the spawn timeline, times."""
