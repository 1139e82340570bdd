"""The spawner side that is not Kubernetes: RichProgressMixin and what it streams with
(the inbox and batching of watch updates, the broadcast to readers, the live diagnosis,
patience rows, the spawn's end and its facts). Works on any spawner.
"""
