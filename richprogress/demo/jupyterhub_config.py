"""The demo's JupyterHub configuration: RichKubeSpawner on the simulated cluster.

Loaded by ``jupyterhub -f`` from ``richprogress.demo.hub.DemoHub``, which passes the ports,
folders and speed in ``RICHPROGRESS_DEMO_*`` environment variables and the cluster's address
in ``KUBECONFIG``. Each scenario of the simulated cluster is one profile in the spawn form
(slug = scenario name); "Your own image" lets the user type any image name.

Not a model for a real hub: see ``examples/jupyterhub_config.py`` for that.
"""

# ruff: noqa: F821 - `c` and `load_subconfig` are provided by traitlets when it loads this file

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import richprogress

if TYPE_CHECKING:  # what traitlets puts in this file's namespace when it loads it
    c: Any

    def load_subconfig(fname: str, path: str | None = None) -> None: ...


env = os.environ
workdir = Path(env.get("RICHPROGRESS_DEMO_WORKDIR", "."))

# -- where things listen: loopback only, ports chosen by DemoHub ------------------------------
c.JupyterHub.bind_url = env.get("RICHPROGRESS_DEMO_BIND_URL", "http://127.0.0.1:8000/")
c.JupyterHub.hub_bind_url = "http://127.0.0.1:{}".format(
    env.get("RICHPROGRESS_DEMO_HUB_PORT", "8081")
)
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{}".format(
    env.get("RICHPROGRESS_DEMO_PROXY_API_PORT", "8001")
)
c.ConfigurableHTTPProxy.command = [env.get("RICHPROGRESS_DEMO_CHP", "configurable-http-proxy")]
# DemoHub reads this file to find (and, if need be, stop) the proxy by its pid
c.ConfigurableHTTPProxy.pid_file = str(workdir / "jupyterhub-proxy.pid")

# -- state lives in the demo's throwaway folder ------------------------------------------------
c.JupyterHub.db_url = "sqlite:///{}".format(workdir / "jupyterhub.sqlite")
c.JupyterHub.cookie_secret_file = str(workdir / "jupyterhub_cookie_secret")
# the spawn history: a SQLite file beside the hub's database unless --history-url says
c.SpawnHistory.url = env.get("RICHPROGRESS_DEMO_HISTORY_URL") or "sqlite:///{}".format(
    workdir / "richprogress_history.sqlite"
)

# -- anyone can log in, with any password; "admin" is an admin ---------------------------------
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.Authenticator.admin_users = {"admin"}
c.JupyterHub.allow_named_servers = True

# An admin service token, so tests (and curious people) can drive the REST API.
_token = env.get("RICHPROGRESS_DEMO_API_TOKEN")
if _token:
    c.JupyterHub.services = [{"name": "richprogress-demo-admin", "api_token": _token}]
    c.JupyterHub.load_roles = [
        {
            "name": "richprogress-demo-admin",
            "scopes": ["admin:users", "admin:servers", "access:servers", "list:users"],
            "services": ["richprogress-demo-admin"],
        }
    ]

# Show the progress page even when a spawn is quick (the default, 10 s, skips it).
# Set before setup(c), which may add its own tornado settings.
c.JupyterHub.tornado_settings = {"slow_spawn_timeout": 0}

# -- richprogress: the spawner and the pages ---------------------------------------------------
c.JupyterHub.spawner_class = "richprogress.RichKubeSpawner"
richprogress.setup(c)

# -- KubeSpawner against the simulated cluster (found through $KUBECONFIG) ---------------------
speed = float(env.get("RICHPROGRESS_DEMO_SPEED", "10"))
# each simulated pod gets its own loopback address (127.0.0.2, ...) and listens on this port
c.KubeSpawner.port = int(env.get("RICHPROGRESS_DEMO_NOTEBOOK_PORT", "8888"))
# long enough for scale-up at this speed; short enough that image-not-found fails in < 1 min
c.KubeSpawner.start_timeout = int(float(env.get("RICHPROGRESS_DEMO_START_TIMEOUT", "30")))
c.KubeSpawner.image = "quay.io/jupyter/base-notebook:latest"
# fail-fast's hold time runs on the cluster's clock too: scale it as the start timeout
c.RichKubeSpawner.fail_fast_hold = 60.0 / speed

SCENARIO_ANNOTATION = "richprogress.demo/scenario"


def _scenario(
    slug: str, display_name: str, description: str, annotate: bool = True, **override: Any
) -> dict[str, Any]:
    """One profile that makes the simulated cluster replay scenario ``slug``."""
    kubespawner_override: dict[str, Any] = (
        {"extra_annotations": {SCENARIO_ANNOTATION: slug}} if annotate else {}
    )
    kubespawner_override.update(override)
    return {
        "slug": slug,
        "display_name": display_name,
        "description": description,
        "kubespawner_override": kubespawner_override,
    }


c.KubeSpawner.profile_list = [
    {
        **_scenario(
            "happy-path",
            "Happy path",
            "A node has room and the image is cached: the everyday spawn.",
        ),
        "default": True,
    },
    _scenario(
        "scale-up",
        "Cluster scale-up",
        "No node has room: the autoscaler adds a node, the image is pulled, then it starts.",
    ),
    _scenario(
        "image-not-found",
        "Image not found",
        "The image does not exist in the registry: the pull fails, and after the second failed "
        "pull richprogress ends the start (in about 2 s at the default speed).",
        image="quay.io/jupyter/no-such-notebook:2026-11",
    ),
    _scenario(
        "no-node-fits",
        "No node fits",
        "The server asks for a machine type no node or node group has: the autoscaler cannot "
        "add one, so richprogress ends the start once it has said so twice.",
    ),
    _scenario(
        "volume-provisioning",
        "Volume provisioning",
        "Your home folder is created and attached before the server starts.",
    ),
    _scenario(
        "flaky-pull",
        "Flaky registry",
        "The first pull fails (the registry does not have the image yet), the retry succeeds.",
    ),
    _scenario(
        "out-of-memory",
        "Out of memory",
        "The server starts, runs out of memory and is killed; once it has been killed twice, "
        "richprogress ends the start.",
    ),
    _scenario(
        "crash-on-start",
        "Crashes at start",
        "The server exits with code 1 right after it starts (a Python traceback in its log) and "
        "the cluster restarts it; once it has exited twice, richprogress ends the start.",
    ),
    _scenario(
        "missing-singleuser",
        "Image without jupyterhub-singleuser",
        "The image has no jupyterhub-singleuser command: the container cannot start "
        "(StartError, exit code 128); once it has failed twice, richprogress ends the start.",
    ),
    _scenario(
        "never-answers",
        "Server never answers",
        "The container runs, but its server listens on another port: the hub's check never gets "
        "an answer, and its http_timeout ends the start.",
    ),
    _scenario(
        "slow-pull-timeout",
        "Download outlasts the limit",
        "A large image is still downloading when the start time limit runs out.",
    ),
    _scenario(
        "operator",
        "Operator",
        "An operator reconciles a JupyterServer custom resource and reports on it before "
        "the pod's own events.",
    ),
    _scenario(
        "operator-error",
        "Operator error",
        "The operator cannot create the pod (a quota refuses it): the spawn times out and "
        "the page names the operator's error.",
    ),
    {
        **_scenario(
            "custom-image",
            "Your own image",
            "Type any image name. A name the registry does not hold fails as not found.",
            # no scenario annotation: the simulated registry decides from the image name
            # (a known image plays happy-path, any other fails to pull as not found)
            annotate=False,
        ),
        "profile_options": {
            "image": {
                "display_name": "Image",
                "choices": {
                    "base": {
                        "display_name": "quay.io/jupyter/base-notebook:latest",
                        "default": True,
                        "kubespawner_override": {"image": "quay.io/jupyter/base-notebook:latest"},
                    },
                },
                "unlisted_choice": {
                    "enabled": True,
                    "display_name": "Image name (e.g. quay.io/jupyter/scipy-notebook:latest)",
                    "display_name_in_choices": "Type an image name...",
                    "kubespawner_override": {"image": "{value}"},
                },
            }
        },
    },
]

# `--replay FILE`: the recorded events play as the first profile, the one chosen by default
_replay = env.get("RICHPROGRESS_DEMO_REPLAY")
if _replay:
    from richprogress.demo.replay_setup import replay_profile

    for _profile in c.KubeSpawner.profile_list:
        _profile.pop("default", None)
    c.KubeSpawner.profile_list.insert(0, replay_profile(Path(_replay)))

# The operator scenarios report on the pod's JupyterServer custom resource: follow its events.
c.RichKubeSpawner.followed_objects = [
    {"kind": "JupyterServer", "api_version": "demo.richprogress.org/v1alpha1", "name": "{pod_name}"},
]

# -- extra settings from DemoHub(extra_config=...), loaded last so they win ------------------
_extra = env.get("RICHPROGRESS_DEMO_EXTRA_CONFIG")
if _extra and Path(_extra).is_file():
    load_subconfig(_extra)
