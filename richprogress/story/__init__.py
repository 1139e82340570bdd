"""Records -> what happened: the diagnosis (cause, steps, folding), what a spawn got past,
whether it is hopeless (fail fast), the cause's counted name and the plain-text report.
Pure functions of records; no JupyterHub, tornado or Kubernetes import.
"""
