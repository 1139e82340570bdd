"""The richprogress demo: a JupyterHub wired to a simulated Kubernetes cluster.

Nothing in the product imports this package; it composes the product for demos and tests.
"""
