"""Tests of richprogress.setup(c), the settings check, the metrics, packaging and the docs."""
