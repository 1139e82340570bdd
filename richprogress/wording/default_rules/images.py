"""Default rules for kubelet's image manager: an image downloading, present, pulled, missing,
refused, rate-limited, misnamed or never to be pulled.

The pull-failure patterns are case-sensitive on purpose: registries and runtimes word these
errors in fixed case, and case-insensitive scanning of long messages costs twice as much.
"""

from __future__ import annotations

import re
from typing import Any

from richprogress.wording.default_rules.patterns import CONTAINER, IMAGE

_DURATION_RE = re.compile(r"(?:(\d+)h)?(?:(\d+)m(?!s))?(?:([\d.]+)s)?(?:([\d.]+)ms)?\Z")


def human_duration(text: str) -> str:
    """Go durations ("2m32.639s", "498ms", "1h2m3s") in words ("2 min 33 s", "0.5 s")."""
    found = _DURATION_RE.match(text)
    if not text or found is None:
        return text
    hours, minutes, seconds, millis = found.groups()
    total = float(seconds or 0) + float(millis or 0) / 1000
    if hours or minutes:
        secs = round(total)
        mins = int(minutes or 0) + int(hours or 0) * 60
        if secs == 60:
            mins, secs = mins + 1, 0
        return f"{mins} min {secs} s" if secs else f"{mins} min"
    if total < 10:
        return f"{total:.1f} s"
    return f"{round(total)} s"


def human_size(text: str) -> str:
    """A byte count in words ("3922990416" -> "3.9 GB")."""
    try:
        size = float(text)
    except ValueError:
        return text
    for unit in ("bytes", "kB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1000
    return text  # pragma: no cover - the loop always returns


def _pulled_sentence(image: str = "", container: str = "", duration: str = "", size: str = "", **_: str) -> str:
    sentence = f"Downloaded the image {image} for the {container} container"
    if duration:
        sentence += f" in {human_duration(duration)}"
    if size:
        sentence += f" ({human_size(size)})"
    return sentence


def _unset_image(image: str) -> bool:
    """KubeSpawner writes an unset image as "None" (or "None:None"): the admin's config."""
    return image.split(":")[0].strip().lower() in ("", "none", "null")


def _invalid_image_sentence(image: str = "", **_: str) -> str:
    if _unset_image(image):
        return f"No image is set for this server (its image name is {image or 'empty'})"
    return f"The image name {image} is not a valid image name"


def _invalid_image_hint(image: str = "", **_: str) -> str:
    if _unset_image(image):
        return "Ask your administrator: this server option has no image set."
    return "Check the image name for typos (spaces, capital letters, a missing tag)."


# One "not found" cannot be told from a tag just pushed that a registry replica does not
# have yet: say what is known, and what the retry will tell.
# read live (the cluster may still try again) and on the failure page alike: it promises
# no retry that may not come
_PULL_HINT_MISSING = (
    "Check the image name and tag for typos, or choose another image. A tag pushed moments "
    "ago can take a while to reach every copy of the registry."
)
_PULL_HINT_DENIED = (
    "Check the image name for typos. If the image is private, ask your administrator "
    "to give the cluster access to it."
)

_PLATFORM_RE = re.compile(r"(?:manifest for|platform) (?P<p>(?:linux|windows|darwin)/[\w/]+)")


def _platform_sentence(image: str = "", container: str = "", detail: str = "", **_: str) -> str:
    found = _PLATFORM_RE.search(detail[:4000])
    platform = f" ({found.group('p')})" if found else ""
    return (f"The image {image} for the {container} container has no build for this kind of machine{platform}: "
            "it exists, but not for this platform")


IMAGES: list[dict[str, Any]] = [
    {
        "id": "image-pulling",
        "match": {"reason": r"Pulling\Z", "fieldPath": CONTAINER, "message": r"[Pp]ulling image " + IMAGE},
        "template": "Downloading the image {image} for the {container} container",
        "phase": "image",
    },
    {
        "id": "image-cached",
        "match": {"reason": r"Pulled\Z", "fieldPath": CONTAINER,
                  "message": r"Container image " + IMAGE + r" already present on machine"},
        "template": "The image {image} for the {container} container is already on the machine "
        "(no download needed)",
        "phase": "image",
    },
    {
        "id": "image-pulled",
        "match": {"reason": r"Pulled\Z", "fieldPath": CONTAINER,
                  "message": r"Successfully pulled image " + IMAGE
                             + r"(?: in (?P<duration>[\d.hms]+))?(?:.*?Image size: (?P<size>\d+) bytes)?"},
        "template": _pulled_sentence,
        "phase": "image",
    },
    # containerd ("no match for platform in manifest: not found", images/image.go) and the
    # Docker daemon ("no matching manifest for linux/arm64/v8 in the manifest list entries",
    # distribution/pull_v2.go): the image exists, only not for this machine's platform; before
    # image-not-found, whose "not found" this text also ends with
    {
        "id": "image-wrong-platform",
        "match": {"reason": r"Failed\Z", "fieldPath": CONTAINER,
                  "message": r"(?s)Failed to pull image " + IMAGE
                             + r"(?P<detail>.{0,2000}?(?:no match for (?:current )?platform|no matching manifest for"
                               r"|no supported platform found).*)"},
        "template": _platform_sentence,
        "severity": "error",
        "hint": "Choose another image or server option: this image is not built for the cluster's machines "
        "(ask its maintainer for a build for this platform).",
        "phase": "image",
    },
    # containerd / the Docker daemon refused the name itself (distribution/reference's
    # "invalid reference format"): no retry changes a name
    {
        "id": "image-invalid-reference",
        "match": {"reason": r"Failed\Z", "fieldPath": CONTAINER,
                  "message": r"(?s)Failed to pull image " + IMAGE + r".{0,2000}?invalid reference format"},
        "template": "The image name {image} for the {container} container is not a valid image name",
        "severity": "error",
        "fatal": True,
        "hint": "Check the image name for typos (spaces, capital letters, a stray quote, a missing tag).",
        "phase": "image",
    },
    {
        "id": "image-not-found",
        "match": {"reason": r"Failed\Z", "fieldPath": CONTAINER,
                  "message": r"(?s)Failed to pull image " + IMAGE
                             + r"(?:.{0,2000}?)(?:: not found|code = NotFound|manifest unknown|name unknown)"},
        "template": "The image {image} for the {container} container was not found in its registry",
        "severity": "error",
        "fatal": True,
        "hint": _PULL_HINT_MISSING,
        "phase": "image",
    },
    {
        "id": "image-access-denied",
        "match": {"reason": r"Failed\Z", "fieldPath": CONTAINER,
                  "message": r"(?s)Failed to pull image " + IMAGE
                             + r"(?:.{0,2000}?)(?:access denied|[Uu]nauthorized|failed to authorize|[Ff]orbidden"
                               r"|authentication required|denied: |\b40[13]\b)"},
        "template": "The image {image} for the {container} container could not be downloaded: "
        "it does not exist or is private",
        "severity": "error",
        "fatal": True,
        "hint": _PULL_HINT_DENIED,
        "phase": "image",
    },
    {
        "id": "image-rate-limited",
        "match": {"reason": r"Failed\Z", "fieldPath": CONTAINER,
                  "message": r"(?s)Failed to pull image " + IMAGE
                             + r"(?:.{0,2000}?)(?:toomanyrequests|[Tt]oo [Mm]any [Rr]equests|rate limit)"},
        "template": "The image registry is limiting downloads of {image} right now; the cluster will try again",
        "severity": "warning",
        "hint": "Wait a few minutes. If it keeps happening, ask your administrator "
        "(the cluster may need a registry login or a mirror).",
        "phase": "image",
    },
    {
        "id": "image-pull-failed",
        "match": {"reason": r"Failed\Z", "fieldPath": CONTAINER, "message": r"Failed to pull image " + IMAGE},
        "template": "Downloading the image {image} for the {container} container failed; "
        "the cluster will try again",
        "severity": "warning",
        "hint": "If it keeps failing, check the image name or ask your administrator.",
        "phase": "image",
    },
    # kubelet's "Failed to inspect image %q: %v" (image_manager.go): the runtime could not read
    # an image it has; the name is set and may well be right
    {
        "id": "image-inspect-failed",
        "match": {"reason": r"InspectFailed\Z", "message": r"Failed to inspect image " + IMAGE},
        "template": "The container runtime on the machine could not read the image {image}",
        "severity": "error",
        "hint": "This needs your administrator: the machine's container runtime may be broken. "
        "Ask them for help and send them this page.",
        "phase": "image",
    },
    {
        "id": "image-inspect-error",
        "match": {"reason": r"Failed\Z", "fieldPath": CONTAINER, "message": r"Error: ImageInspectError"},
        "template": "The container runtime on the machine could not read the image for the {container} container",
        "severity": "error",
        "hint": "See the message above about the image for the reason.",
        "phase": "image",
    },
    {
        "id": "image-invalid-name",
        "match": {"reason": r"InspectFailed\Z|InvalidImageName\Z",
                  "message": r"(?s)(?:Failed to apply default image tag " + IMAGE + r")?"},
        "template": _invalid_image_sentence,
        "severity": "error",
        "fatal": True,
        "hint": _invalid_image_hint,
        "phase": "image",
    },
    {
        "id": "image-invalid-name-error",
        "match": {"reason": r"Failed\Z", "fieldPath": CONTAINER, "message": r"Error: InvalidImageName"},
        "template": "The image name for the {container} container is not valid",
        "severity": "error",
        "fatal": True,
        "hint": "Check the image name for typos (spaces, capital letters, a missing tag).",
        "phase": "image",
    },
    {
        "id": "image-never-pull",
        "match": {"reason": r"ErrImageNeverPull\Z", "fieldPath": CONTAINER,
                  "message": r"(?:Container image " + IMAGE + ")?"},
        "template": "The image {image} for the {container} container is not on the machine, "
        "and the server is set never to download it",
        "severity": "error",
        "fatal": True,
        "hint": "Ask your administrator: the image pull policy is 'Never'.",
        "phase": "image",
    },
    {
        "id": "image-err-pull",
        "match": {"reason": r"Failed\Z", "fieldPath": CONTAINER, "message": r"Error: ErrImagePull"},
        "template": "Could not download the image for the {container} container",
        "severity": "error",
        "hint": "See the message above about the image for the reason.",
        "phase": "image",
    },
    {
        "id": "image-pull-backoff",
        "match": {"reason": r"Failed\Z", "fieldPath": CONTAINER, "message": r"Error: ImagePullBackOff"},
        "template": "Waiting before trying again to download the image for the {container} container",
        "severity": "warning",
        "hint": "Downloading the image failed before; see the earlier message for why.",
        "phase": "image",
    },
    {
        "id": "image-backoff-pulling",
        "match": {"reason": r"BackOff\Z", "fieldPath": CONTAINER, "message": r"Back-off pulling image " + IMAGE},
        "template": "Waiting before trying again to download the image {image} for the {container} container",
        "severity": "warning",
        "hint": "Downloading the image failed before; see the earlier message for why.",
        "phase": "image",
    },
]
