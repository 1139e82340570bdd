"""Event -> sentence: field reading, the rule engine and its default rules, scheduling
summaries and the decisive facts of an event's text, the record and the format hook.
Needs only traitlets: no JupyterHub, tornado or Kubernetes import, so richprogress explain
works without them.
"""
