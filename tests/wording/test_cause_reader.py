"""The cause reader: a nested error message read into its operation, object and causes, and
its innermost cause said in words with the decisive token, on real wordings of every class.

The wordings are the sources' (kubelet, containerd, runc, the Docker daemon, Go's net and
crypto/x509, nfs-utils, the NVIDIA toolkit, CSI drivers) as in the first corpus and the
upstream format strings; none comes from the held-out corpus, which only measures.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from richprogress.story.diagnosis import diagnose
from richprogress.story.verdict import decide
from richprogress.wording.cause_reader import pick, read_cause
from richprogress.wording.error_chain import parse_chain
from richprogress.wording.error_classes import BY_NAME, CLASSES, candidates, fixer_of
from richprogress.wording.formatter import EventFormatter

NOTEBOOK = "spec.containers{notebook}"
PULL = 'Failed to pull image "quay.io/jupyter/scipy-notebook:2024-01-15": rpc error: code = Unknown desc = '
UNPACK = 'failed to pull and unpack image "quay.io/jupyter/scipy-notebook:2024-01-15": '
RESOLVE = 'failed to resolve reference "quay.io/jupyter/scipy-notebook:2024-01-15": '
HEAD = 'failed to do request: Head "https://quay.io/v2/jupyter/scipy-notebook/manifests/2024-01-15": '
RUNC = ("Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc "
        "create failed: unable to start container process: ")
MOUNT = ('MountVolume.SetUp failed for volume "home" : mount failed: exit status 32\nMounting command: mount\n'
         "Mounting arguments: -t nfs 10.0.0.2:/export/home /var/lib/kubelet/pods/ab/volumes/kubernetes.io~nfs/home\n"
         "Output: ")
PROVISION = 'failed to provision volume with StorageClass "gp3": rpc error: code = Internal desc = Could not create volume "pvc-1": '

# (id, message, operation, object, class, words the sentence must hold)
CASES: list[tuple[str, str, str, str, str, tuple[str, ...]]] = [
    # not built for this platform: containerd v1.6-v2.0 (images/image.go), the Docker daemon (pull_v2.go)
    ("platform-containerd", PULL.replace("Unknown", "NotFound") + UNPACK + "no match for platform in manifest: not found",
     "pull", "quay.io/jupyter/scipy-notebook:2024-01-15", "platform", ("no build for this kind of machine",)),
    ("platform-containerd-1.2", PULL + UNPACK + "no match for current platform linux/arm/v7 in manifest "
     "sha256:32efb15cbb8a: not found", "pull", "quay.io/jupyter/scipy-notebook:2024-01-15", "platform",
     ("linux/arm/v7",)),
    ("platform-docker", PULL + "Error response from daemon: no matching manifest for linux/amd64 in the manifest "
     "list entries", "pull", "quay.io/jupyter/scipy-notebook:2024-01-15", "platform", ("linux/amd64",)),
    # name does not resolve: Go net's three wordings, glibc's
    ("dns-no-such-host", PULL + UNPACK + RESOLVE + HEAD + "dial tcp: lookup quay.io on 10.96.0.10:53: no such host",
     "pull", "quay.io/jupyter/scipy-notebook:2024-01-15", "dns", ("quay.io could not be looked up (DNS)",)),
    ("dns-misbehaving", PULL + UNPACK + RESOLVE + HEAD + "dial tcp: lookup quay.io: server misbehaving",
     "pull", "quay.io/jupyter/scipy-notebook:2024-01-15", "dns", ("quay.io could not be looked up",)),
    ("dns-timeout", PULL + "Error response from daemon: Get https://quay.io/v2/: dial tcp: lookup quay.io on "
     "10.0.0.2:53: read udp 10.0.0.5:4000->10.0.0.2:53: i/o timeout", "pull",
     "quay.io/jupyter/scipy-notebook:2024-01-15", "dns", ("quay.io could not be looked up",)),
    ("dns-nfs", MOUNT + "mount.nfs: Failed to resolve server files.example.edu: Temporary failure in name resolution",
     "mount", "home", "dns", ("file server's name",)),
    # TLS: unknown authority, expired (Go 1.20+ wraps it in "tls: failed to verify certificate")
    ("x509-unknown", PULL + UNPACK + RESOLVE + HEAD + "x509: certificate signed by unknown authority", "pull",
     "quay.io/jupyter/scipy-notebook:2024-01-15", "tls", ("quay.io", "not trusted")),
    ("x509-expired-go120", PULL + UNPACK + RESOLVE + HEAD + "tls: failed to verify certificate: x509: certificate "
     "has expired or is not yet valid: current time 2026-01-02T00:00:00Z is after 2026-01-01T00:00:00Z", "pull",
     "quay.io/jupyter/scipy-notebook:2024-01-15", "tls", ("quay.io", "expired")),
    ("http-to-https", PULL + UNPACK + RESOLVE + 'failed to do request: Head "https://10.0.0.9:5000/v2/x/manifests/1":'
     " http: server gave HTTP response to HTTPS client", "pull", "quay.io/jupyter/scipy-notebook:2024-01-15", "tls",
     ("10.0.0.9:5000", "HTTPS")),
    # timed out: gRPC's deadline, Go's i/o timeout, a client timeout
    ("timeout-deadline", PULL.replace("Unknown", "DeadlineExceeded") + "context deadline exceeded", "pull",
     "quay.io/jupyter/scipy-notebook:2024-01-15", "timeout", ("did not answer in time",)),
    ("timeout-io", PULL + UNPACK + RESOLVE + HEAD + "dial tcp 52.1.2.3:443: i/o timeout", "pull",
     "quay.io/jupyter/scipy-notebook:2024-01-15", "timeout", ("quay.io", "did not answer in time")),
    ("timeout-probe", ('Startup probe failed: Get "http://10.0.0.5:8888/api": context deadline exceeded '
     "(Client.Timeout exceeded while awaiting headers)"), "probe", "Startup", "timeout", ("did not answer in time",)),
    # refused or unreachable
    ("refused", PULL + UNPACK + RESOLVE + HEAD + "dial tcp 10.0.0.9:443: connect: connection refused", "pull",
     "quay.io/jupyter/scipy-notebook:2024-01-15", "unreachable", ("refused the connection",)),
    ("no-route", MOUNT + "mount.nfs: No route to host", "mount", "home", "unreachable", ("could not be reached",)),
    ("reset", PULL + UNPACK + "failed to copy: read tcp 10.0.0.5:51234->1.2.3.4:443: read: connection reset by peer",
     "pull", "quay.io/jupyter/scipy-notebook:2024-01-15", "unreachable", ("was cut",)),
    # not found: a tag, a secret, a file
    ("not-found-tag", PULL.replace("Unknown", "NotFound") + UNPACK + RESOLVE
     + "quay.io/jupyter/scipy-notebook:2024-01-15: not found", "pull", "quay.io/jupyter/scipy-notebook:2024-01-15",
     "not-found", ("does not exist",)),
    ("not-found-secret", 'MountVolume.SetUp failed for volume "token" : secret "hub-token" not found', "mount",
     "token", "not-found", ("the secret hub-token does not exist",)),
    ("not-found-file", RUNC + 'exec: "/opt/start.sh": stat /opt/start.sh: no such file or directory: unknown',
     "start", "", "not-found", ("/opt/start.sh does not exist",)),
    # unauthorized / forbidden: containerd 1.7's status line, EC2's code
    ("denied-403", PULL + UNPACK + RESOLVE + "pulling from host quay.io failed with status code [manifests "
     "2024-01-15]: 403 Forbidden", "pull", "quay.io/jupyter/scipy-notebook:2024-01-15", "denied", ("private", "403")),
    ("denied-ec2", PROVISION + "could not create volume in EC2: UnauthorizedOperation: You are not authorized to "
     "perform this operation.", "provision", "gp3", "denied", ("not allowed", "UnauthorizedOperation")),
    # rate limited
    ("rate-429", PULL + UNPACK + "failed to copy: httpReadSeeker: failed open: unexpected status code "
     "https://registry-1.docker.io/v2/x/manifests/sha256:1: 429 Too Many Requests - Server message: "
     "toomanyrequests: You have reached your pull rate limit", "pull", "quay.io/jupyter/scipy-notebook:2024-01-15",
     "rate-limited", ("rate limit",)),
    # quota or limit
    ("quota-ec2", PROVISION + "could not create volume in EC2: VolumeLimitExceeded: You have exceeded your maximum "
     "gp3 storage limit", "provision", "gp3", "quota", ("VolumeLimitExceeded",)),
    # no space left, ephemeral-storage limit
    ("no-space", PULL + UNPACK + "failed to extract layer sha256:5f70: write /var/lib/containerd/x/fs/opt/lib.so: "
     "no space left on device: unknown", "pull", "quay.io/jupyter/scipy-notebook:2024-01-15", "no-space",
     ("disk is full",)),
    # kubelet eviction_manager.go v1.14-v1.30: "Container %s exceeded its local ephemeral storage limit %q. "
    # (one clause and no operation: the eviction rules word it, not the reader)
    ("ephemeral-limit", "Container notebook exceeded its local ephemeral storage limit \"1Gi\". ", "", "", "", ()),
    ("human-sentence", "The image quay.io/x:1 does not exist.", "", "", "", ()),
    ("nothing-known", "the flux capacitor is misaligned", "", "", "", ()),
    # distribution/reference's refusal of the name itself
    ("invalid-reference", 'Failed to pull image "x:1"": rpc error: code = Unknown desc = invalid reference format',
     "pull", 'x:1"', "invalid", ("not a valid image name",)),
    # read-only file system
    ("read-only", RUNC + 'error during container init: error mounting "/var/lib/kubelet/pods/1/volumes/x" to rootfs '
     'at "/etc/jupyter": mkdir /run/containerd/rootfs/etc/jupyter: read-only file system: unknown', "start", "",
     "read-only", ("/etc/jupyter", "read-only")),
    # permission denied, the working directory the user id cannot enter (runc's wording)
    ("permission-cwd", RUNC + 'error during container init: chdir to cwd ("/home/jovyan") set in config.json '
     "failed: permission denied: unknown", "start", "", "permission", ("/home/jovyan", "working folder")),
    ("permission-exec", RUNC + 'exec: "/usr/local/bin/start.sh": permission denied: unknown', "start", "",
     "permission", ("/usr/local/bin/start.sh",)),
    # already in use or attached elsewhere
    ("in-use-ebs", ('AttachVolume.Attach failed for volume "pvc-1" : rpc error: code = Internal desc = Could not '
     'attach volume "vol-1" to node "i-1": could not attach volume "vol-1" to node "i-1": VolumeInUse: vol-1 is '
     "already attached to an instance"), "attach", "pvc-1", "in-use", ("in use elsewhere",)),
    # device or GPU not available: kubelet's device manager, the NVIDIA toolkit
    ("gpu-devicemanager", ("Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. "
     "Requested: 1, Available: 0, which is unexpected"), "", "", "device", ("nvidia.com/gpu",)),
    ("gpu-nvml", RUNC + "error during container init: error running hook #0: error running hook: exit status 1, "
     "stdout: , stderr: nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown", "start",
     "", "device", ("GPU driver",)),
    # runtime or sandbox broken: a missing runtime handler, the runtime's socket, CNI, no IPs
    ("runtime-handler", ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox '
     'runtime: no runtime for "nvidia" is configured'), "sandbox", "", "runtime", ("nvidia runtime",)),
    ("runtime-socket", ('Failed to create pod sandbox: rpc error: code = Unavailable desc = connection error: desc = '
     '"transport: Error while dialing dial unix /run/containerd/containerd.sock: connect: connection refused"'),
     "sandbox", "", "runtime", ("containerd", "not answering")),
    ("network-no-ips", ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for '
     'sandbox "ab": plugin type="bridge" failed (add): failed to allocate for range 0: no IP addresses available '
     "in range set: 10.244.1.1-10.244.1.254"), "sandbox", "", "network", ("no free address",)),
    # exec format error
    ("exec-format", RUNC + "exec /usr/local/bin/tini: exec format error: unknown", "start", "", "exec-format",
     ("/usr/local/bin/tini", "another kind of machine")),
    # the NFS lock service
    ("lock-statd", MOUNT + "mount.nfs: rpc.statd is not running but is required for remote locking.\nmount.nfs: "
     "Either use '-o nolock' to keep locks local, or start statd.\n", "mount", "home", "lock-service", ("rpc.statd",)),
    # a probe that failed with its status code
    ("probe-status", "Readiness probe failed: HTTP probe failed with statuscode: 503", "probe", "Readiness",
     "probe-status", ("503",)),
    # a CSI driver not running on the machine
    ("driver-missing", ('MountVolume.MountDevice failed for volume "pvc-2" : kubernetes.io/csi: attacher.MountDevice '
     "failed to create newCsiDriverClient: driver name efs.csi.aws.com not found in the list of registered CSI "
     "drivers"), "mount", "pvc-2", "driver-missing", ("efs.csi.aws.com",)),
    # the old kubelet's FailedSync form (v1.5-v1.9)
    ("old-kubelet", ('Error syncing pod, skipping: failed to "StartContainer" for "notebook" with ErrImagePull: "rpc '
     'error: code = 2 desc = Error response from daemon: {\\"message\\":\\"Get https://r.example.org/v2/: dial tcp: '
     'lookup r.example.org on 10.0.0.2:53: no such host\\"}"'), "pull", "notebook", "dns", ("r.example.org",)),
]


MESSAGES = {case[0]: case[1] for case in CASES}


@pytest.mark.parametrize(("message", "operation", "obj", "name", "words"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_a_real_wording_is_read_to_its_class(message: str, operation: str, obj: str, name: str,
                                             words: tuple[str, ...]) -> None:
    chain = parse_chain(message)
    assert (chain.operation, chain.object) == (operation, obj)
    found = read_cause(message, "notebook")
    if not name:
        assert found is None
        return
    assert found is not None, message
    assert found.error_class.name == name
    for word in words:
        assert word in found.sentence, found.sentence
    # the raw innermost clause it read is the message's own text, for the row's details
    assert found.clause in message.replace('\\"', '"') or found.clause in message


def test_every_class_has_a_real_wording() -> None:
    assert {c[4] for c in CASES if c[4]} == {cls.name for cls in CLASSES}


def test_every_class_says_who_can_fix_it() -> None:
    for cls in CLASSES:
        assert cls.fixer in ("you", "admin", "cluster") and cls.hint
        assert fixer_of(f"cause-{cls.name}") == cls.fixer
    assert fixer_of("image-not-found") is None and fixer_of(None) is None


def ev(reason: str, message: str, uid: str = "e1", field_path: str | None = NOTEBOOK,
       stamp: str = "2026-11-29T21:33:30Z") -> dict[str, Any]:
    involved: dict[str, Any] = {"kind": "Pod", "namespace": "jhub", "name": "jupyter-alice"}
    if field_path:
        involved["fieldPath"] = field_path
    return {"metadata": {"uid": uid}, "involvedObject": involved, "reason": reason, "message": message,
            "type": "Warning", "source": {"component": "kubelet"}, "firstTimestamp": stamp, "lastTimestamp": stamp,
            "count": 1}


def test_an_image_with_no_build_for_the_platform_is_not_missing() -> None:
    """The image exists; containerd's text only ends like a missing one's."""
    record = EventFormatter().format_event(ev("Failed", CASES[0][1]))
    assert record["rule"] == "image-wrong-platform"
    assert "not found" not in record["message"] and "does not exist" not in record["message"]
    assert "no build for this kind of machine" in record["message"]
    assert "quay.io/jupyter/scipy-notebook:2024-01-15" in record["message"]


def test_an_image_the_runtime_could_not_inspect_is_not_unset() -> None:
    message = ('Failed to inspect image "quay.io/jupyter/scipy-notebook:2024-01-15": rpc error: code = Unknown desc = '
               "Error response from daemon: readlink /var/lib/docker/overlay2/l: invalid argument")
    record = EventFormatter().format_event(ev("InspectFailed", message))
    assert "No image is set" not in record["message"] and "empty" not in record["message"]
    assert record["message"] == ("The container runtime on the machine could not read the image "
                                 "quay.io/jupyter/scipy-notebook:2024-01-15")
    found = diagnose([record], "Spawn failed: ")
    assert "could not read the image" in found["summary"] and "administrator" in (found["hint"] or "")


def test_a_stray_quote_in_an_image_name_is_still_an_invalid_name_and_stops_early() -> None:
    record = EventFormatter().format_event(
        ev("Failed", 'Failed to pull image "jupyter/base-notebook:latest"": rpc error: code = Unknown desc = '
           "invalid reference format"))
    assert record["rule"] == "image-invalid-reference" and record.get("fatal") is True
    assert 'jupyter/base-notebook:latest"' in record["message"]


def test_a_warning_no_rule_knows_keeps_its_why() -> None:
    """A Warning of a reason no rule claims: the cause reader words it; the raw text stays."""
    message = ("MapVolume.SetUpDevice failed for volume \"pvc-3\" : rpc error: code = Internal desc = "
               "rpc.statd is not running but is required for remote locking")
    record = EventFormatter().format_event(ev("FailedMapVolume", message, field_path=None))
    assert record["rule"] == "cause-lock-service"
    assert "rpc.statd" in record["message"] and record["raw_message"] == message


def test_a_warning_with_no_known_cause_stays_raw() -> None:
    record = EventFormatter().format_event(ev("SomethingOdd", "the flux capacitor is misaligned", field_path=None))
    assert record["rule"] is None and record["message"] == "the flux capacitor is misaligned"


def test_the_diagnosis_carries_the_class_words_and_the_token() -> None:
    formatter = EventFormatter()
    records = [
        formatter.format_event(ev("Failed", CASES[3][1], "a", stamp="2026-11-29T21:33:30Z")),
        formatter.format_event(ev("Failed", "Error: ErrImagePull", "b", stamp="2026-11-29T21:33:31Z")),
        formatter.format_event(ev("Failed", "Error: ImagePullBackOff", "c", stamp="2026-11-29T21:33:40Z")),
    ]
    found = diagnose(records, "Spawn failed: ")
    assert found["record_id"] == "a"
    assert "the registry's name quay.io could not be looked up (DNS)" in found["summary"]
    verdict = decide(records, outcome="failed", failure_message="Spawn failed: ")
    assert verdict.cause is not None and verdict.cause.fixer == "admin"
    assert verdict.cause.summary == found["summary"]


def test_the_diagnosis_reads_the_cause_of_a_record_no_rule_worded() -> None:
    """An admin's own rule set (or a record stored before) left the text raw."""
    record = EventFormatter(rules=[]).format_event(ev("Failed", CASES[7][1]))
    record.update(rule=None, message=record["raw_message"], hint=None)
    found = diagnose([record], "Spawn failed: ")
    assert "the certificate of quay.io is not trusted" in found["summary"]


# ---- the innermost cause is the one worded, whatever the nesting --------------------------

#: (clause, class): known clauses with no ": " inside, from the cases above
CLAUSES: list[tuple[str, str]] = [
    ("no such host", "dns"), ("server misbehaving", "dns"), ("x509", "tls"),
    ("certificate signed by unknown authority", "tls"), ("no space left on device", "no-space"),
    ("read-only file system", "read-only"), ("permission denied", "permission"), ("403 Forbidden", "denied"),
    ("toomanyrequests", "rate-limited"), ("VolumeLimitExceeded", "quota"), ("exec format error", "exec-format"),
    ("rpc.statd is not running but is required for remote locking", "lock-service"),
    ('no runtime for "nvidia" is configured', "runtime"), ("no match for platform in manifest", "platform"),
    ("driver not loaded", "device"), ("i/o timeout", "timeout"), ("context deadline exceeded", "timeout"),
    ("connection refused", "unreachable"), ("no route to host", "unreachable"), ("not found", "not-found"),
]
WRAPPERS = ["rpc error: code = Unknown desc = ", "Error response from daemon: ", 'failed to copy: ',
            'failed to resolve reference "quay.io/x:1": ', "dial tcp 10.0.0.9:443: ", "failed to do request: ",
            "unable to start container process: ", "error during container init: "]
OPERATIONS = [('Failed to pull image "quay.io/x:1": ', "pull"), ('MountVolume.SetUp failed for volume "v" : ', "mount"),
              ("Failed to create pod sandbox: ", "sandbox"), ("Error: ", "start"),
              ('failed to provision volume with StorageClass "s": ', "provision"), ("", "")]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(OPERATIONS),
       st.lists(st.tuples(st.lists(st.sampled_from(WRAPPERS), max_size=3), st.sampled_from(CLAUSES)),
                min_size=1, max_size=4))
def test_the_innermost_cause_is_the_one_worded(operation: tuple[str, str], nesting: list[Any]) -> None:
    """Random nestings of known clauses: the innermost specific one is worded (else the
    innermost generic one), and the operation is the outermost's."""
    message = operation[0] + ": ".join("".join(wrappers) + clause for wrappers, (clause, _name) in nesting)
    specific = [(clause, name) for _w, (clause, name) in nesting if BY_NAME[name].specific]
    expected = (specific or [(clause, name) for _w, (clause, name) in nesting])[-1]
    chain = parse_chain(message)
    assert chain.operation == operation[1]
    picked = pick(chain)
    assert picked is not None
    assert (picked[1], picked[0].name) == expected
    found = read_cause(message, "notebook")
    if not operation[1] and (len(chain.causes) < 2 or not BY_NAME[expected[1]].specific):
        assert found is None  # no operation, no chain of a specific cause: not reworded
        return
    assert found is not None and found.error_class.name == expected[1]


def test_the_cheap_gate_never_hides_a_class() -> None:
    """``candidates`` (words and pieces) lets through every class whose pattern matches."""
    texts = [case[1] for case in CASES] + [clause for clause, _name in CLAUSES]
    for text in texts:
        low = text.lower()
        among = candidates(low)
        for cls in CLASSES:
            if cls.pattern.search(low):
                assert cls in among, (cls.name, text)


def test_an_admins_own_rules_leave_the_rows_raw_and_the_diagnosis_still_says_why() -> None:
    """``rules`` replace the defaults, the cause reader included: the rows keep the event's
    words as the admin chose; the one-sentence summary still reads the cause inside."""
    record = EventFormatter(rules=[{"match": {"reason": "Pulling"}, "template": "Fetching"}]).format_event(
        ev("Failed", CASES[3][1]))
    assert record["rule"] is None and record["message"] == record["raw_message"]
    found = diagnose([record], "Spawn failed: ")
    assert "quay.io could not be looked up (DNS)" in found["summary"]


def test_a_read_cause_of_no_known_kind_outweighs_the_follow_ups() -> None:
    """An event of a reason no known failure has (the old kubelet's FailedSync), whose cause
    the reader read, is the cause: not the image back-offs after it."""
    formatter = EventFormatter()
    records = [
        formatter.format_event(ev("FailedSync", MESSAGES["old-kubelet"], "a", field_path=None,
                                  stamp="2026-11-29T21:33:30Z")),
        formatter.format_event(ev("BackOff", 'Back-off pulling image "r.example.org/notebook:1"', "b",
                                  stamp="2026-11-29T21:33:40Z")),
        formatter.format_event(ev("Failed", "Error: ImagePullBackOff", "c", stamp="2026-11-29T21:33:41Z")),
    ]
    assert records[0]["rule"] == "cause-dns"
    found = diagnose(records, "Spawn failed: ")
    assert found["record_id"] == "a" and "r.example.org could not be looked up" in found["summary"]
