"""Tests of richprogress/stream/: RichProgressMixin, patience, notes, the spawn-end point."""
