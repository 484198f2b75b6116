"""The patterns that find a secret by its name, its context or its syntax, not by a provider's
prefix: keys a provider issues without a prefix when their name says whose they are (Cohere, Vercel,
an AWS secret key unquoted); whole PEM blocks (the library flags the ``BEGIN`` line; escaped ``\\n``
in JSON too); a password in any URL, the user empty or not; any ``Authorization`` scheme and
secret-named headers; command lines that take a password (``mysql -p…``, ``curl -u user:pass``,
``--password …``, ``sshpass -p``, ``docker login -p``); ``.netrc``/redis config words; unquoted
``.env``, YAML and shell assignments to a secret's name (the library's keyword plugin wants quotes,
and knows ``password`` and ``secret`` but not ``token``); and prose that says what a value is ("the
admin password is …"), for strong values only.

Every pattern is ASCII: a secret next to CJK text (``密钥是AIza…``) has its word boundary.
"""

from __future__ import annotations

import re

from neural_memory.redaction import values
from neural_memory.redaction.patterns import A, Pattern

I = re.ASCII | re.IGNORECASE  # noqa: E741 (read as "insensitive")

# A secret's name: a word (ASCII letters, digits, ``_`` and ``-``) holding one of these, the word
# not going on in lower case (``tokenizer``, ``passwordless``, ``secretary`` are other words). It starts
# where a word does (the patterns put ``(?<![\w-])`` before it): a lazy prefix tried from every
# character of a long token (a base64 line) would cost its length squared.
SECRET_NAME = (
    r"(?:[\w-]*?(?:passw(?:or)?d|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|"
    r"(?:auth|client|signing|encryption|master|session|storage|account|service|license|admin|deploy|webhook|app)"
    r"[_-]?key|credentials?)(?-i:(?!ize|ise|less|ary|[a-rt-z]))[\w-]*"
    r"|[\w-]*?(?<![A-Za-z])(?:pass|pw|_auth|_password)(?![A-Za-z0-9]))"
)
# The same at a line's start, where a properties file's dotted names stand (``aws.secret.access.key``).
DOTTED_SECRET_NAME = SECRET_NAME.replace(r"[\w-]", r"[\w.-]")
_NAMED = ("pass", "pwd", "pw", "_auth", "secret", "token", "key", "credential")
_AUTH_HEADER = r"(?:x-)?(?:api-?key|auth-?token|access-?token|api-?token|apikey|private-token|goog-api-key)"

# Where the name, the context or the syntax says a value is a secret.
CONTEXTUAL = (
    Pattern(
        "aws-secret-access-key",
        re.compile(
            r"aws[_-]?secret[_-]?(?:access[_-]?)?key['\"]?\s*(?:=|:|=>)\s*['\"]?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])", I
        ),
        group=1,
        hints=("secret",),
    ),
    Pattern(
        "aws-session-token",
        re.compile(r"aws[_-]?session[_-]?token['\"]?\s*(?:=|:|=>)\s*['\"]?([A-Za-z0-9/+=]{100,})", I),
        group=1,
        hints=("session",),
    ),
    Pattern(
        "cohere-key",
        re.compile(r"(?:cohere|\bco)[_-]?(?:api[_-]?)?key['\"]?\s*(?:=|:|=>)\s*['\"]?([A-Za-z0-9]{40})\b", I),
        group=1,
        hints=("key",),
        check=values.named_provider,
    ),
    Pattern(
        "vercel-token",
        re.compile(r"vercel[\w\s\"'`:=-]{0,40}?\b([A-Za-z0-9]{24})\b", I),
        group=1,
        hints=("vercel",),
        check=values.named_provider,
    ),
    Pattern(
        "private-key",
        re.compile(
            # A header's words may be split across lines, each line commented or quoted (``# ``, ``> ``).
            r"-----BEGIN[A-Z0-9\s#/>*]*PRIVATE[\s#/>*]+KEY(?:[\s#/>*]+BLOCK)?-----"
            r"(?:.*?-----END[A-Z0-9\s#/>*]*PRIVATE[\s#/>*]+KEY(?:[\s#/>*]+BLOCK)?-----"
            r"|(?:(?:[\r\n]|\\n)+[A-Za-z0-9+/=:\-, ]*)*)",
            re.DOTALL | A,
        ),
        hints=("private",),
        check=values.key_block,
    ),
    Pattern(
        "url-password",
        re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://([^\s:/?#@\[\]\"'<>]*):(?!\1@)([^\s/?#@\"'<>]+)@", A),
        group=2,
        hints=("://",),
        check=values.url_password,
    ),
    Pattern(
        "http-credentials",
        re.compile(r"\bauthorization[\"']?\s*[:=]\s*[\"']?basic\s+([A-Za-z0-9+/]{8,}={0,2})", I),
        group=1,
        hints=("basic",),
        check=values.basic_credentials,
    ),
    Pattern(
        "http-credentials",
        re.compile(r"[\"']auth[\"']\s*:\s*[\"']([A-Za-z0-9+/]{8,}={0,2})[\"']", A),
        group=1,
        hints=("auth",),
        check=values.basic_credentials,
    ),
    Pattern(
        "bearer-token",
        re.compile(r"\bbearer[ \t]+([A-Za-z0-9\-._~+/]{16,}=*)", I),
        group=1,
        hints=("bearer",),
        check=values.token,
    ),
    Pattern(
        "bearer-token",
        re.compile(
            r"\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:token|apikey|api-key|digest|sso-key)[ \t]+"
            r"([A-Za-z0-9\-._~+/]{16,}=*)",
            I,
        ),
        group=1,
        hints=("authorization",),
        check=values.token,
    ),
    Pattern(
        "api-key",
        re.compile(rf"(?<![\w-])[\"']?{_AUTH_HEADER}[\"']?\s*:\s*[\"']?([A-Za-z0-9\-._~+/=]{{12,}})", I),
        group=1,
        hints=("key", "token"),
        check=values.token,
    ),
    Pattern(
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}", A),
        hints=("eyj",),
        check=values.jwt,
    ),
    # Command lines that take a password: mysql's -p with the value glued, curl's user:password, a
    # --password flag with a space, sshpass -p, docker login -p.
    Pattern(
        "password",
        re.compile(r"\b(?:mysql|mysqldump|mariadb|mysqladmin)\b[^\n]*?\s-p(['\"]?)([^\s'\"]+)\1", A),
        group=2,
        hints=("mysql", "mariadb"),
        check=values.assigned,
    ),
    Pattern(
        "password",
        re.compile(r"\bcurl\b[^\n]*?\s(?:-u|--user)\s*['\"]?[^:\s'\"]+:(['\"]?)([^\s'\"]+)\1", A),
        group=2,
        hints=("curl",),
        check=values.assigned,
    ),
    Pattern(
        "password",
        re.compile(
            r"(?:--(?:password|passwd|token|api-key|apikey|secret|auth-token|access-token)|\bsshpass\s+-p|"
            r"\bdocker\s+login\b[^\n]*?\s-p)(?:\s+|=)(['\"]?)([^\s'\"]+)\1",
            A,
        ),
        group=2,
        hints=("--", "sshpass", "docker"),
        check=values.assigned,
    ),
    # Config words followed by the value: a line of redis.conf or .netrc, or .netrc's one-line form.
    Pattern(
        "password",
        re.compile(
            r"(?:^[ \t]*(?:password|requirepass|masterauth)|\blogin[ \t]+\S+[ \t]+password)[ \t]+(['\"]?)([^\s'\"]+)\1"
            r"[ \t]*(?:$|[ \t]+(?:machine|login|account)\b)",
            A | re.M,
        ),
        group=2,
        hints=("pass", "auth"),
        check=values.literal,
    ),
    # Prose that says what a value is: "the staging admin password is Dragon1991!", in a few
    # languages; strong values only (prose is full of "the token is refreshed").
    Pattern(
        "password",
        re.compile(
            r"(?:(?:password|passwort|mot de passe|contrase\u00f1a|senha|key|token|secret|schl\u00fcssel|cl\u00e9|"
            r"clave|chave)"
            r"(?:[ \t]+[^\s.,;:!?]+){0,4}?[ \t]+(?:is|was|ist|lautet|est|es|\u00e9)[ \t]+"
            r"|(?:\u5bc6\u7801|\u5bc6\u94a5|\u30d1\u30b9\u30ef\u30fc\u30c9)[^\s]{0,12}?(?:\u662f|\u4e3a|\u306f)\s*)"
            r"[\"'`\u201c]?([^\s\"'`\u201d]{8,})",
            re.IGNORECASE,
        ),
        group=1,
        hints=("pass", "mot de", "contrase", "senha", "\u5bc6", "\u30d1\u30b9", "key", "token", "secret", "schl", "cl"),
        check=values.strong,
    ),
    # The other way round: "<value> is the vercel token for staging".
    Pattern(
        "password",
        re.compile(
            r"(?<![^\s\"'`(])([^\s\"'`]{12,})[ \t]+(?:is|was)[ \t]+(?:the|my|our|your)[ \t]+(?:[\w-]+[ \t]+){0,3}?"
            r"(?:password|key|token|secret)\b",
            re.IGNORECASE,
        ),
        group=1,
        hints=("password", "key", "token", "secret"),
        check=values.strong,
    ),
    # ``NAME=value`` / ``name: value`` at the start of a line (.env, YAML, shell, a header), where
    # NAME names a secret; the value unquoted or quoted.
    Pattern(
        "credential",
        re.compile(
            rf"^[ \t]*(?:export[ \t]+|-[ \t]+|set[ \t]+|ENV[ \t]+)?[\"']?({DOTTED_SECRET_NAME})[\"']?[ \t]*"
            r"(?:=|:|:=)[ \t]*[\"'`]?([^\s\"'`]+)",
            I | re.M,
        ),
        group=2,
        hints=_NAMED,
        check=values.assigned,
        name_group=1,
    ),
    # XML: ``<password>…</password>``, and ``<add key="ClearTextPassword" value="…"/>`` (NuGet, appSettings).
    Pattern(
        "credential",
        re.compile(rf"<({SECRET_NAME})>([^<\s]+)</\1>", I),
        group=2,
        hints=("<",),
        check=values.literal,
        name_group=1,
    ),
    Pattern(
        "credential",
        re.compile(rf"\bkey=\"({SECRET_NAME})\"[ \t]+value=\"([^\"]+)\"", I),
        group=2,
        hints=("value=",),
        check=values.literal,
        name_group=1,
    ),
    # SQL: ``IDENTIFIED BY '…'``, ``PASSWORD '…'`` (CREATE/ALTER USER or ROLE), ``OPTIONS (… password '…')``.
    Pattern(
        "password",
        re.compile(r"\b(?:identified[ \t]+by|password)[ \t]+'([^'\n]+)'", I),
        group=1,
        hints=("identified", "password"),
        check=values.literal,
    ),
    # A typed constant or a define: ``const CO_API_KEY: &str = "…"``, ``define('CF_API_TOKEN', '…')``.
    Pattern(
        "credential",
        re.compile(rf"(?<![\w-])({SECRET_NAME})[ \t]*:[ \t]*[^=\n\"']{{1,30}}=[ \t]*([\"'`])([^\s\"'`]{{6,}})\2", I),
        group=3,
        hints=_NAMED,
        check=values.assigned,
        name_group=1,
    ),
    Pattern(
        "credential",
        re.compile(rf"\bdefine\([ \t]*[\"']({SECRET_NAME})[\"'][ \t]*,[ \t]*([\"'])([^\"'\n]+)\2", I),
        group=3,
        hints=("define",),
        check=values.literal,
        name_group=1,
    ),
    # A password piped to ``--password-stdin``.
    Pattern(
        "password",
        re.compile(r"\becho[ \t]+(['\"]?)([^\s'\"|]+)\1[ \t]*\|[^\n]*--password-stdin", A),
        group=2,
        hints=("password-stdin",),
        check=values.literal,
    ),
    # A Dockerfile's ``ENV NAME value``.
    Pattern(
        "credential",
        re.compile(rf"^[ \t]*ENV[ \t]+({SECRET_NAME})[ \t]+[\"']?([^\s\"'`]+)", A | re.M),
        group=2,
        hints=("env",),
        check=values.assigned,
        name_group=1,
    ),
    # A URL's query parameter that carries a credential: ``?key=…``, ``&auth=…``, ``&sig=…``.
    Pattern(
        "url-token",
        re.compile(
            r"[?&;](?:key|auth|token|access_token|api_key|apikey|password|passwd|pwd|secret|client_secret|sig|"
            r"signature|private_token)=([^&\s#\"'<>)\]]+)",
            I,
        ),
        group=1,
        hints=("=",),
        check=values.literal,
    ),
    # ``name=value`` in a line (a command's ``--password=…``, a query string, prose pasting one); an
    # ``&`` ends it only before another parameter (a connection string's password may hold one).
    Pattern(
        "credential",
        re.compile(rf"(?<![\w-])-{{0,2}}({SECRET_NAME})=([^\s\"'`;]+?)(?=&\w+=|[\s\"'`;]|$)", I),
        group=2,
        hints=_NAMED,
        check=values.assigned,
        name_group=1,
    ),
    # ``name = "value"`` / ``name: "value"`` / ``"name": "value"`` anywhere (code, JSON, a log line).
    Pattern(
        "credential",
        re.compile(rf"(?<![\w-])[\"']?({SECRET_NAME})[\"']?[ \t]*(?:=|:|:=|=>)[ \t]*([\"'`])([^\s\"'`]{{6,}})\2", I),
        group=3,
        hints=_NAMED,
        check=values.assigned,
        name_group=1,
    ),
)
