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
from richprogress.model.event_order import resource_version_number
from richprogress.model.records import EventRecord
from richprogress.story.diagnosis import decisive_record, diagnose, ended_running
from richprogress.story.ordering import time_order
from richprogress.story.report import render_timeline_text

PROG = "richprogress"

EXPLAIN_DESCRIPTION = """\
Explain the events of a JupyterHub server's pod in plain words.

Reads the output of `kubectl get events -o json` (a List with "items"), a JSON array of
events, or JSON lines (one event per line), from FILE or standard input.

By default prints a readable timeline (UTC time, type, reason, object, sentence; repeats
folded) sorted by time, ending with what went wrong and what to do when a warning or error
was not overcome by later progress.
"""

EXPLAIN_EPILOG = """\
examples:
  kubectl get events -o json --field-selector involvedObject.name=jupyter-alice \\
      | richprogress explain
  richprogress explain events.json --diagnose
  richprogress explain events.json --raw      # each event's own message under its sentence
  richprogress explain events.json --json --rules my-rules.json

exit status: 0 on success, 2 on bad input (one line on stderr says what is wrong).
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


def _read_input(source: str) -> str:
    if source == "-":
        data = sys.stdin.buffer.read()
        name = "standard input"
    else:
        path = Path(source)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise InputError(f"{source}: no such file") from None
        except IsADirectoryError:
            raise InputError(f"{source}: is a directory, expected a file") from None
        except OSError as error:
            raise InputError(f"{source}: cannot read ({error.strerror})") from None
        name = source
    try:
        if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            # what Windows PowerShell 5.1's `kubectl ... > events.json` writes
            return data.decode("utf-16")
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"{name}: not UTF-8 text (byte {error.start})") from None


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


def explain(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``richprogress explain``; raises ``InputError`` on bad input."""
    if args.file is None:
        if sys.stdin is None or sys.stdin.isatty():
            # Waiting silently on a terminal looks like a hang.
            raise InputError(
                "no input: give a FILE, or pipe in `kubectl get events -o json` (see --help)"
            )
        args.file = "-"
    rules = _load_rules_file(args.rules) if args.rules else None
    events = parse_events(_read_input(args.file))
    formatter = _make_formatter(rules)
    records: list[EventRecord] = [formatter.format_event(event) for event in events]
    # JSON keeps every name exact in any output encoding: \u escapes unless it is UTF-8.
    ascii_only = not _writes_utf8(out)
    if args.json:
        for record in records:
            out.write(_json_line(record, ascii_only))
        return 0
    # kubectl lists events by name, not by time: read them in the order they happened
    # (within one second, in the API server's order of writes: ``event_order``)
    write_order = sorted(range(len(events)), key=lambda i: resource_version_number(events[i]))
    records = [records[i] for i in write_order]
    if args.diagnose:
        out.write(_json_line(dict(diagnose(records)), ascii_only))
        return 0
    ordered = time_order(records, first=True)
    # End with the diagnosis when a warning or error still stands at the end; a spawn whose
    # FailedScheduling was overcome by a scale-up went fine and needs no "What went wrong".
    problem = decisive_record(records) is not None and not ended_running(records)
    out.write(
        render_timeline_text(
            ordered,
            diagnosis=diagnose(records) if problem else None,
            color=_use_color(out, args.color),
            raw=args.raw,
        )
    )
    return 0


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
        help='print one JSON object {"summary", "hint", "phase", "record_id"}: why the '
        "spawn failed, what to do, and the step it died in",
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
