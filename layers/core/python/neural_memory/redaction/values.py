"""Whether a value a pattern found is a secret: not a placeholder in a secret's shape, not a
reference to one, and, where only its name says it is one, shaped like one.

Rules, not lists of examples: each was written against a class of look-alikes in the labelled sets
(``bench/secrets_corpus.py``, ``bench/secrets_holdout.py``, written blind to the detector) and the
real histories read in docs/benchmarks.md ("Secrets never become memories").
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter

PLACEHOLDERS = frozenset(
    {
        "none", "null", "nil", "true", "false", "undefined", "empty", "redacted", "changeme", "change_me",
        "example", "password", "passwd", "secret", "token", "your_token", "your_password", "your_api_key",
        "yourpassword", "mypassword", "xxx", "todo", "tbd", "dummy", "test", "placeholder", "required", "optional",
        "string", "str", "bytes", "int", "secretstr", "pass", "pwd", "key", "apikey", "api_key",
    }
)  # fmt: skip
# Fewer distinct characters than this is a placeholder in a secret's shape (``ACxxxxxxxx…``,
# ``sk_live_0000…``, ``****``), as documentation and tests write them: no issued secret is.
MIN_DISTINCT = 5
# Runs no issued secret holds: masks (``sk-ant-api03-...fUSz``, ``****``) and fill (``XXXX``, ``0000``);
# and a placeholder in brackets (``<your key here>``).
_MASKED = re.compile(r"x{4,}|X{4,}|0{8,}|\*{3,}|\.{3}|…|^<.*>$")
# Lower-case words joined by ``-`` or ``_`` that describe the value (``your-bot-token``,
# ``dummy-secret-key-for-tests``): a description, not an issued value. A passphrase of random words
# (``tiger-horse-staple-river``) says nothing about itself, and is kept a secret.
_WORDS = re.compile(r"^[a-z]+(?:[-_][a-z]+)+$")
_DESCRIBING = frozenset(
    "your my our the a an this dummy example sample test tests testing fake fixture here placeholder replace "
    "change changeme insert put goes secret token key password pass api bot app value for of foo bar baz "
    "default demo local dev development".split()
)
# Values the providers publish in their documentation (anyone may read them, none opens anything):
# AWS writes its examples with EXAMPLE in them; jwt.io's, Stripe's and Azurite's are the ones below.
_PUBLISHED = frozenset(
    {
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
        ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
        # Azurite's, the storage emulator's well-known account key
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
    }
)
# A template or an interpolation, never a secret: ``${X}``, ``{{ secrets.X }}``, ``$NAME``, ``%(name)s``.
_TEMPLATE = re.compile(r"^(?:\$\{|\$\(|\$[A-Za-z_]|\{\{|\{%|%\(|\{[A-Za-z_])")
# Where a value assigned to a secret's name says the secret is kept: a secret manager's address
# (an ARN, ``op://``, ``vault:``, GCP's ``projects/…/secrets/…``), a path, a YAML tag.
_ADDRESS = re.compile(r"^(?:!|/|arn:|op://|vault:|projects/|secrets\.|ENC\[|\$ANSIBLE_VAULT)")
# Ciphertext made to be committed: a SealedSecret's (``AgB…``, hundreds of base64 characters).
_CIPHERTEXT = re.compile(r"^Ag[A-D][A-Za-z0-9+/]{200,}")
# In code, unquoted: a dotted name, a constant's or a class's name, a snake_case identifier, a call
# or a subscript (whole, or cut off at a quote: ``request.headers[``).
_CODE_NAME = re.compile(
    r"^(?:[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+|[A-Z][A-Z0-9_]*|[A-Z][a-z]+(?:[A-Z][a-z]+)+|[a-z]+(?:_[a-z]+)*)$"
    r"|^(?:[a-z_][a-z0-9_]*|[A-Z][a-z]+(?:[A-Z][a-z]+)*)(?:\.[A-Za-z_]\w*)*[\[(]"
    r"|^(?:os|process|env|ENV|config|settings|self)[.\[(]",
    re.ASCII,
)
# Names that hold something about a secret, not the secret: its id, name, hash, length, URL, …
_ABOUT_A_SECRET = re.compile(
    r"(?:_|-|\b)(?:ids?|hash(?:ed)?|digest|sha\d*|md5|names?|types?|len(?:gth)?|min|max|count|url|uri|path|file|"
    r"dir|header|field|prompt|policy|expir\w*|ttl|timeout|version|arn|env|var|format|label|ref|source|provider|"
    r"template|rotation|reset|hint|strength|mode|scope|param|parameter|store|manager|location|prefix|suffix|"
    r"alg|algorithms?|method|supported|kind|class|selector|field|column)s?$",
    re.IGNORECASE,
)
# Keys made to be public, shipped in web pages: Stripe's and Supabase's publishable keys, Mapbox's
# public tokens, Datadog's browser client tokens.
_PUBLISHABLE = ("pk_live_", "pk_test_", "sb_publishable_", "pk.eyJ")
_DATADOG_CLIENT = re.compile(r"^pub[a-f0-9]{32}$")
# A fingerprint or digest says which key, never opens anything: ``SHA256:t2lH0…``, ``sha512-…``.
_DIGEST = re.compile(r"^(?:sha\d*|md5)[:-]", re.IGNORECASE)
# Names that point at a secret kept elsewhere, or switch one on: ``existingSecret``, ``use_token``.
_REFERRING = re.compile(r"^(?:existing|ref|use|is|has|enable|require|with|no|skip)[_-]", re.IGNORECASE)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def character_classes(value: str) -> int:
    """How many of lower case, upper case, digits and other characters ``value`` holds."""
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )


def placeholder(value: str) -> bool:
    """A value in a secret's place that is not one: a word for it, a mask, a fill, a description."""
    lowered = value.lower().strip("<>{}[]()*_-.'\"")
    return (
        lowered in PLACEHOLDERS
        or len(set(value)) < MIN_DISTINCT
        or bool(_MASKED.search(value))
        or (bool(_WORDS.match(value)) and bool(_DESCRIBING & set(re.split(r"[-_]", value))))
        or value.startswith("[redacted:")
        or "EXAMPLE" in value
        or any(published in value for published in _PUBLISHED)
        or value.startswith(_PUBLISHABLE)
        or bool(_DATADOG_CLIENT.match(value))
        or bool(_DIGEST.match(value))
    )


def reference(value: str, quoted: bool) -> bool:
    """A value that names or computes a secret: a template, an address, a path; unquoted, also a
    name or call in code (quoted, ``"settings.KEY"`` is a literal)."""
    from detect_secrets.filters import heuristic

    if _TEMPLATE.match(value) or _ADDRESS.match(value) or _CIPHERTEXT.match(value):
        return True
    if heuristic.is_templated_secret(value) or value[:1] in "[({":  # a structure: a list, a call, a map
        return True
    return not quoted and bool(_CODE_NAME.match(value)) and not random_capitals(value)


def random_capitals(value: str) -> bool:
    """Upper case (and digits) that no constant's name is: sixteen characters or more, no ``_``,
    and as varied as random letters are (``KX7Q…``; ``AUTHENTICATION`` is a word)."""
    return len(value) >= 16 and value.isalnum() and value.isupper() and entropy(value) >= 3.5


def about_a_secret(name: str) -> bool:
    """Whether a name holds something about a secret, not the secret (``password_reset_url``,
    ``token_expiry``, ``secret_name``, ``SecretId``, ``existingSecret``)."""
    name = _CAMEL.sub("_", name)
    return bool(_ABOUT_A_SECRET.search(name) or _REFERRING.match(name))


def assigned(value: str, quoted: bool = False) -> bool:
    """Whether a value assigned to a secret's name is one: six characters or more, no space, not a
    placeholder, a reference or one of detect-secrets' false-positive shapes, and two kinds of
    character or twenty characters."""
    from detect_secrets.filters import heuristic

    if not quoted:
        value = value.rstrip(",;")
        while (
            value
            and value[-1] in ")]}"
            and value.count(value[-1]) > value.count({")": "(", "]": "[", "}": "{"}[value[-1]])
        ):
            value = value[:-1]  # a closing bracket of the code around it (``OpenAI(api_key=key)``)
    if len(value) < 6 or any(c.isspace() for c in value) or placeholder(value) or reference(value, quoted):
        return False
    if value.startswith(("http://", "https://")):  # an address: its own password or token is found on its own
        return False
    if heuristic.is_sequential_string(value) or heuristic.is_not_alphanumeric_string(value):
        return False
    return character_classes(value) >= 2 or len(value) >= 20


def strong(value: str, quoted: bool = False) -> bool:
    """A value prose calls a secret ("the admin password is …"): only one that could be nothing
    else, eight characters or more of three kinds."""
    value = value.strip(".,;:!?()[]{}\"'")
    return len(value) >= 8 and character_classes(value) >= 3 and assigned(value, quoted)


def url_password(value: str, quoted: bool = False) -> bool:
    """A URL's password, unless a placeholder or a template (``:${DB_PASSWORD}@``, ``:password@``);
    percent-encoded characters are its own."""
    lowered = value.lower().strip("<>{}[]*")
    if lowered in PLACEHOLDERS or value.startswith("[redacted:") or _TEMPLATE.match(value):
        return False
    return len(set(value)) > 2 and not _MASKED.search(value)


def token(value: str, quoted: bool = False) -> bool:
    """A token after an auth scheme (``Bearer``, ``Token``): sixteen characters or more of two kinds
    with a digit (or thirty-two characters),
    not a template or a placeholder (``Bearer $TOKEN``, ``Bearer <token>``). Dots are a token's own
    here (a JWT, an opaque ``a.b.c``), not a dotted name."""
    if reference(value, True) or placeholder(value) or value.lower().startswith(("token", "bearer")):
        return False
    # Issued tokens are random: a digit, or long; "Bearer Context-specific" is prose.
    return character_classes(value) >= 2 and (any(c.isdigit() for c in value) or len(value) >= 32)


def basic_credentials(value: str, quoted: bool = False) -> bool:
    """HTTP Basic (or docker's ``auth``): base64 of ``user:password``, with a password."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    user, colon, password = decoded.partition(":")
    return bool(colon and password) and decoded.isprintable() and not placeholder(password)


def provider_value(value: str, quoted: bool = False) -> bool:
    """A value in a provider's shape: its random part is not a placeholder (``ghp_XXXX…``)."""
    return not placeholder(value)


def jwt(value: str, quoted: bool = False) -> bool:
    """A JSON Web Token whose header and payload decode as JSON (detect-secrets' own check)."""
    from detect_secrets.plugins.jwt import JwtTokenDetector

    if value.count(".") < 2 or not JwtTokenDetector.is_formally_valid(value) or placeholder(value):
        return False
    return not _public_claims(value)


def _public_claims(value: str) -> bool:
    """A JWT made to be public: Supabase's anon key (``"role": "anon"``) ships in every web page."""
    import json

    payload = value.split(".")[1]
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (binascii.Error, ValueError):
        return False
    return isinstance(claims, dict) and claims.get("role") == "anon"


def named_provider(value: str, quoted: bool = False) -> bool:
    """A key a provider issues without a prefix (Cohere, Vercel), named as such: letters and digits."""
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value) and not placeholder(value)


def key_block(value: str, quoted: bool = False) -> bool:
    """A PEM private key: its body holds key material (a line of base64), not ``...`` or
    ``<your key here>``."""
    body = re.sub(r"-----[A-Z0-9 ]+-----", "", value).replace("\\n", "\n")
    return any(len(line.strip()) >= 16 and not placeholder(line.strip()) for line in body.splitlines())


def literal(value: str, quoted: bool = False) -> bool:
    """A value where code cannot stand (a URL's query, a config file's word): ``assigned`` as if
    quoted, so ``battery.tiger.staple`` is a passphrase, not a dotted name."""
    return assigned(value, True)


def glued_token(value: str, quoted: bool = False) -> bool:
    """A provider's token found glued to a word: not a placeholder, and random enough to be one
    (two digits and four letters at least: a name that happens to hold a prefix has no digits)."""
    return sum(c.isdigit() for c in value) >= 2 and sum(c.isalpha() for c in value) >= 4 and not placeholder(value)


def entropy(value: str) -> float:
    """Shannon entropy of ``value``'s characters, in bits a character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
