"""What counts as a secret in a text: where each one is, and of what kind.

The detectors are Yelp's ``detect-secrets`` (a maintained library made for this: its provider
plugins' own regular expressions and its keyword plugin's assignment patterns, with its
false-positive filters), plus the few patterns our sources carry that it lacks: GitHub's
fine-grained tokens, Anthropic, OpenAI project and service keys, Cohere and Vercel tokens in
context, Slack app tokens, Google API keys, passwords in any URL (its own stops at ``!``,
``$``, ``&`` …), whole PEM blocks (it flags the ``BEGIN`` line only), AWS secret keys without
quotes, bearer tokens and unquoted ``.env``/YAML assignments to a secret's name (its keyword
plugin knows ``password`` and ``secret`` but not ``token``).

No entropy-only guess is made: its high-entropy plugins would take commit SHAs, UUIDs, content
hashes and base64 fixtures, which engineering history is full of. A value is a secret by its
shape (a provider's prefix) or by the name it is assigned to.

Measured on a labelled set (``python -m bench.secrets_detection``, docs/benchmarks.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = ["Finding", "find_secrets"]


@dataclass(frozen=True, slots=True)
class Finding:
    """A secret's place in a text (``text[start:end]``) and its kind, a short slug such as
    ``github-token`` (the placeholder says it; the value is never kept)."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class _Pattern:
    """One regular expression of a kind. ``group``: the group that is the secret (0: the whole
    match); ``hints``: lower-case substrings one of which any match contains (the pattern runs only
    on texts holding one: most texts hold none); ``check``: whether a matched value is a secret."""

    kind: str
    regex: re.Pattern[str]
    group: int = 0
    hints: tuple[str, ...] = ()
    check: Callable[[str], bool] | None = None
    # A group shorter than this is a prefix the library captured (GitHub's ``(ghp|gho|…)_``), not
    # the secret: the whole match is.
    min_group: int = 0
    # An assignment's name (group number; 0: the word the match starts with), checked by
    # ``_credential_ok``; None: not an assignment.
    name_group: int | None = None


# detect-secrets' provider plugins (module, class) and the kind each one's matches are. Left out:
# the high-entropy plugins (entropy-only guesses), the public-IP plugin (an address is not a
# credential), the keyword plugin (used below, with its filters).
_LIBRARY = (
    ("aws", "AWSKeyDetector", ("aws-access-key-id", "aws-secret-access-key")),
    ("artifactory", "ArtifactoryDetector", ("artifactory-token",)),
    ("azure_storage_key", "AzureStorageKeyDetector", ("azure-storage-key",)),
    ("basic_auth", "BasicAuthDetector", ("url-password",)),
    ("cloudant", "CloudantDetector", ("cloudant-credentials",)),
    ("discord", "DiscordBotTokenDetector", ("discord-token",)),
    ("github_token", "GitHubTokenDetector", ("github-token",)),
    ("gitlab_token", "GitLabTokenDetector", ("gitlab-token",)),
    ("ibm_cloud_iam", "IbmCloudIamDetector", ("ibm-cloud-key",)),
    ("ibm_cos_hmac", "IbmCosHmacDetector", ("ibm-cos-key",)),
    ("jwt", "JwtTokenDetector", ("jwt",)),
    ("mailchimp", "MailchimpDetector", ("mailchimp-key",)),
    ("npm", "NpmDetector", ("npm-token",)),
    ("openai", "OpenAIDetector", ("openai-key",)),
    ("private_key", "PrivateKeyDetector", ("private-key",)),
    ("pypi_token", "PypiTokenDetector", ("pypi-token",)),
    ("sendgrid", "SendGridDetector", ("sendgrid-key",)),
    ("slack", "SlackDetector", ("slack-token", "slack-webhook")),
    ("softlayer", "SoftlayerDetector", ("softlayer-key",)),
    ("square_oauth", "SquareOAuthDetector", ("square-secret",)),
    ("stripe", "StripeDetector", ("stripe-key",)),
    ("telegram_token", "TelegramBotTokenDetector", ("telegram-token",)),
    ("twilio", "TwilioKeyDetector", ("twilio-key",)),
)
_MIN_GROUP = 6  # the library's groups: see ``_Pattern.min_group``

_PLACEHOLDERS = frozenset(
    {
        "none", "null", "nil", "true", "false", "undefined", "empty", "redacted", "changeme", "change_me",
        "example", "password", "passwd", "secret", "token", "your_token", "your_password", "your_api_key",
        "yourpassword", "mypassword", "xxx", "todo", "tbd", "dummy", "test", "placeholder", "required", "optional",
        "string", "str", "bytes", "int", "secretstr",
    }
)  # fmt: skip
# Names that hold something about a secret, not the secret: its id, name, hash, length, URL, …
_ABOUT_A_SECRET = re.compile(
    r"(?:_|-|\b)(?:ids?|hash(?:ed)?|digest|sha\d*|md5|names?|types?|len(?:gth)?|min|max|count|url|uri|path|file|"
    r"dir|header|field|prompt|policy|expir\w*|ttl|timeout|version|arn|env|var|format|label|ref|source|provider|"
    r"template|rotation|reset|hint|strength|mode|scope)s?$",
    re.IGNORECASE,
)
# A value that is a reference to a secret, not one: a dotted or called name, an environment
# variable's NAME, a class name, a snake_case identifier ("SecretsCollection: output_baseline" in
# a commit message), a template, a shell or JS interpolation.
_REFERENCE = re.compile(
    r"^(?:[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+|[A-Z][A-Z0-9_]*|[A-Z][a-z]+(?:[A-Z][a-z]+)+|[a-z]+(?:_[a-z]+)+)$"
    r"|^[A-Za-z_][\w.]*[\[(]"
)


def _character_classes(value: str) -> int:
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )


def _assigned_value(value: str) -> bool:
    """Whether a value assigned to a secret's name is one (not a placeholder, a reference, a type,
    a template, a word): six characters or more, no space, two kinds of character or twenty
    characters, and none of detect-secrets' false-positive shapes."""
    from detect_secrets.filters import heuristic

    value = value.strip().rstrip(",;")
    if len(value) < 6 or any(c.isspace() for c in value):
        return False
    if value.lower().strip("<>{}[]()*_-.") in _PLACEHOLDERS or len(set(value)) <= 2:
        return False
    if _REFERENCE.match(value) or value.startswith(("[redacted:", "os.", "process.env", "env(", "%(")):
        return False
    if heuristic.is_templated_secret(value) or heuristic.is_prefixed_with_dollar_sign(value):
        return False
    if heuristic.is_sequential_string(value) or heuristic.is_not_alphanumeric_string(value):
        return False
    return _character_classes(value) >= 2 or len(value) >= 20


def _url_password(value: str) -> bool:
    """A URL's password, unless a placeholder or a template (``:${DB_PASSWORD}@``, ``:password@``)."""
    from detect_secrets.filters import heuristic

    lowered = value.lower().strip("<>{}[]*")
    if lowered in _PLACEHOLDERS or value.startswith(("$", "%", "[redacted:")) or heuristic.is_templated_secret(value):
        return False
    return len(set(value)) > 1


def _jwt(value: str) -> bool:
    from detect_secrets.plugins.jwt import JwtTokenDetector

    return value.count(".") >= 2 and JwtTokenDetector.is_formally_valid(value)


def _token_value(value: str) -> bool:
    """A bearer token: sixteen characters or more of two kinds, not a template or a placeholder
    (``Bearer $TOKEN``, ``Bearer <token>``). Dots are a token's own here (a JWT, an opaque
    ``a.b.c``), not a dotted name."""
    from detect_secrets.filters import heuristic

    lowered = value.lower()
    if heuristic.is_templated_secret(value) or heuristic.is_prefixed_with_dollar_sign(value):
        return False
    if lowered.strip("<>{}[]*_-.") in _PLACEHOLDERS or lowered.startswith(("token", "bearer", "[redacted:")):
        return False
    return _character_classes(value) >= 2 and len(set(value)) > 4


def _vercel_token(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


# A name starts where a word does (the patterns put ``(?<![\w-])`` before it): the lazy prefix tried
# from every character of a long token (a base64 line) would cost its length squared.
_SECRET_NAME = (
    r"(?:[\w-]*?)(?:passw(?:or)?d|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|"
    r"auth[_-]?key|client[_-]?key|credentials?|signing[_-]?key|encryption[_-]?key|master[_-]?key|session[_-]?key)"
    r"(?:[\w-]*)"
)

# Ours: what the library lacks, in the shapes our sources carry them.
_OWN = (
    _Pattern("github-token", re.compile(r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}"), hints=("github_pat_",)),
    _Pattern("github-token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,251}\b"), hints=("gh",)),
    _Pattern(
        "anthropic-key", re.compile(r"\bsk-ant-(?:api|admin|oat|ort)\d{2}-[A-Za-z0-9_\-]{40,}"), hints=("sk-ant-",)
    ),
    _Pattern(
        "openai-key",
        re.compile(r"\bsk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}"),
        hints=("sk-proj-", "sk-svcacct-", "sk-admin-", "sk-none-"),
    ),
    _Pattern("openai-key", re.compile(r"\bsk-[A-Za-z0-9]{48}\b"), hints=("sk-",)),
    _Pattern("slack-token", re.compile(r"\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]{20,}"), hints=("xapp-",)),
    _Pattern("slack-token", re.compile(r"\bxox[abeprs]-[A-Za-z0-9-]{10,}"), hints=("xox",)),
    _Pattern("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"), hints=("aiza",)),
    _Pattern("stripe-key", re.compile(r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}"), hints=("k_live_", "k_test_")),
    _Pattern("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), hints=("npm_",)),
    _Pattern("pypi-token", re.compile(r"\bpypi-AgE[A-Za-z0-9_\-]{50,}"), hints=("pypi-",)),
    _Pattern(
        "aws-secret-access-key",
        re.compile(
            r"aws[_-]?secret[_-]?(?:access[_-]?)?key['\"]?\s*(?:=|:|=>)\s*['\"]?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
            re.I,
        ),
        group=1,
        hints=("secret",),
    ),
    _Pattern(
        "cohere-key",
        re.compile(r"(?:cohere|\bco)[_-]?(?:api[_-]?)?key['\"]?\s*(?:=|:|=>)\s*['\"]?([A-Za-z0-9]{40})\b", re.I),
        group=1,
        hints=("key",),
    ),
    _Pattern(
        "vercel-token",
        re.compile(r"vercel[\w\s\"'`:=-]{0,40}?\b([A-Za-z0-9]{24})\b", re.I),
        group=1,
        hints=("vercel",),
        check=_vercel_token,
    ),
    _Pattern(
        "private-key",
        re.compile(
            r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|(?:[\r\n]+[A-Za-z0-9+/=:\-, ]*)*)",
            re.DOTALL,
        ),
        hints=("private key",),
    ),
    _Pattern(
        "url-password",
        re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/?#@\[\]\"'<>]+:([^\s/?#@\"'<>]+)@"),
        group=1,
        hints=("://",),
        check=_url_password,
    ),
    _Pattern(
        "bearer-token",
        re.compile(r"\bbearer\s+([A-Za-z0-9\-._~+/]{16,}=*)", re.I),
        group=1,
        hints=("bearer",),
        check=_token_value,
    ),
    _Pattern(
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"),
        hints=("eyj",),
        check=_jwt,
    ),
    # ``NAME=value`` / ``name: value`` at the start of a line (.env, YAML, shell, a header), where
    # NAME names a secret; the value unquoted or quoted.
    _Pattern(
        "credential",
        re.compile(
            rf"^[ \t]*(?:export[ \t]+|-[ \t]+|set[ \t]+)?[\"']?({_SECRET_NAME})[\"']?[ \t]*(?:=|:|:=)[ \t]*"
            r"[\"'`]?([^\s\"'`]+)",
            re.I | re.M,
        ),
        group=2,
        hints=("pass", "pwd", "secret", "token", "key", "credential"),
        name_group=1,
    ),
    # ``name=value`` in a line (a command's ``--password=…``, a query string, prose pasting one).
    _Pattern(
        "credential",
        re.compile(rf"(?<![\w-])-{{0,2}}({_SECRET_NAME})=([^\s\"'`&]+)", re.I),
        group=2,
        hints=("pass", "pwd", "secret", "token", "key", "credential"),
        name_group=1,
    ),
    # ``name = "value"`` / ``name: "value"`` / ``"name": "value"`` anywhere (code, JSON, a log line).
    _Pattern(
        "credential",
        re.compile(
            rf"(?<![\w-])[\"']?({_SECRET_NAME})[\"']?[ \t]*(?:=|:|:=|=>)[ \t]*([\"'`])([^\s\"'`]{{6,}})\2", re.I
        ),
        group=3,
        hints=("pass", "pwd", "secret", "token", "key", "credential"),
        name_group=1,
    ),
)


@cache
def _patterns() -> tuple[_Pattern, ...]:
    """Every pattern, the providers' first (their kind is the more precise where two overlap).
    Built on first use: the library (and requests, which it imports) loads only when text is
    first scanned, never at a handler's import."""
    import importlib

    from detect_secrets.plugins import keyword

    library: list[_Pattern] = []
    for module, name, kinds in _LIBRARY:
        plugin = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)
        for n, listed in enumerate(plugin.denylist):
            kind = kinds[min(n, len(kinds) - 1)]
            # Its private-key patterns are bare header words: fenced, they are a key; in prose
            # ("keys that start with BEGIN PGP PRIVATE KEY BLOCK"), they are not.
            regex = (
                re.compile(rf"-{{4,5}} ?(?:{listed.pattern})")
                if kind == "private-key" and "BEGIN" in listed.pattern
                else listed
            )
            group = 1 if regex.groups else 0
            check = _jwt if kind == "jwt" else _url_password if kind == "url-password" else None
            library.append(_Pattern(kind, regex, group=group, check=check, min_group=_MIN_GROUP))
    # The keyword plugin's patterns for quoted values (its mode for code and unknown files).
    keywords = [
        _Pattern("credential", regex, group=group, hints=("pass", "pwd", "secret", "key", "contrase"), name_group=0)
        for regex, group in keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP.items()
    ]
    return (*_OWN[:-3], *library, *_OWN[-3:], *keywords)


def _span(pattern: _Pattern, match: re.Match[str]) -> tuple[int, int] | None:
    """Where the secret of a match is: its group when that is one (a library group shorter than
    ``_MIN_GROUP`` is a captured prefix: then the whole match), trimmed of the separators a
    library pattern takes in (``\\s``, ``=``, ``:``, quotes)."""
    group = pattern.group
    if group and (match.group(group) is None or len(match.group(group)) < pattern.min_group):
        group = 0
    start, end = match.span(group)
    text = match.string
    while start < end and text[start] in " \t\r\n=:\"'":
        start += 1
    while end > start and text[end - 1] in " \t\r\n\"'":
        end -= 1
    return (start, end) if end > start else None


def _credential_ok(pattern: _Pattern, match: re.Match[str], value: str) -> bool:
    """An assignment to a secret's name: the name must not be about a secret (``password_reset_url``,
    ``token_expiry``, ``secret_name``) and the value must be one (``_assigned_value``, which reads
    ``get_token()`` and ``request.headers[…]`` as references: detect-secrets' own line-wide check for
    those costs the square of a long line)."""
    if pattern.name_group:
        name = match.group(pattern.name_group)
    else:
        word = re.match(r"[\w-]+", match.string[match.start() :])
        name = word.group(0) if word else ""
    if name and _ABOUT_A_SECRET.search(name):
        return False
    return _assigned_value(value)


# Fewer distinct characters than this is a placeholder in a secret's shape (``ACxxxxxxxx…``,
# ``sk_live_0000…``, ``****``), as documentation and tests write them: no issued secret is.
_MIN_DISTINCT = 5


def _matches(text: str) -> Iterator[Finding]:
    lowered = text.lower()
    for pattern in _patterns():
        if pattern.hints and not any(hint in lowered for hint in pattern.hints):
            continue
        for match in pattern.regex.finditer(text):
            span = _span(pattern, match)
            if span is None:
                continue
            value = text[span[0] : span[1]]
            if len(set(value)) < _MIN_DISTINCT:
                continue
            if pattern.check is not None and not pattern.check(value):
                continue
            if pattern.name_group is not None and not _credential_ok(pattern, match, value):
                continue
            yield Finding(pattern.kind, *span)


def find_secrets(text: str) -> list[Finding]:
    """The secrets in ``text``, in order, overlapping findings merged into one (of the kind found
    first: a provider's over a generic credential)."""
    if not text:
        return []
    order = {p.kind: n for n, p in reversed(list(enumerate(_patterns())))}
    merged: list[Finding] = []
    for finding in sorted(_matches(text), key=lambda f: (f.start, -f.end)):
        if merged and finding.start < merged[-1].end:
            last = merged[-1]
            kind = min((last.kind, finding.kind), key=lambda k: order.get(k, len(order)))
            merged[-1] = Finding(kind, last.start, max(last.end, finding.end))
        else:
            merged.append(finding)
    return merged
