"""Tests of richprogress/kube/: RichKubeSpawner against the simulated cluster and in a real hub."""
