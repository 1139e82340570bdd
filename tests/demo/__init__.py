"""Tests of richprogress/demo/: the simulated cluster, the demo launcher, replay."""
