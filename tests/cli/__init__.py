"""Tests of richprogress/cli.py: ``richprogress explain``."""
