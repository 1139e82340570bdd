"""Redaction of a container's log lines: whatever text surrounds a secret in one of the
forms ``wording.redaction`` knows, the secret is gone and the rest of the line is kept;
and the kept form of a log (``story.container_log``) stays within its bounds.

Property tests (hypothesis) with hostile surroundings: HTML, quotes, control characters,
any Unicode. A form is found at a word start, so the surroundings end with a separator
before it (the documented limit: ``xJUPYTERHUB_API_TOKEN=...`` glued to a word is not an
assignment); a hex token needs none.
"""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from richprogress.story.container_log import (
    MAX_BYTES,
    MAX_LINE_CHARS,
    MAX_LINES,
    container_log,
    report_lines,
    stored_container_log,
)
from richprogress.wording.redaction import REDACTED, redact

#: what a secret is made of here: none of the characters that end a value (space,
#: quotes, comma, semicolon, ampersand), nor "[" (so "[redacted]" cannot help spell it)
SECRET_CHARS = string.ascii_letters + string.digits + "._~+/-"
secret = st.text(alphabet=SECRET_CHARS, min_size=8, max_size=48).filter(lambda s: any(c.isdigit() for c in s))
#: what ``secrets.token_hex(16)`` gives (a seed's random bytes, so shrinking gives another
#: random token, not "0000...", which is no token), in either case
hex_token = st.builds(
    lambda seed, upper: (lambda h: h.upper() if upper else h)(random.Random(seed).randbytes(16).hex()),
    st.integers(min_value=0, max_value=2**32),
    st.booleans(),
)
hostile = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)) | st.sampled_from(list("<>&\"'`;,= \t\\/:?@{}[]\n")),
    max_size=60,
)
separator = st.sampled_from([" ", "\t", "\n", "; ", ", ", "\"", "'", "(", "> ", "| "])

FORMS = [
    pytest.param("Authorization: Bearer {s}", id="bearer-header"),
    pytest.param("authorization: token {s}", id="token-header"),
    pytest.param("Authorization: Basic {s}", id="basic-header"),
    pytest.param("'Authorization': '{s}'", id="header-in-a-dict-repr"),
    pytest.param("GET /user/a/api/kernels?token={s}", id="query-token"),
    pytest.param("/hub/api?x=1&token={s}&y=2", id="query-token-middle"),
    pytest.param("JUPYTERHUB_API_TOKEN={s}", id="env-token"),
    pytest.param("export DB_PASSWORD={s}", id="env-password"),
    pytest.param('POSTGRES_PASSWORD="{s} more words"', id="env-quoted"),
    pytest.param("AWS_SECRET_ACCESS_KEY: {s}", id="yaml-key"),
    pytest.param("OAUTH_CLIENT_SECRET = {s}", id="env-spaced"),
    pytest.param('{{"api_token": "{s}", "user": "alice"}}', id="json-token"),
    pytest.param('{{"Password":"{s}"}}', id="json-password"),
    pytest.param("using token {s} for the hub", id="bare-token"),
    pytest.param("token: {s}", id="token-colon"),
    pytest.param("cloning https://bob:{s}@github.com/x/y.git", id="url-password"),
]


@pytest.mark.parametrize("form", FORMS)
@settings(max_examples=60, deadline=None)
@given(value=secret, before=hostile, sep=separator, after=hostile)
def test_a_secret_in_a_known_form_never_survives(form: str, value: str, before: str, sep: str, after: str) -> None:
    assume(value not in before and value not in after)
    # what surrounds the form is kept when it is no secret itself ("0000011234567A8B9Ca"
    # made up by hypothesis reads as a random token, and goes)
    assume(redact(before) == before)
    if "://" in form:
        value = value.replace("/", "%2F")  # a URL's user part holds no "/" (RFC 3986)
    line = before + sep + form.format(s=value) + " " + after
    said = redact(line)
    assert value not in said
    assert REDACTED in said
    # nothing is lost but secrets: what came before the form is kept
    assert said.startswith(before)
    assert said.count("\n") == line.count("\n")


@settings(max_examples=200, deadline=None)
@given(token=hex_token, before=hostile, after=hostile)
def test_a_hub_token_goes_whatever_touches_it(token: str, before: str, after: str) -> None:
    assume(token.lower() not in (before + after).lower())
    said = redact(before + token + after)
    assert token not in said and REDACTED in said


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200) | hostile)
def test_redaction_is_stable_and_keeps_the_lines(text: str) -> None:
    once = redact(text)
    assert redact(once) == once
    assert once.count("\n") == text.count("\n")


@pytest.mark.parametrize(
    "line",
    [
        "Traceback (most recent call last):",
        'KeyError: "spawner"',
        "monkey=3 donkey=4",
        "token expired, please log in again",
        "[I 2026-12-01 10:00:00.123 ServerApp] Jupyter Server 2.14.0 is running at:",
        "Error: ENOENT: no such file or directory, open '/home/jovyan/.jupyter/x.json'",
    ],
)
def test_ordinary_lines_stay_as_they_are(line: str) -> None:
    assert redact(line) == line


def test_the_kept_log_is_bounded_cleaned_and_redacted() -> None:
    text = "".join(f"line {i} \x1b[31mred\x1b[0m\x07 TOKEN={i}secret{i}\n" for i in range(200))
    kept = container_log("notebook", True, text)
    assert kept["container"] == "notebook" and kept["previous"] is True and kept["truncated"] is True
    assert len(kept["lines"]) == MAX_LINES
    assert kept["lines"][-1] == "line 199 red TOKEN=[redacted]"  # the last lines, not the first
    assert not any("secret" in line or "\x1b" in line or "\x07" in line for line in kept["lines"])
    wide = container_log("c", False, ("é" * 3000 + "\n") * 30)
    assert sum(len(line.encode()) + 1 for line in wide["lines"]) <= MAX_BYTES
    assert all(len(line) <= MAX_LINE_CHARS + 3 for line in wide["lines"]) and wide["truncated"]
    short = container_log("c", False, "one\ntwo\n")
    assert short == {"container": "c", "previous": False, "lines": ["one", "two"], "truncated": False,
                     "source": "log"}


def test_a_stored_log_is_checked_again_and_an_unreadable_one_is_none() -> None:
    assert stored_container_log(None) is None and stored_container_log({"lines": "x"}) is None
    edited = stored_container_log({"container": 7, "previous": "yes", "lines": ["a=1", 3, "X_TOKEN=abc123"]})
    assert edited == {"container": "7", "previous": False, "lines": ["a=1", "X_TOKEN=[redacted]"], "truncated": False,
                      "source": "log"}
    assert report_lines(edited)[1:] == ["  a=1", "  X_TOKEN=[redacted]"]
    assert report_lines(container_log("c", False, "")) == [
        "Last lines of the server's log (container c, its last run, secrets redacted):",
        "  (the log was empty)",
    ]
