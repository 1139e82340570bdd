"""Tests of richprogress/typical/: typical start times."""
