"""The ``richprogress`` command line: ``richprogress explain`` turns Kubernetes events into
the same humanized timeline and diagnosis the spawn pages show.

Uses only the formatter side (records, rules, diagnosis, text rendering): no JupyterHub or
Kubernetes client import, so it works on an admin's laptop next to ``kubectl``.
"""

from __future__ import annotations

import argparse
import codecs
import io
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from richprogress._version import __version__
from richprogress.model.display import display_line
from richprogress.model.records import EventRecord
from richprogress.story.container_log import container_log, report_lines
from richprogress.story.diagnosis import Diagnosis, decisive_record, diagnose, ended_running
from richprogress.story.ordering import arrival_order
from richprogress.story.pods import (
    Pod,
    PodChoiceError,
    Subject,
    belongs,
    joined,
    mix_sentence,
    name_list,
    owners,
    plural,
    pod_label,
    select,
    subject_of,
)
from richprogress.story.report import format_object, render_timeline_text
from richprogress.wording.log_causes import log_cause_hint, log_cause_sentence, read_log_cause

PROG = "richprogress"

EXPLAIN_DESCRIPTION = """\
Explain the events of a JupyterHub server's pod in plain words.

Reads the output of `kubectl get events -o json` (a List with "items"), a JSON array of
events, or JSON lines (one event per line), from FILE or standard input.

By default prints a readable timeline (UTC time, type, reason, object, sentence; repeats
folded) in the order the events happened, as the spawn pages show them, ending with what
went wrong and what to do when a warning or error was not overcome by later progress.

Events of several pods (a namespace's events, without a field selector): the output first
says how many objects the input mixes, then shows one section per pod, the pods with a
problem first, each with its own diagnosis. Events of an object named like a pod (an
operator's resource) or of the claim KubeSpawner names after it (claim-X for jupyter-X)
go with that pod; the events of any other object come last, in a section of their own.
--pod NAME explains one pod alone.
"""

EXPLAIN_EPILOG = """\
examples:
  kubectl get events -o json --field-selector involvedObject.name=jupyter-alice \\
      | richprogress explain
  kubectl get events -o json | richprogress explain --pod jupyter-alice
  richprogress explain events.json --diagnose
  richprogress explain events.json --raw      # each event's own message under its sentence
  richprogress explain events.json --json --rules my-rules.json

exit status: 0 on success, 2 on bad input (one line on stderr says what is wrong), also
when --diagnose gets the events of several pods without --pod, or --pod names no pod of
the input.
"""


class InputError(Exception):
    """Input the command cannot use; its text is the one line shown to the user."""


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


class _TooDeep(Exception):
    """JSON nested deeper than Python's recursion limit (json.loads raises RecursionError)."""


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise _TooDeep from None


def _is_event(value: Any) -> bool:
    return isinstance(value, dict) and (
        value.get("kind") == "Event" or "involvedObject" in value or "regarding" in value
    )


def parse_events(text: str) -> list[dict[str, Any]]:
    """The events in ``text`` (kubectl List, JSON array, one Event, or JSON lines).

    Raises ``InputError`` with a one-line explanation for anything else.
    """
    if not text.strip():
        raise InputError("the input is empty; expected events as JSON")
    try:
        document = _loads(text)
    except _TooDeep:
        raise InputError("the input is nested too deeply to be events") from None
    except json.JSONDecodeError as whole_error:
        lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
        if len(lines) < 2:
            raise InputError(
                f"the input is not JSON ({whole_error.msg} at line {whole_error.lineno} "
                f"column {whole_error.colno})"
            ) from None
        items: list[Any] = []
        for number, line in lines:
            try:
                items.append(_loads(line))
            except _TooDeep:
                raise InputError(f"line {number} is nested too deeply to be an event") from None
            except json.JSONDecodeError as line_error:
                raise InputError(
                    f"line {number} is not JSON ({line_error.msg} at column {line_error.colno}); "
                    "expected a kubectl List, a JSON array or one event per line"
                ) from None
        where = "line"
        numbers = [number for number, _ in lines]
    else:
        numbers = []
        if isinstance(document, dict) and "items" in document:
            items = document["items"]
            if not isinstance(items, list):
                raise InputError(f'"items" is {_kind_of(items)}, expected an array of events')
            where = "item"
        elif isinstance(document, list):
            items = document
            where = "item"
        elif _is_event(document):
            items = [document]
            where = "item"
        else:
            raise InputError(
                f"the input is {_kind_of(document)}"
                + (' without "items"' if isinstance(document, dict) else "")
                + "; expected a kubectl List, a JSON array of events or JSON lines"
            )
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            label = numbers[index] if numbers else index + 1
            raise InputError(f"{where} {label} is {_kind_of(item)}, expected an event object")
    if not items:
        raise InputError("the input holds no events (check the pod name in the field selector)")
    return items


def read_text_file(source: str) -> str:
    """The text of the file ``source`` (UTF-8, or UTF-16 with its byte-order mark);
    ``InputError`` saying what is wrong with it, in one line that names it."""
    try:
        data = Path(source).read_bytes()
    except FileNotFoundError:
        raise InputError(f"{source}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{source}: is a directory, expected a file") from None
    except OSError as error:
        raise InputError(f"{source}: cannot read ({error.strerror})") from None
    return _decode(data, source)


def _decode(data: bytes, name: str) -> str:
    try:
        if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            # what Windows PowerShell 5.1's `kubectl ... > events.json` writes
            return data.decode("utf-16")
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"{name}: not UTF-8 text (byte {error.start})") from None


def _read_input(source: str) -> str:
    if source == "-":
        return _decode(sys.stdin.buffer.read(), "standard input")
    return read_text_file(source)


def _load_rules_file(path: str) -> Any:
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"--rules {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"--rules {path}: cannot read ({error})") from None
    try:
        rules = _loads(text)
    except _TooDeep:
        raise InputError(f"--rules {path}: nested too deeply to be rules") from None
    except json.JSONDecodeError as error:
        raise InputError(
            f"--rules {path}: not JSON ({error.msg} at line {error.lineno} column {error.colno})"
        ) from None
    if not isinstance(rules, (list, dict)):
        raise InputError(
            f"--rules {path}: holds {_kind_of(rules)}, expected a list or dict of rules"
        )
    return rules


def _make_formatter(rules: Any) -> Any:
    # Imported here so `richprogress --version` and `--help` stay instant.
    from traitlets import TraitError

    from richprogress.wording.formatter import EventFormatter
    from richprogress.wording.rules import RuleError, load_rules

    if rules is None:
        return EventFormatter()
    try:
        load_rules(rules, option="--rules")  # checks every rule now, with an error naming the bad one
        return EventFormatter(rules=rules)
    # traitlets may wrap a RuleError in a TraitError; both name the rule.
    except (RuleError, TraitError) as error:
        raise InputError(_one_line(str(error))) from None


def _one_line(text: str) -> str:
    return " ".join(text.split())


# JSON escapes C0 controls itself, not DEL and C1 (U+0080-U+009F, e.g. CSI): event text
# comes from whoever wrote the pod spec and must not drive the reader's terminal.
_C1 = re.compile(r"[\x7f-\x9f]")


def _json_line(value: Any, ascii_only: bool) -> str:
    text = json.dumps(value, ensure_ascii=ascii_only)
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"


def _writes_utf8(stream: TextIO) -> bool:
    encoding = getattr(stream, "encoding", None) or "utf-8"
    return codecs.lookup(encoding).name.startswith("utf")


def _use_color(stream: TextIO, choice: str) -> bool:
    if choice != "auto":
        return choice == "always"
    # https://no-color.org: any non-empty NO_COLOR turns colors off.
    return stream.isatty() and not os.environ.get("NO_COLOR")


# -- what the output says -------------------------------------------------------------------

_THIS_PAGE = re.compile(r"\bthis page\b")


def _for_terminal(diagnosis: Diagnosis) -> Diagnosis:
    """The diagnosis as the command line says it: the hints were written for the spawn
    pages ("send them this page"); here there is only this output to send."""
    return Diagnosis(
        summary=_THIS_PAGE.sub("this output", diagnosis["summary"]),
        hint=_THIS_PAGE.sub("this output", diagnosis["hint"]) if diagnosis["hint"] else diagnosis["hint"],
        phase=diagnosis["phase"],
        record_id=diagnosis["record_id"],
    )


def _problem(records: Sequence[EventRecord]) -> bool:
    # A warning or error still stands at the end: a spawn whose FailedScheduling was
    # overcome by a scale-up went fine and needs no "What went wrong".
    return decisive_record(records) is not None and not ended_running(records)


def _started(records: Sequence[EventRecord]) -> bool:
    """Whether the events end with a container started after every problem. Other events
    with no failure in them (an init container started, then a pull) may be those of a
    spawn the hub's timeout cut off, which the diagnosis words as the failure page does."""
    return bool(records) and records[-1].get("reason") == "Started" and ended_running(records)


def no_failure(records: Sequence[EventRecord]) -> dict[str, Any]:
    """``--diagnose`` on events that end with a container started: say there is no
    failure, rather than a cause (without one, a diagnosis could only guess a timeout)."""
    if decisive_record(records) is not None:  # a problem that the later start overcame
        summary = "No failure that lasted in these events: the last one says the container started."
    else:
        summary = "No failure in these events: the last one says the container started."
    return {"summary": summary, "hint": None, "phase": records[-1].get("phase"), "record_id": None}


def _timeline(records: Sequence[EventRecord], args: argparse.Namespace, color: bool) -> str:
    diagnosis = _for_terminal(diagnose(records)) if _problem(records) else None
    return render_timeline_text(records, diagnosis=diagnosis, color=color, raw=args.raw)


def _by_pod(records: Sequence[EventRecord], found: Sequence[Pod | None]) -> dict[Pod | None, list[EventRecord]]:
    """Each pod's records (None: those of objects of no pod), in the order given."""
    grouped: dict[Pod | None, list[EventRecord]] = {}
    for record, pod in zip(records, found, strict=True):
        grouped.setdefault(pod, []).append(record)
    return grouped


def _mixed(records: Sequence[EventRecord], subjects: Sequence[Subject], found: Sequence[Pod | None],
           pods: Sequence[Pod], args: argparse.Namespace, color: bool) -> str:
    """The events of several pods: what the input mixes, then a section per pod (those
    with a problem first, each with its own diagnosis), then the objects of no pod."""
    grouped = _by_pod(records, found)
    sections = [(_problem(mine), f"Pod {pod_label(pod, pods)}", mine) for pod, mine in grouped.items() if pod]
    sections.sort(key=lambda section: not section[0])
    troubled = [title.removeprefix("Pod ") for problem, title, _ in sections if problem]
    rest = grouped.get(None, [])
    if rest:
        objects = list(dict.fromkeys(format_object(record) for record in rest))
        sections.append((_problem(rest), f"Objects of no pod: {name_list([display_line(o) for o in objects], 5)}", rest))
    lines = [
        mix_sentence(subjects, pods),
        ("Each pod's events follow in a section of their own, with a diagnosis when a problem stands at "
         "its end; --pod NAME explains one pod alone."),
        (f"A problem in {plural(len(troubled), 'pod')} of {len(pods)}: "
         f"{joined(troubled) if len(troubled) <= 30 else name_list(troubled)}." if troubled
         else "No pod has a problem."),
    ]
    if rest and sections[-1][0]:
        lines.append("A problem in the events of objects of no pod too: see the last section.")
    text = "\n".join(lines) + "\n"
    for problem, title, mine in sections:
        header = f"== {title} ({plural(len(mine), 'event')}{', a problem' if problem else ''}) =="
        text += "\n" + (f"\x1b[1m{header}\x1b[0m" if color else header) + "\n" + _timeline(mine, args, color)
    return text


def _chosen_header(pod: Pod, subjects: Sequence[Subject], total: int) -> str:
    """What ``--pod`` kept: how many events, and of which objects besides the pod."""
    objects = list(dict.fromkeys(s for s in subjects if s != ("Pod", *pod)))
    shown = [(belongs(s, pod), display_line(f"{s[0]}/{s[2]}", 300)) for s in objects]
    text = f"Pod {pod_label(pod, [pod])}: {len(subjects)} of the input's {plural(total, 'event')}"
    if any(tied for tied, _ in shown):
        text += ", with those of " + name_list([name for tied, name in shown if tied], 5)
    if any(not tied for tied, _ in shown):
        text += ", and of objects of no pod that may be its: " + name_list([n for tied, n in shown if not tied], 5)
    return text + "."


def explain(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``richprogress explain``; raises ``InputError`` on bad input."""
    if args.file is None:
        if sys.stdin is None or sys.stdin.isatty():
            # Waiting silently on a terminal looks like a hang.
            raise InputError(
                "no input: give a FILE, or pipe in `kubectl get events -o json` (see --help)"
            )
        args.file = "-"
    if args.log is not None and (args.json or args.diagnose):
        raise InputError("--log goes with the readable timeline, not with --json or --diagnose")
    if args.log == "-" and args.file == "-":
        raise InputError("--log - and the events cannot both come from standard input")
    rules = _load_rules_file(args.rules) if args.rules else None
    events = parse_events(_read_input(args.file))
    formatter = _make_formatter(rules)
    records: list[EventRecord] = [formatter.format_event(event) for event in events]
    subjects = [subject_of(event) for event in events]
    pods, found = owners(subjects)
    chosen: str | None = None
    total = len(events)
    if args.pod is not None:
        try:
            pod, keep = select(args.pod, subjects, found, pods)
        except PodChoiceError as error:
            raise InputError(str(error)) from None
        chosen = pod[1]
        events, records = [events[i] for i in keep], [records[i] for i in keep]
        subjects, found, pods = [subjects[i] for i in keep], [pod] * len(keep), [pod]
    elif len(pods) == 1:
        chosen = pods[0][1]
    # JSON keeps every name exact in any output encoding: \u escapes unless it is UTF-8.
    ascii_only = not _writes_utf8(out)
    if args.json:
        for record in records:
            out.write(_json_line(record, ascii_only))
        return 0
    order = arrival_order(events, records)
    records = [records[i] for i in order]
    subjects, found = [subjects[i] for i in order], [found[i] for i in order]
    pods = list(dict.fromkeys(pod for pod in found if pod is not None))  # by their first event
    if args.diagnose:
        if len(pods) > 1:
            troubled = [pod for pod, mine in _by_pod(records, found).items() if pod and _problem(mine)]
            groups = (("with a problem", troubled), ("others", [p for p in pods if p not in troubled]))
            names = "; ".join(f"{what}: {name_list([pod_label(p, pods) for p in group])}" for what, group in groups if group)
            raise InputError(
                f"the input mixes the events of {len(pods)} pods and --diagnose explains one: add --pod NAME ({names})"
            )
        diagnosis = no_failure(records) if _started(records) else dict(_for_terminal(diagnose(records)))
        out.write(_json_line({**diagnosis, "pod": chosen}, ascii_only))
        return 0
    color = _use_color(out, args.color)
    if len(pods) > 1:
        out.write(_mixed(records, subjects, found, pods, args, color))
        return 0
    if args.pod is not None:
        out.write(_chosen_header(pods[0], subjects, total) + "\n\n")
    out.write(_timeline(records, args, color))
    if args.log is not None:
        out.write(_log_text(args.log))
    return 0


def _log_text(source: str) -> str:
    """The last lines of a container's log file (``kubectl logs POD > FILE``), cleaned and
    redacted as the failure page shows them (``story.container_log``)."""
    text = _read_input(source)
    kept = container_log("", False, text)
    cut = ", earlier lines left out" if kept["truncated"] else ""
    heading = f"Last lines of {'standard input' if source == '-' else source}{cut} (secrets redacted)"
    # a well-known cause the lines name, as the failure page says it (whether the server
    # still ran is not in a file: read as for a server that stopped)
    cause = read_log_cause(kept["lines"])
    named = (
        [f"What the log names: {log_cause_sentence(cause.kind, cause.subject)}.", f"  {log_cause_hint(cause.kind, cause.subject)}"]
        if cause is not None
        else []
    )
    return "\n" + "\n".join([*named, *report_lines(kept, heading)]) + "\n"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="richprogress: readable JupyterHub spawn progress. "
        "This command explains Kubernetes events from the command line.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub = commands.add_parser(
        "explain",
        help="explain Kubernetes events (kubectl get events -o json) in plain words",
        description=EXPLAIN_DESCRIPTION,
        epilog=EXPLAIN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub.add_argument(
        "file",
        nargs="?",
        default=None,
        metavar="FILE",
        help="file holding the events; '-' (or nothing, when piped) reads standard input",
    )
    mode = sub.add_mutually_exclusive_group()
    mode.add_argument(
        "--json",
        action="store_true",
        help="print one EventRecord per input event, as JSON lines, in input order",
    )
    mode.add_argument(
        "--diagnose",
        action="store_true",
        help='print one JSON object {"summary", "hint", "phase", "record_id", "pod"}: why the '
        "spawn failed, what to do, the step it died in, and the pod it is about (null when "
        "no event is about a pod); the events of several pods need --pod",
    )
    sub.add_argument(
        "--pod",
        metavar="NAME",
        help="explain only pod NAME (or NAMESPACE/NAME): its events, those of objects named "
        "like it (an operator's resource) and of its claim as KubeSpawner names it (claim-X "
        "for jupyter-X), and those of objects that go with no pod of the input and are not "
        "named after another server (not jupyter-* or claim-*; a node, a claim of another "
        "name), as they may be this pod's",
    )
    sub.add_argument(
        "--raw",
        action="store_true",
        help="show each event's own Kubernetes message under its sentence (to check a "
        "sentence, or to paste into a search engine)",
    )
    sub.add_argument(
        "--rules",
        metavar="RULES.json",
        help="JSON file holding a list or dict of rules (kubespawner #910 format) that "
        "replaces the default rules",
    )
    sub.add_argument(
        "--log",
        metavar="LOGFILE",
        help="also show the last lines (at most 40, 8 KiB) of a container's log file, e.g. "
        "from `kubectl logs POD --previous`, with values that look like secrets (tokens, "
        "passwords, keys) redacted, as the failure page shows them",
    )
    sub.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="color the timeline by severity (default: auto, when writing to a terminal "
        "and NO_COLOR is not set)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``richprogress`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command != "explain":
        parser.print_help(sys.stderr)
        return 2
    # A Windows redirect (cp1252) or an old locale cannot encode every pod or image name:
    # show those characters as escapes rather than stop with a traceback.
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        return explain(args, sys.stdout)
    except InputError as error:
        print(f"{PROG} explain: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `richprogress explain ... | head` closed the pipe: not an error worth a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
