"""The patterns of secrets: Yelp's ``detect-secrets`` provider and keyword patterns (a maintained
library made for this), and ours for what it lacks in the shapes our sources carry them.

Ours: newer provider prefixes (GitHub fine-grained, Anthropic, OpenAI project and service keys,
Slack app tokens, Google API keys and OAuth client secrets, Stripe webhook secrets, Hugging Face,
Shopify, DigitalOcean, Databricks, Postman, Linear, AWS session tokens); keys a provider issues
without a prefix when their name says whose they are (Cohere, Vercel, an AWS secret key unquoted);
whole PEM blocks (the library flags the ``BEGIN`` line; escaped ``\\n`` in JSON too); a password in
any URL, the user empty or not; any ``Authorization`` scheme and secret-named headers; command
lines that take a password (``mysql -p…``, ``curl -u user:pass``, ``--password …``,
``sshpass -p``, ``docker login -p``); ``.netrc``/redis config words; unquoted ``.env``, YAML and
shell assignments to a secret's name (the library's keyword plugin wants quotes, and knows
``password`` and ``secret`` but not ``token``); and prose that says what a value is ("the admin
password is …"), for strong values only.

Every pattern is ASCII: a secret next to CJK text (``密钥是AIza…``) has its word boundary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from neural_memory.redaction import values

if TYPE_CHECKING:
    from collections.abc import Callable

A = re.ASCII
I = re.ASCII | re.IGNORECASE  # noqa: E741 (read as "insensitive")


@dataclass(frozen=True, slots=True)
class Pattern:
    """One regular expression of a kind. ``group``: the group that is the secret (0: the whole
    match); ``hints``: lower-case substrings one of which any match contains (the pattern runs only
    on texts holding one: most texts hold none); ``check``: whether a matched value is a secret
    (given whether it stood in quotes); ``min_group``: a group shorter than this is a prefix the
    library captured (GitHub's ``(ghp|gho|…)_``), so the whole match is the secret; ``name_group``:
    an assignment's name (0: the word the match starts with), whose name must not be about a
    secret (``password_reset_url``)."""

    kind: str
    regex: re.Pattern[str]
    group: int = 0
    hints: tuple[str, ...] = ()
    check: Callable[[str, bool], bool] | None = values.provider_value
    min_group: int = 0
    name_group: int | None = None


# detect-secrets' provider plugins (module, class) and the kind each one's matches are. Left out:
# the high-entropy plugins (entropy-only guesses would take commit SHAs, UUIDs, digests and base64
# fixtures), the public-IP plugin (an address is not a credential), its Artifactory plugin (its
# ``AP…`` pattern takes Slack app ids; ours wants the 73-character key), its Twilio plugin (account
# and key SIDs, ``AC…``/``SK…``, are identifiers; the auth token is found by its name), and two ours
# supersede: its
# basic-auth URL (ours takes any character a password holds, an empty user, and leaves a local
# default like ``postgres:postgres@`` alone) and its JWT (lazy: it ends before the signature);
# the keyword plugin is used apart.
LIBRARY = (
    ("aws", "AWSKeyDetector", ("aws-access-key-id", "aws-secret-access-key")),
    ("azure_storage_key", "AzureStorageKeyDetector", ("azure-storage-key",)),
    ("cloudant", "CloudantDetector", ("cloudant-credentials",)),
    ("discord", "DiscordBotTokenDetector", ("discord-token",)),
    ("github_token", "GitHubTokenDetector", ("github-token",)),
    ("gitlab_token", "GitLabTokenDetector", ("gitlab-token",)),
    ("ibm_cloud_iam", "IbmCloudIamDetector", ("ibm-cloud-key",)),
    ("ibm_cos_hmac", "IbmCosHmacDetector", ("ibm-cos-key",)),
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
)
_LIBRARY_CHECKS: dict[str, Callable[[str, bool], bool]] = {}
# Lower-case substrings every match of a library pattern holds (the pattern runs only on a text
# holding one): what its provider's prefix or its assignment's keyword must spell.
_LIBRARY_HINTS: dict[str, tuple[str, ...]] = {
    "aws-access-key-id": ("a3t", "abia", "acca", "akia", "asia"),
    "aws-secret-access-key": ("aws",),
    "azure-storage-key": ("accountkey",),
    "cloudant-credentials": ("key", "pw", "pass", "token", "cloudant"),
    "discord-token": (".",),
    "github-token": ("gh",),
    "gitlab-token": ("gl", "gr1348941"),
    "ibm-cloud-key": ("key",),
    "ibm-cos-key": ("secret",),
    "mailchimp-key": ("-us",),
    "npm-token": ("_authtoken",),
    "openai-key": ("t3blbkfj",),
    "private-key": ("putty",),
    "pypi-token": ("pypi-",),
    "sendgrid-key": ("sg.",),
    "slack-token": ("xox",),
    "slack-webhook": ("hooks.slack.com",),
    "softlayer-key": ("key", "pw", "pass", "token", "softlayer"),
    "square-secret": ("sq0csp",),
    "stripe-key": ("_live_",),
    "telegram-token": (":",),
}
_MIN_GROUP = 6


def library_patterns() -> list[Pattern]:
    """The library's patterns, made ASCII; not its bare private-key headers (in prose, "keys that
    start with BEGIN PGP PRIVATE KEY BLOCK" is not a key; a fenced block is ours, whole). Imported
    on first use: the library (and requests, which it imports) never loads at a handler's import."""
    import importlib

    found = []
    for module, name, kinds in LIBRARY:
        plugin = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)
        for n, listed in enumerate(plugin.denylist):
            kind = kinds[min(n, len(kinds) - 1)]
            if kind == "private-key" and "BEGIN" in listed.pattern:
                continue  # a bare header: ours takes the fenced block whole, its body checked
            source = listed.pattern
            if kind == "aws-access-key-id":  # a token of its own, not 20 characters inside a fingerprint
                source = rf"(?<![A-Za-z0-9])(?:{source})(?![A-Za-z0-9])"
            if kind == "telegram-token":  # a token of its own, not an ARN's account and name
                source = rf"(?<![\w:])(?:{source})(?![\w-])"
            regex = re.compile(source, (listed.flags & ~re.UNICODE) | re.ASCII)
            check = _LIBRARY_CHECKS.get(kind, values.provider_value)
            if kind == "stripe-key":  # no word boundary in it: ``mask_live_previewGenerator`` is a name
                check = values.glued_token
            hints = _LIBRARY_HINTS.get(kind, ())
            found.append(
                Pattern(kind, regex, group=1 if regex.groups else 0, hints=hints, check=check, min_group=_MIN_GROUP)
            )
    return found


def keyword_patterns() -> list[Pattern]:
    """The library's keyword plugin, in its mode for code and unknown files (quoted values)."""
    from detect_secrets.plugins import keyword

    return [
        Pattern(
            "credential",
            re.compile(regex.pattern, (regex.flags & ~re.UNICODE) | re.ASCII),
            group=group,
            hints=("pass", "pwd", "secret", "key", "contrase"),
            check=values.assigned,
            name_group=0,
        )
        for regex, group in keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP.items()
    ]


def _prefixed(kind: str, regex: str, *hints: str, flags: re.RegexFlag = A) -> Pattern:
    return Pattern(kind, re.compile(regex, flags), hints=hints or (regex[2:8].lower(),))


# What the library lacks: providers' prefixes (each a shape the provider documents).
PROVIDERS = (
    _prefixed("github-token", r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}", "github_pat_"),
    _prefixed("github-token", r"\bgh[pousr]_[A-Za-z0-9]{36,251}\b", "gh"),
    _prefixed("anthropic-key", r"\bsk-ant-(?:api|admin|oat|ort)\d{2}-[A-Za-z0-9_\-]{40,}", "sk-ant-"),
    _prefixed("openai-key", r"\bsk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}", "sk-"),
    _prefixed("openai-key", r"\bsk-[A-Za-z0-9]{48}\b", "sk-"),
    _prefixed("slack-token", r"\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]{20,}", "xapp-"),
    _prefixed("slack-token", r"\b(?:xoxe\.)?xox[abeprs]-[A-Za-z0-9-]{10,}", "xox"),
    _prefixed("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}", "aiza"),
    _prefixed("google-oauth-secret", r"\bGOCSPX-[0-9A-Za-z_\-]{28}", "gocspx-"),
    _prefixed("stripe-key", r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}", "k_live_", "k_test_"),
    _prefixed("stripe-webhook-secret", r"\bwhsec_[0-9A-Za-z+/]{24,}", "whsec_"),
    _prefixed("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", "npm_"),
    _prefixed("pypi-token", r"\bpypi-AgE[A-Za-z0-9_\-]{50,}", "pypi-"),
    _prefixed("huggingface-token", r"\bhf_[A-Za-z]{34}\b", "hf_"),
    _prefixed("shopify-token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", "shp"),
    _prefixed("digitalocean-token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", "_v1_"),
    _prefixed("databricks-token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", "dapi"),
    _prefixed("postman-key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", "pmak-"),
    _prefixed("linear-key", r"\blin_api_[A-Za-z0-9]{40}\b", "lin_api_"),
    _prefixed("mailgun-key", r"\bkey-[0-9a-f]{32}\b", "key-"),
    _prefixed("mailgun-key", r"\b[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}\b", "-"),
    _prefixed(
        "discord-webhook", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{60,}", "discord"
    ),
    _prefixed("discord-token", r"\b[MNO][\w-]{23,25}\.[\w-]{6}\.[\w-]{27,38}\b", "."),
    _prefixed("vault-token", r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}", "hvs.", "hvb.", "hvr."),
    _prefixed("terraform-token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}", "atlasv1"),
    _prefixed("nuget-key", r"\boy2[a-z0-9]{43}\b", "oy2"),
    _prefixed(
        "newrelic-key", r"\bNR(?:AK|II|JS)-[A-Za-z0-9]{19,32}\b|\b[a-f0-9]{36}NRAL\b", "nrak-", "nrii-", "nrjs-", "nral"
    ),
    _prefixed("supabase-key", r"\bsb_secret_[A-Za-z0-9_-]{20,}", "sb_secret_"),
    _prefixed(
        "grafana-token", r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b|\bglc_[A-Za-z0-9+/]{32,}={0,2}", "glsa_", "glc_"
    ),
    _prefixed("notion-token", r"\bntn_[0-9]{11}[A-Za-z0-9]{32,35}\b", "ntn_"),
    _prefixed("pulumi-token", r"\bpul-[a-f0-9]{40}\b", "pul-"),
    _prefixed("gitlab-token", r"\bglpat-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9]{2}\.[A-Za-z0-9]{9})?", "glpat-"),
    _prefixed(
        "azure-client-secret",
        r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
        "q~",
    ),
    _prefixed("atlassian-token", r"\bATATT3[A-Za-z0-9_\-=]{150,}", "atatt3"),
    _prefixed("sentry-token", r"\bsntry[su]_[A-Za-z0-9+/=_-]{60,}", "sntry"),
    _prefixed("docker-token", r"\bdckr_pat_[A-Za-z0-9_-]{27,}", "dckr_pat_"),
    _prefixed("heroku-key", r"\bHRKU-AA[0-9A-Za-z_-]{58}", "hrku-"),
    _prefixed("netlify-token", r"\bnfp_[A-Za-z0-9]{36}\b", "nfp_"),
    _prefixed("rubygems-key", r"\brubygems_[a-f0-9]{48}\b", "rubygems_"),
    _prefixed("vercel-token", r"\bvc[pika]_[A-Za-z0-9]{24,}", "vcp_", "vci_", "vck_", "vca_"),
    _prefixed("artifactory-token", r"\bAKC[A-Za-z0-9]{69}\b", "akc"),
    _prefixed("doppler-token", r"\bdp\.(?:pt|st|ct|sa|scim|audit)\.(?:[a-z0-9_-]{2,35}\.)?[A-Za-z0-9]{40,44}\b", "dp."),
    _prefixed(
        "aws-session-token",
        r"\b(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdz)[A-Za-z0-9/+=]{80,}",
        "iqojb3jpz2lux2vj",
        "fwogzxivyxdz",
    ),
)

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
