"""Tests of richprogress/history/: the spawn-history store, its faults, and in a real hub."""
