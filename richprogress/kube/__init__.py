"""The Kubernetes side: RichKubeSpawner, the event index its reflectors keep, the
stale-event filter, events made from pod status, and followed or related objects.
"""
