"""Records -> what happened: the diagnosis (from the known failures, with their hints),
the steps and how long each took, folding, what a spawn got past, whether it is hopeless
(fail fast), the cause's counted name and the plain-text timeline and report.
Pure functions of records; no JupyterHub, tornado or Kubernetes import.
"""
