"""Secrets out of text that people will read: values that look like tokens, passwords or
keys are replaced with ``[redacted]`` before a container's log is kept or shown.

The reference is what the secret scanners maintain: gitleaks' default rule set
(``config/gitleaks.toml`` of gitleaks v8.30, July 2026) for the formats vendors give their
tokens, and detect-secrets 1.5 (Yelp) for the names a secret is assigned to (its
``KeywordDetector`` denylist) and for high-entropy strings. Their patterns are followed,
not copied: theirs find secrets in source files, one line at a time; these replace them
in a log, a whole text at once (a private key's body spans lines), in linear time.
detect-secrets itself is not a dependency: it scans a file's lines with every plugin
(tens of patterns a line, plus YAML and requests), tells where secrets are rather than
replacing them, and would cost the hub far more than this module on every log it reads.

What goes, in this order (each rule is tried only when a cheap substring check says the
text may hold its form, so an ordinary line costs a few ``in`` checks and two scans):

- private keys: every line between ``-----BEGIN ... PRIVATE KEY-----`` and its
  ``-----END`` line (to the end of the text when the end line was cut off);
- tokens in a vendor's format, wherever they stand (gitleaks' rules): GitHub (``ghp_``,
  ``gho_``, ``ghu_``, ``ghs_``, ``ghr_``, ``github_pat_``), GitLab (``glpat-`` ...), JWTs,
  Slack tokens (``xoxb-`` ...) and webhook URLs, AWS access key ids, Google API keys
  (``AIza``), npm, PyPI, OpenAI and Anthropic (``sk-``), Hugging Face, Stripe, SendGrid,
  DigitalOcean, Terraform Cloud, Azure AD client secrets, OpenShift (``sha256~``), age
  secret keys, a private conda channel's token (``anaconda.org/t/<token>/``);
- the credentials of a URL: ``https://user:password@host`` (a password holding ``/`` or
  ``@`` too), and a user part that looks like a token (``https://<token>@github.com``);
- ``Authorization:`` headers (``Bearer``, ``token``, ``Basic`` or any scheme): the value
  (with no scheme, a value of letters only is a word of prose: containerd's "may require
  authorization: server message");
- ``Cookie:`` and ``Set-Cookie:`` headers: every cookie's value, not its attributes
  (``Path``, ``HttpOnly`` ...) nor a value of digits; a client's password in code
  (``auth=("user", "password")``, ``basic_auth=(...)``, ``HTTPBasicAuth(...)``); mysql's
  ``-pPASSWORD``; curl's, wget's and HTTPie's ``-u user:PASSWORD``;
- an OAuth 2 form (one holding ``grant_type=``, ``redirect_uri=`` or ``response_type=``):
  its ``code``, ``device_code``, ``code_verifier`` and ``assertion`` values;
- a Kubernetes Secret's manifest (``kind: Secret``): every value under ``data:`` and
  ``stringData:``, whatever its name (``kubectl describe``'s ``64 bytes`` is a size);
- JSON members whose name holds ``token``, ``password``, ``secret`` or ``key``: the value;
- assignments (``=``, ``:``, ``:=``, ``=>``; spaces, no-break spaces or zero-width
  characters around them; quoted or not) and command-line flags (``--password X``,
  ``--api-key=X``) whose name ends in ``token``, ``password``, ``passwd``, ``passphrase``,
  ``secret``, ``pass`` or ``pwd`` (as a word of its own), ``sig`` or ``signature`` (signed
  URLs), or ``key`` as a word of its own or after ``api``, ``access``, ``secret``,
  ``private``, ``client`` ... (``apikey=``; ``monkey=3`` is no assignment; a ``key`` of
  other words, ``primary_key=id``, goes only when its value looks like a secret): the
  value; after ``:`` an unquoted plain word followed by more words is prose and stays
  (``Missing API key: set the variable``), and so is a flag's word of lower case before
  more words (``instead of --password to avoid``); a value in parentheses (``(set via
  existingSecret)``), code that reads the secret (``os.environ["KEY"]``), a key file's
  path after a name that may not be a secret's (``SSL_KEY=/etc/ssl/hub.key``), a public
  key (``public key: age1...``) and Helm's ``existingSecret`` (the name of a Secret) stay.
  A value alone on the line after its name (``password:`` then ``hunter2!``) goes too,
  and ``token <value>``, ``password <value>``, ``secret <value>`` when the value has a
  digit and 8 characters or more, and ``the password is <value>`` (``was``, ``is:``)
  when it has a digit or a symbol;
- runs that may be random: hexadecimal runs of 32 or more and base64 runs of 20 or more
  that read as random rather than as words or names, minus what names public content
  (an image's digest, a checksum, an ETag, a commit id, a container's id, a request's id,
  a certificate's body, base64 of readable text that holds no secret):
  ``wording.random_runs``.

Measured on ``tests/wording/redaction_corpus/`` (fake secrets in real formats and
ordinary log lines, with a held-out part): see ``tests/wording/test_redaction_corpus.py``.

Still pattern-based, so it can miss a secret it has no pattern for (a short password on
a line of its own, in a sentence); that is why the container log is shown only to the
server's owner and admins by default (``show_container_log``).

Pure: no hub, no cluster. Linear-time: no nested repeats, every pattern that starts on a
run of characters starts only at the run's first one (a look-behind), and the URL and
assignment scans move forward only; so hostile text costs about its length.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from richprogress.wording.random_runs import Span, as_bytes, hex_runs, random_runs, token_like_run

REDACTED = "[redacted]"

# --- private keys -----------------------------------------------------------------------

_KEY_BEGIN = re.compile(r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----")
_KEY_END = "-----END"


def _private_keys(text: str) -> str:
    """Each line of a private key's body replaced, the BEGIN and END lines kept (so the
    reader knows what was there, and the text keeps its lines)."""
    out: list[str] = []
    done = 0
    for begin in _KEY_BEGIN.finditer(text):
        if begin.start() < done:
            continue  # inside a body already replaced
        body_start = text.find("\n", begin.end())
        if body_start < 0:
            break
        end = text.find(_KEY_END, body_start)
        body_end = text.rfind("\n", body_start, end) if end >= 0 else len(text)
        if body_end <= body_start:
            continue
        body = text[body_start + 1 : body_end].split("\n")
        out += [text[done : body_start + 1], "\n".join(_redacted_line(line) for line in body)]
        done = body_end
    return "".join(out) + text[done:] if out else text


def _redacted_line(line: str) -> str:
    """A key's body line as ``[redacted]``, its indent kept (a key in YAML)."""
    body = line.lstrip()
    return line[: len(line) - len(body)] + REDACTED if body else line


# --- tokens in a vendor's format (gitleaks' rules) --------------------------------------

#: a token's run starts at no word character: the look-behind keeps each pattern from
#: being tried again at every character of a long run
_START = r"(?<![A-Za-z0-9_-])"
_END = r"(?![A-Za-z0-9_-])"

#: (substrings one of which the text must hold, pattern of the whole token)
_VENDOR_TOKENS: list[tuple[tuple[str, ...], re.Pattern[str]]] = [
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), re.compile(_START + r"gh[pousr]_[A-Za-z0-9]{30,255}")),
    (("github_pat_",), re.compile(_START + r"github_pat_\w{40,255}")),
    (("gl",), re.compile(_START + r"gl(?:pat|ptt|dt|rt|cbt|imt|agent|soat|ffct|ft|oas)-[\w-]{20,300}")),
    (("ey",), re.compile(_START + r"ey[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*")),
    (("xox",), re.compile(_START + r"xox[abeoprs]-[A-Za-z0-9-]{10,300}")),
    (("xapp-",), re.compile(_START + r"xapp-\d-[A-Za-z0-9-]{10,300}")),
    (
        ("hooks.slack.com",),
        re.compile(r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,300}"),
    ),
    (("discord",), re.compile(r"(?:https?://)?(?:\w+\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{20,300}")),
    (
        ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
        re.compile(r"(?<![A-Za-z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?![A-Za-z0-9])"),
    ),
    (("AIza",), re.compile(_START + r"AIza[\w-]{30,60}")),
    (("ATATT3",), re.compile(_START + r"ATATT3[A-Za-z0-9_=-]{150,300}")),
    (("npm_",), re.compile(_START + r"npm_[A-Za-z0-9]{30,60}")),
    (("pypi-",), re.compile(_START + r"pypi-AgEIcHlwaS5vcmc[\w-]{50,1000}")),
    # OpenAI (sk-, sk-proj-, ...) and Anthropic (sk-ant-api03-): with a digit, so a
    # word such as "sk-learn" is no token
    (("sk-",), re.compile(_START + r"sk-(?=[\w-]*\d)[\w-]{20,300}")),
    (("hf_", "api_org_"), re.compile(_START + r"(?:hf|api_org)_[A-Za-z0-9]{30,60}")),
    (("_live_", "_test_", "_prod_"), re.compile(_START + r"(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,99}")),
    (("SG.",), re.compile(_START + r"SG\.[\w-]{16,32}\.[\w-]{30,50}")),
    (("_v1_",), re.compile(_START + r"do[por]_v1_[a-f0-9]{64}")),
    (("atlasv1",), re.compile(_START + r"[A-Za-z0-9]{14}\.atlasv1\.[\w=-]{60,70}")),
    (("Q~",), re.compile(r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}")),
    (("sha256~",), re.compile(r"sha256~[\w-]{43}")),
    (("AGE-SECRET-KEY-",), re.compile(r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}")),
    # a private conda channel's token stands in its URL's path: .../t/<token>/channel
    (("anaconda",), re.compile(r"(?<=anaconda\.org/t/)[\w-]{8,200}|(?<=anaconda\.com/t/)[\w-]{8,200}")),
]


def _vendor_tokens(text: str) -> str:
    for words, pattern in _VENDOR_TOKENS:
        if any(word in text for word in words):
            text = pattern.sub(REDACTED, text)
    return text


# --- a URL's credentials ----------------------------------------------------------------

#: where a URL ends: a space, a quote, an angle bracket (a log line's delimiters)
_URL_END = re.compile(r"[\s\"'<>`]")
#: what follows the "@" that ends the user part: a host, a port, then the path or the end
_HOST_AFTER_AT = re.compile(r"[A-Za-z0-9._-]+(?::\d{1,5})?(?=[/?#),;\]]|$)")
_PORT = re.compile(r"\d{1,5}(?:[/?#]|$)")


def _url_credentials(text: str) -> str:
    """The password of each ``scheme://user:password@host`` (the user part's last "@"
    before a host ends it, so a password may hold "/" and "@"), and a user part with no
    password that looks like a token."""
    out: list[str] = []
    done = 0
    at = text.find("://")
    while at >= 0:
        start = at + 3
        found = _URL_END.search(text, start)
        end = found.start() if found else len(text)
        url = text[start:end]
        cut = _userinfo_secret(url)
        if cut is not None:
            out += [text[done : start + cut[0]], REDACTED]
            done = start + cut[1]
        at = text.find("://", max(end, start))
    return "".join(out) + text[done:] if out else text


def _userinfo_secret(url: str) -> tuple[int, int] | None:
    """Where the secret of ``url``'s user part (after ``://``) is, or None."""
    if "@" not in url:
        return None
    ends = [
        at
        for at in range(len(url))
        if url[at] == "@" and _HOST_AFTER_AT.match(url, at + 1)
        # pip's git+https://host/repo.git@v1.4.2 names a revision, not a host
        and not url.endswith(".git", 0, at)
    ]
    if not ends:
        return None
    user_end = ends[-1]
    colon = url.find(":", 0, user_end)
    if colon >= 0 and "/" not in url[:colon] and "@" not in url[:colon]:
        password = url[colon + 1 : user_end]
        if password and password != REDACTED and not _PORT.match(password):
            return colon + 1, user_end
        return None
    user = url[:user_end]
    if "/" not in user and user != REDACTED and _token_like(user):
        return 0, user_end
    return None


# --- headers and JSON members -----------------------------------------------------------

# Authorization: Bearer xyz / Authorization: token xyz / Authorization: Basic xyz
_AUTHORIZATION = re.compile(
    r"(?i)(\bauthorization\b[\"']?[ \t]*[:=][ \t]*[\"']?)(?:(bearer|token|basic|digest|negotiate)[ \t]+"
    # JupyterHub's own "(Authorization: token [secret])" says where a token goes
    r"(?!\[(?:secret|redacted|hidden|token)\]|<[\w .-]*>|\*+|\$\{?\w)"
    # with no scheme, a value with no character but letters is a word of prose
    # (containerd's "may require authorization: server message: ...")
    r"|(?=[^\s\"',;]*[^A-Za-z\s\"',;]))([^\s\"',;]+)"
)
_DOUBLE_SPACE = re.compile(r"(?i)(authorization\b[\"']?[ \t]*[:=][ \t]*[\"']?) \[redacted\]")
# "api_token": "..." (JSON, any member whose name names a secret)
_JSON_MEMBER = re.compile(
    r"(?i)(\"[^\"\n]{0,80}?(?:token|password|passwd|secret|key)[^\"\n]{0,80}?\"[ \t]*:[ \t]*\")(?:[^\"\\\n]|\\.)*(\")"
)

# --- cookies, a client's credentials in code, mysql's -p ---------------------------------

_COOKIE_HEADER = re.compile(r"(?im)^(?:.*?\b)?(?:set-)?cookie[\"']?[ \t]*:[ \t]*(.*)$")
#: a cookie's attributes (RFC 6265): they describe it, they are no secret
_COOKIE_ATTRIBUTES = frozenset(("path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "version"))
_COOKIE_PAIR = re.compile(r"([^=;\s]+)=([^;\s]*)")


def _cookies(text: str) -> str:
    """Every value of a ``Cookie:`` or ``Set-Cookie:`` header (a cookie is a credential:
    a session, a login), but its attributes and values of digits only (a time)."""

    def header(found: re.Match[str]) -> str:
        start = found.start(1) - found.start()
        line = found.group()

        def pair(cookie: re.Match[str]) -> str:
            name, value = cookie.groups()
            if name.lower() in _COOKIE_ATTRIBUTES or not value or value.isdigit() or _PLACEHOLDER.fullmatch(value):
                return cookie.group()
            return f"{name}={REDACTED}"

        return line[:start] + _COOKIE_PAIR.sub(pair, line[start:])

    return _COOKIE_HEADER.sub(header, text)


#: a password handed to a client in code: requests' ``auth=("user", "password")``, an
#: ``HTTPBasicAuth("user", "password")``, psycopg's or a driver's ``password=`` is an
#: assignment already
_AUTH_PAIR = re.compile(
    r"(?i)((?:\b|(?<=_))(?:auth[ \t]*=[ \t]*|HTTPBasicAuth|HTTPDigestAuth|BasicAuth)[ \t]*\([ \t]*([\"'])[^\"'\n]*\2[ \t]*,[ \t]*([\"']))"
    r"([^\"'\n]+)(\3)"
)
#: mysql's and MariaDB's clients take the password glued to ``-p``: ``mysql -u root -pS3cr3t``
_MYSQL_COMMAND = re.compile(r"(?i)\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b")
_GLUED_P = re.compile(r"([ \t]-p)([^\s\"']+)")


#: curl's, wget's and HTTPie's credentials on their command line: ``-u user:password``
#: (curl's ``--user``, ``--proxy-user``; HTTPie's ``-a``/``--auth``); ``docker run -u
#: 1000:100`` is no such command
_HTTP_COMMAND = re.compile(r"(?i)\b(?:curl|wget|https?|httpie)\b")
_USER_FLAG = re.compile(r"(?<![\w-])(?:-u|--user|--proxy-user|-U|-a|--auth)(?:[ \t]+|=)[\"']?([^\s:\"']+):([^\s\"']+)")


def _mysql_passwords(text: str) -> str:
    """The ``-pPASSWORD`` after a mysql client's name, on its line."""
    return _command_flags(text, _MYSQL_COMMAND, _GLUED_P)


def _http_users(text: str) -> str:
    """The password of ``-u user:password`` after curl's (wget's, HTTPie's) name."""
    return _command_flags(text, _HTTP_COMMAND, _USER_FLAG)


def _command_flags(text: str, command_name: re.Pattern[str], flag: re.Pattern[str]) -> str:
    """``flag``'s second group redacted where it follows ``command_name`` on its line
    (each line read once)."""
    out: list[str] = []
    done = 0  # the end of the last password redacted
    read = 0  # the end of the last line read
    for command in command_name.finditer(text):
        if command.start() < read:
            continue  # on a line already read
        line_end = text.find("\n", command.end())
        read = len(text) if line_end < 0 else line_end
        for found in flag.finditer(text, command.end(), read):
            out += [text[done : found.start(2)], REDACTED]
            done = found.end(2)
    return "".join(out) + text[done:] if out else text


#: an OAuth 2 request's form (RFC 6749): its authorization code, device code, PKCE
#: verifier or client assertion is a credential, whatever the form is logged in
_OAUTH_FORM = ("grant_type=", "redirect_uri=", "response_type=")
_OAUTH_CODE = re.compile(r"(?<![\w.-])((?:device_)?code|code_verifier|(?:client_)?assertion)=(?![&\s]|\[\w+\])([^&\s\"']+)")

#: a Kubernetes Secret's manifest (``kubectl get secret -o yaml``): every value under its
#: ``data:`` (base64) and ``stringData:`` is the secret itself, whatever its name
_SECRET_KIND = re.compile(r"(?m)^[ \t]*kind:[ \t]*[\"']?Secret[\"']?[ \t]*$")
_DATA_ENTRY = re.compile(r"([^\s:#][^:\n]*:[ \t]+)(?![|>][-+]?[ \t]*$)\S.*")


def _secret_manifests(text: str) -> str:
    """The values under ``data:`` and ``stringData:`` of a Secret's manifest."""
    if not _SECRET_KIND.search(text):
        return text
    lines = text.split("\n")
    block_indent: int | None = None
    for i, line in enumerate(lines):
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if block_indent is not None and stripped and indent > block_indent:
            entry = _DATA_ENTRY.fullmatch(stripped)
            if entry:
                lines[i] = line[:indent] + entry.group(1) + REDACTED
            continue
        block_indent = indent if stripped.rstrip() in ("data:", "stringData:") else None
    return "\n".join(lines)

# --- assignments and flags --------------------------------------------------------------

#: the words a secret's name ends in (lowercase): where each stands, the name's end is
#: looked for, so the text is not scanned by a pattern at every position
_NAME_WORDS = ("token", "pass", "pwd", "secret", "key", "sig")
#: the longer names that start with those words
_LONGER = {"pass": ("password", "passwd", "passphrase", "pass"), "sig": ("signature", "sig")}
#: the words before ``key`` that make it a secret's name (detect-secrets' denylist and
#: gitleaks' generic rule): ``apikey``, ``ACCESS_KEY``, ``privateKey``
_KEY_QUALIFIERS = (
    "api", "access", "secret", "private", "priv", "auth", "app", "client", "account",
    "service", "crypt", "encryption", "signing", "master", "license", "session", "db",
    "database", "hmac", "shared", "subscription", "storage", "sas", "secure", "cookie",
)  # fmt: skip
#: invisible characters a copied line can hold between a name and its "=" (no-break
#: space, zero-width space and joiners, word joiner, byte order mark)
_INVISIBLE = "\u00a0\u200b\u200c\u200d\u2060\ufeff"
_SEPARATOR = re.compile(rf"[\"'\]]{{0,2}}[ \t{_INVISIBLE}]*(:=|=>|=(?!=)|:(?!//))[ \t{_INVISIBLE}]*")
_VALUE = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;&]+")
_FLAG_VALUE = re.compile(r"[ \t]+(?!-)(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;&]+)")
#: ``token <value>``: a value with a digit, of 8 characters or more, so "token expired"
#: and "password authentication failed" stay
_WORD_VALUE = re.compile(r"[ \t]+(?=[A-Za-z0-9._~+/=-]*[0-9])([A-Za-z0-9._~+/=-]{8,})")
#: ``password is X``, ``token was: X`` (a sentence saying the value): a value of 6
#: characters or more with a digit or a symbol, so "the password is invalid" stays
_IS_VALUE = re.compile(r"[ \t]+(?:is|was)[ \t]*:?[ \t]+(?=\S*[0-9!#$%&*@^~?])(\S{6,})")
#: a word of lower case after a value: the value was a word of a sentence
_PROSE_AFTER = re.compile(r"[ \t]+[a-z]+\b")
#: a value alone on the next line, after ``password:`` ending its line
_NEXT_LINE = re.compile(r"[ \t|>]*\n[ \t]*([^\s]{4,200})[ \t]*(?=\n|$)")
#: what stands for a value, and is none (detect-secrets keeps a list of them too): a
#: format's field, a variable, a reference, a mask, a value already redacted elsewhere
_PLACEHOLDER = re.compile(
    r"(?i)%[-#0-9.]*[a-z]|%\([\w.]*\)[a-z]|\{[\w.:!]*\}|\$\{?[\w.:-]+\}?|\{\{[^}]*\}\}|<[\w .-]*>?"
    r"|\*+|x{3,}|\.{3}|redacted|\[redacted\]|\[secret\]|\[hidden\]|none|null|nil|true|false|value|string|str"
)
#: a value that is code reading the secret from elsewhere: a call or a subscript that
#: closes (``getpass.getpass()``, ``env[KEY]``) or stops where a quoted argument starts
#: (``os.environ["KEY"]`` is read up to its quote); ``Dy(Hp!xk`` is a password
_CODE = re.compile(r"[A-Za-z_][\w.]*(?:[(\[].*[)\]]|[(\[]+)")
_PATH = re.compile(r"(?:~|\.{1,2})?/[\w.-]+/[\w./-]*")
#: the words before ``key`` that make it a public key or its id
_PUBLIC_KEY_WORDS = ("public ", "rsa ", "dsa ", "ecdsa ", "ed25519 ", "gpg ", "pgp ", "host ")
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-")


def _assignments(text: str) -> str:
    """``text`` with the value of each assignment or flag whose name names a secret
    redacted (see the module's docstring)."""
    low = text.lower()
    hits = sorted((at, word) for word in _NAME_WORDS for at in _positions(low, word))
    out: list[str] = []
    done = 0  # the end of the last value redacted
    read = 0  # the end of the last value read, redacted or kept
    for at, word in hits:
        if at < read:
            continue  # a name inside a value already read is not read again
        span, read = _value_span(text, low, at, word)
        if span is not None:
            out += [text[done : span[0]], REDACTED]
            done = span[1]
    return "".join(out) + text[done:] if out else text




def _value_span(text: str, low: str, at: int, word: str) -> tuple[Span | None, int]:
    """Where the secret value assigned to the name ending with ``word`` at ``at`` is (or
    None), and where the reading stopped (a value kept is not read again for names)."""
    word = next((longer for longer in _LONGER.get(word, (word,)) if low.startswith(longer, at)), word)
    end = at + len(word)
    if end < len(low) and (low[end].isalnum() or low[end] == "_"):
        return None, at  # the name goes on: token_file, tokenRequired, passthrough
    name_start = at
    while name_start > 0 and at - name_start < 80 and low[name_start - 1] in _NAME_CHARS:
        name_start -= 1
    name = low[name_start:end]
    strength = _strength(name, word)
    if strength is None or (word == "key" and low.endswith(_PUBLIC_KEY_WORDS, 0, name_start)):
        return None, at  # "public key: age1...", gpg's "using RSA key 9143...": public
    separator = _SEPARATOR.match(text, end)
    if separator is None:
        if name_start > 0 and low[name_start - 1] == "/":
            return None, at  # "POST /protocol/openid-connect/token HTTP/1.1": a path
        if name.startswith("-"):
            return _checked(_FLAG_VALUE.match(text, end), strength, at)
        if name == word and word in ("token", "password", "passwd", "secret", "key"):
            return _checked(_IS_VALUE.match(text, end) or _WORD_VALUE.match(text, end), strength, at)
        return None, at
    value = _VALUE.match(text, separator.end())
    if value is None or value.group().strip("\"'").startswith(REDACTED):
        next_line = _NEXT_LINE.match(text, separator.end())
        if next_line and _next_line_secret(next_line.group(1)):
            return (next_line.start(1), next_line.end(1)), next_line.end(1)
        return None, at
    raw, value_end = value.group(), value.end()
    if raw.startswith("(") or _CODE.fullmatch(raw):
        return None, value_end  # "(set via existingSecret)", os.environ["DJANGO_SECRET_KEY"]
    closing = raw[-1:]
    if closing in (")", "]", "}") and "([{"[")]}".index(closing)] not in raw:
        # the value closes the bracket the name stands in: "(token=abc)", "{'password': None}"
        raw = raw.rstrip(")]}")
        value_end = value.start() + len(raw)
        if not raw:
            return None, at
    kept = None, value_end
    if raw.isdigit() and text.startswith(" bytes", value_end):
        return kept  # kubectl describe secret: "auth_token:  64 bytes", its size
    if _PLACEHOLDER.fullmatch(raw.strip("\"'")):
        return kept  # "token: %w", "password=${DB_PASSWORD}", "key=<your key>"
    if raw[0] in "\"'":
        return ((value.start() + 1, value_end - 1), value_end) if len(raw) > 2 else kept
    if strength == "weak" and _PATH.fullmatch(raw):
        return kept  # a key file's path (``SSL_KEY=/etc/ssl/private/hub.key``), not the key
    if separator.group(1) == ":" and raw.isalpha() and not _at_line_end(text, value_end):
        return kept  # "Missing API key: set the variable": prose, not a YAML value
    if strength == "weak" and not _secret_value(raw):
        return kept
    return (value.start(), value_end), value_end


def _strength(name: str, word: str) -> str | None:
    """``"strong"`` when ``name`` (lowercase, up to ``word``) names a secret, ``"weak"``
    when only a secret-looking value makes it one, None when it is no secret's name."""
    head = name[: -len(word)]
    alone = head == "" or head[-1] in "_.-"
    if word == "secret" and head.rstrip("_.-").endswith("existing"):
        return None  # Helm charts' existingSecret names a Kubernetes Secret, not its content
    if word in ("token", "password", "passwd", "passphrase", "secret"):
        return "strong"
    if word in ("pass", "pwd", "sig"):
        if not alone:
            return None
        # the shell's PWD and OLDPWD hold a folder; ODBC's Pwd= a password
        return "weak" if name.lstrip("-") in ("pwd", "oldpwd") else "strong"
    if word == "signature":
        return "strong" if alone else None
    # key
    qualifier = head.rstrip("_.-")
    if qualifier.endswith("public"):
        return None  # a public key is public: publicKey, PUBLIC_KEY
    if any(qualifier.endswith(word) for word in _KEY_QUALIFIERS):
        return "strong"
    return "weak" if alone else None


def _checked(found: re.Match[str] | None, strength: str, at: int) -> tuple[Span | None, int]:
    """The value of a flag (``--password X``) or after a name's word (``token X``)."""
    if found is None:
        return None, at
    raw = found.group(1)
    if raw.strip("\"'").startswith(REDACTED) or (strength == "weak" and not _secret_value(raw)):
        return None, found.end(1)
    if raw.isalpha() and raw.islower() and _PROSE_AFTER.match(found.string, found.end(1)):
        return None, found.end(1)  # "instead of --password to avoid leaking it": prose
    if raw[0] in "\"'":
        return ((found.start(1) + 1, found.end(1) - 1) if len(raw) > 2 else None), found.end(1)
    return found.span(1), found.end(1)


def _secret_value(value: str) -> bool:
    """A value that is a secret even after a name that may not be one (``sort_key=id``
    is no secret, ``cache_key=8fa3...`` may be)."""
    if len(value) >= 8 and any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
        return True
    return _token_like(value)


def _token_like(word: str) -> bool:
    """Whether ``word`` holds a vendor's token, a hexadecimal run or a random-looking run:
    what ``redact`` takes out without the rules that read names (so no rule calls back into
    ``redact``, and a hostile ``a_key=a_key=...`` costs its length once)."""
    if _vendor_tokens(word) != word:
        return True
    return token_like_run(word)


def _next_line_secret(value: str) -> bool:
    """A line's only word, after a line that names a secret and ends: a password has a
    digit or a symbol, a word such as "Traceback" has none."""
    if value.startswith(REDACTED) or value.endswith(":") or value.startswith(("#", "-----")):
        return False
    return any(not c.isalpha() for c in value)


def _at_line_end(text: str, at: int) -> bool:
    line_end = text.find("\n", at)
    return not text[at : line_end if line_end >= 0 else len(text)].strip()


def _positions(low: str, word: str) -> list[int]:
    found: list[int] = []
    at = low.find(word)
    while at >= 0:
        found.append(at)
        at = low.find(word, at + 1)
    return found


def _replace_runs(text: str, spans: list[Span]) -> str:
    if not spans:
        return text
    out: list[str] = []
    done = 0
    for start, end in spans:
        out += [text[done:start], REDACTED]
        done = end
    return "".join(out) + text[done:]


# --- the whole ----------------------------------------------------------------------------

#: (substrings one of which the lowercase text must hold, the rule)
_RULES: list[tuple[tuple[str, ...], Callable[[str], str]]] = [
    (("-----begin",), _private_keys),
    (("://",), _url_credentials),
    (("authorization",), lambda text: _AUTHORIZATION.sub(r"\1\2 " + REDACTED, text)),
    (("cookie",), _cookies),
    (("auth",), lambda text: _AUTH_PAIR.sub(r"\1" + REDACTED + r"\5", text)),
    (("mysql", "mariadb"), _mysql_passwords),
    (("curl", "wget", "http"), _http_users),
    (_OAUTH_FORM, lambda text: _OAUTH_CODE.sub(r"\1=" + REDACTED, text)),
    (("secret",), _secret_manifests),
    (("token", "pass", "secret", "key"), lambda text: _JSON_MEMBER.sub(r"\1" + REDACTED + r"\2", text)),
    (_NAME_WORDS, _assignments),
]


def redact(text: str) -> str:
    """``text`` with every value that looks like a secret replaced by ``[redacted]``; a
    text of many lines at once as well (a private key's body, a value on the line after
    its name), keeping its line ends."""
    text = _by_rules(text)
    text = _replace_runs(text, hex_runs(text, as_bytes(text)))
    text = _replace_runs(text, random_runs(text, as_bytes(text), holds_secret=_holds_secret))
    if "authorization" not in text.lower():
        return text
    # "Authorization: [redacted]" when the header had no scheme (the group was empty)
    return _DOUBLE_SPACE.sub(r"\1" + REDACTED, text)


def _by_rules(text: str) -> str:
    """``text`` after the vendors' formats and the rules that read names and structure."""
    text = _vendor_tokens(text)
    low = text.lower()
    for words, rule in _RULES:
        if any(word in low for word in words):
            text = rule(text)
    return text


def _holds_secret(decoded: str) -> bool:
    """Whether text decoded from a base64 run holds a secret (then the run goes)."""
    return _by_rules(decoded) != decoded or token_like_run(decoded)


def redact_lines(lines: list[str]) -> list[str]:
    """Each line redacted on its own (a secret never spans lines in a log)."""
    return [redact(line) for line in lines]
