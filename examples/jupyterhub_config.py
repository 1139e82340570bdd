"""An example ``jupyterhub_config.py`` for a real Kubernetes cluster with richprogress.

Copy what you need. Everything below the first two lines is optional.

On zero-to-jupyterhub (z2jh), the hub image needs the package (build
``FROM quay.io/jupyterhub/k8s-hub:<your chart's version>`` and
``RUN pip install jupyterhub-richprogress``), then in your ``values.yaml``::

    hub:
      image:
        name: your-registry/your-hub-image
        tag: "1.0"
      extraConfig:
        richprogress: |
          import richprogress
          richprogress.setup(c)
          c.JupyterHub.spawner_class = "richprogress.RichKubeSpawner"
          c.EventFormatter.extra_rules = [
              {
                  "id": "quota-exceeded",
                  "match": {"reason": "FailedCreate", "message": r".*exceeded quota: (?P<quota>[\\w-]+)"},
                  "template": "Your group's resource quota {quota} is used up",
                  "severity": "error",
                  "hint": "Stop a server you no longer need, or ask an admin to raise the quota.",
              },
          ]

z2jh's own settings (``singleuser.image``, ``singleuser.profileList``, storage, ...) keep
working: z2jh configures ``c.KubeSpawner``, and ``RichKubeSpawner`` is a ``KubeSpawner``, so
it reads them.
"""

# ruff: noqa: F821 - `c` is provided by traitlets when JupyterHub loads this file

import richprogress

# 1. The two lines that enable richprogress: our pages first in the template path, our
#    handlers (static files, the timeline JSON/text endpoints) registered. Safe to call twice.
richprogress.setup(c)
c.JupyterHub.spawner_class = "richprogress.RichKubeSpawner"

# If you already use your own KubeSpawner subclass, mix richprogress in instead:
#
#     from kubespawner import KubeSpawner
#     from richprogress import RichProgressMixin
#
#     class MySpawner(RichProgressMixin, MyKubeSpawner):
#         pass
#
#     c.JupyterHub.spawner_class = MySpawner

# 2. Your usual KubeSpawner settings still apply (RichKubeSpawner is a KubeSpawner).
c.KubeSpawner.image = "quay.io/jupyter/scipy-notebook:2024-12-09"
# Big images on cold nodes plus a cluster scale-up can take minutes; richprogress shows the
# user where the time goes, but the hub still gives up after this many seconds.
c.KubeSpawner.start_timeout = 600

# 3. Extra wording rules, tried before the defaults (``c.EventFormatter.rules`` replaces
#    the defaults instead). This is kubespawner #910's format
#    ({"match": {field: regex}, "template": ...}); #910 rules work unchanged, and
#    "severity", "hint" and "phase" are optional extensions. Named groups feed the template.
c.EventFormatter.extra_rules = [
    {
        "id": "gpu-quota",
        "match": {
            "reason": "FailedScheduling",
            "message": r".*Insufficient nvidia\.com/gpu",
        },
        "template": "All GPUs are in use right now",
        "severity": "warning",
        "hint": "GPU servers free up when others stop; try again in a few minutes.",
        "phase": "scheduling",
    },
]


# 4. A hook that receives each structured record (a dict: see the README's EventRecord
#    table) after the rules ran, with the spawner and the raw Kubernetes event, and
#    returns it, possibly edited (or None to keep it). It may be async. Keep it data: the
#    pages escape everything. Here: point users at the help desk when an image is missing.
def add_help_desk_hint(spawner, event, record):
    if record.get("rule") == "image-not-found":
        record["hint"] = "Check the image name, or write to help@example.org with this page."
    return record


c.EventFormatter.format_hook = add_help_desk_hint
