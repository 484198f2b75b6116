"""A held-out, adversarial labelled set for secret detection, written without looking at the detector
or at ``bench/secrets_corpus.py``: recall per kind, false positives per 1,000 non-secrets.

    python -m bench.secrets_holdout [--show] [--seed N]

Everything is generated from a seeded ``random.Random``: no value in it is, or was, a real credential
(tokens are random strings in the shapes providers issue; PEM bodies are random base64 behind the real
ASN.1/OpenSSH prefixes; JWTs are real JSON headers and claims with random signatures).

What is in it
- Secrets (511, 29 kinds), each placed in one of ~40 contexts: .env, ``export``, YAML, JSON,
  TOML, INI, Dockerfile ``ENV``, a Kubernetes Secret's ``stringData``, docker-compose, a GitHub Actions
  ``env:``, shell history, HTTP headers, a URL's query string, a Markdown code block in a PR body,
  Python/JS/Go code, a log line, a traceback, a commit message, a chat turn, German/French/Spanish/
  Chinese/Japanese prose, the very start or end of the text, next to brackets, quotes and full-width
  punctuation. Kinds: GitHub classic and fine-grained PATs and ghs_/ghu_/gho_/ghr_ tokens, AWS access
  key ids (AKIA/ASIA), secret keys and session tokens, Slack bot/user/app/refresh tokens and webhooks,
  Stripe secret/restricted/test keys and webhook secrets, OpenAI (legacy, sk-proj-, sk-svcacct-),
  Anthropic, Cohere, Vercel, GitLab, npm, PyPI, SendGrid, Google API keys and OAuth client secrets,
  JWTs, PEM private keys (RSA/EC/OPENSSH/PKCS#8/encrypted/PGP; also with ``\\n`` escaped inside JSON and
  .env, and indented in YAML), passwords in connection URLs of 16 schemes (percent-encoded and raw
  special characters, JDBC and ADO.NET forms), passwords on command lines and in config, HTTP Basic
  credentials (header, docker ``config.json``), opaque bearer tokens and ``X-API-Key`` headers, tokens in
  query strings, Kubernetes Secret ``data:`` (base64) values, and a handful of other providers
  (Hugging Face, Shopify, DigitalOcean, Telegram, Twilio, Mailgun, Azure Storage, Heroku, Databricks,
  WireGuard private keys).
- Non-secrets (3,010, 28 categories) that look like secrets: commit SHAs (full and short), UUIDs,
  ULIDs, MongoDB ObjectIds, hex and base64 digests, npm/yarn/pnpm integrity strings, pip/poetry/Cargo/
  go.sum hashes, Docker digests, Git LFS pointers, base64 fixtures and data: URIs, SSH/PEM public keys,
  certificates, JWKs, placeholders and masked or truncated tokens, our own ``[redacted: …]`` placeholder,
  secret-manager references (Vault, 1Password, SOPS/Ansible ciphertext, ``secretKeyRef``), environment
  variable references in six languages, ``SECRET_KEY = None`` and friends, password/token prose in five
  languages, ARNs/key ids/secret names, Stripe/Vercel/Slack/OpenAI/Anthropic object ids, cloud resource
  ids and request ids, trace ids, fingerprints, test vectors, long URLs with hashes, minified JS, CSS.

Labelling rules (the ambiguous cases, decided)
- A value is a secret when holding it grants access (or would, had it not been revoked: a revoked
  token is still labelled a secret; nobody can tell from the text). Test-mode keys (``sk_test_``) are
  secrets: they read and write a real test account.
- An AWS access key id (``AKIA…``) alone is labelled a secret: it names a credential, every scanner
  flags it, and it leaks the account id.
- Values whose shape carries no provider marker (a Cohere key, a Vercel token, an AWS secret key, a
  Heroku key that is a UUID, a Twilio auth token, a Datadog key) are in the set only *with* context
  naming them (``COHERE_API_KEY=…``, "my cohere key is …"); without context such a value is
  indistinguishable from an id, and is in neither set.
- Published documentation examples are NOT secrets: AWS's ``AKIAIOSFODNN7EXAMPLE`` /
  ``wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY``, jwt.io's sample token, Stripe's docs test key. They grant
  nothing; redacting them costs little, so the category is reported on its own (``documented-example``).
- Well-known default passwords on a local or compose-internal host (``postgres:postgres@localhost``,
  ``guest:guest`` for RabbitMQ) are NOT secrets (category ``dev-default-credentials``, debatable,
  reported on its own). The word ``password`` used as a placeholder (``user:password@host``) is not one.
- Publishable keys by design are NOT secrets: Stripe ``pk_live_``/``pk_test_``, Sentry DSNs (Sentry
  documents them as safe to expose), public keys, certificates, public JWKs.
- Encrypted values (SOPS ``ENC[…]``, Ansible Vault) are NOT secrets; an *encrypted private key* PEM
  block IS (offline cracking of a weak passphrase is the realistic attack).
- Masked or truncated tokens (``ghp_…abcd``, ``sk-...XyZ1``, prefix plus ``X``s) and our own
  placeholder ``[redacted: github-token]`` are NOT secrets (a scrub must be idempotent).
- Kubernetes Secret ``data:`` values (base64 of a password or token) ARE secrets.

Scoring: a secret counts as found only when, for every occurrence of each of its labelled substrings
(a PEM key's body lines, a URL's password, a token), every character lies inside some finding (the
union of the findings covers it). A non-secret text is a false positive when anything in it is found.
The detector is ``neural_memory.redaction.detectors.find_secrets``, used as a black box. Findings in a
secret-bearing text that touch none of its secrets are counted too (over-redaction), not scored.

Written and first scored before reading the detector's source; nothing here was changed to fit it.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import string
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from neural_memory.redaction.detectors import Finding, find_secrets

ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"
BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
SECRETS_PER_KIND = 14

#: The set's fixed texts (placement templates, PEM shapes, URL schemes, the non-secret categories that
#: are fixed lists), kept as data; the code below draws the random values and puts them in.
_DATA: dict[str, Any] = json.loads((Path(__file__).parent / "data" / "secrets_holdout.json").read_text("utf-8"))


def _pairs(key: str) -> tuple[tuple[str, str], ...]:
    """The ``(context, template)`` pairs under ``key`` of the set's data."""
    return tuple((context, template) for context, template in _DATA[key])


@dataclass(frozen=True)
class Labelled:
    """One text: its kind (a secret's kind or a non-secret's category), the secret substrings it holds
    (empty for a non-secret) and the context template it was placed in."""

    kind: str
    text: str
    secrets: tuple[str, ...] = ()
    context: str = ""


class Gen:
    """Random values in providers' shapes, from one seeded generator."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def pick(self, options: list[str] | tuple[str, ...]) -> str:
        return self.rng.choice(options)

    def between(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def b64_of(self, n_bytes: int, alphabet: str = B64) -> str:
        raw = base64.b64encode(self.rng.randbytes(n_bytes)).decode()
        if alphabet == B64URL:
            raw = raw.replace("+", "-").replace("/", "_").rstrip("=")
        return raw

    def sha(self) -> str:
        return self.s(HEX, 40)

    def uuid(self) -> str:
        h = self.s(HEX, 32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{self.pick(('8', '9', 'a', 'b'))}{h[17:20]}-{h[20:]}"

    def ulid(self) -> str:
        return "01" + self.s(CROCKFORD, 24)

    def base62_checksum(self, body: str) -> str:
        n = zlib.crc32(body.encode())
        digits = ""
        while n:
            n, r = divmod(n, 62)
            digits = (string.digits + string.ascii_letters)[r] + digits
        return digits.rjust(6, "0")

    def account(self) -> str:
        return str(self.between(100000000000, 999999999999))


def wrap(body: str, width: int) -> list[str]:
    return [body[i : i + width] for i in range(0, len(body), width)]


# --- secrets ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TokenKind:
    kind: str
    provider: str  # how people name it in prose ("github", "stripe")
    names: tuple[str, ...]  # variable names it is kept under
    make: Callable[[Gen], str]
    needs_context: bool = False  # a shape with no provider marker: only placed where context names it


def _github_classic(g: Gen) -> str:
    body = g.s(ALNUM, 30)
    return "ghp_" + body + g.base62_checksum(body)


def _github_other(g: Gen) -> str:
    body = g.s(ALNUM, 30)
    return g.pick(["ghs_", "ghu_", "gho_", "ghr_"]) + body + g.base62_checksum(body)


def _github_fine_grained(g: Gen) -> str:
    return "github_pat_11" + g.s(UPPER_ALNUM, 20) + "_" + g.s(ALNUM, 59)


def _slack_token(g: Gen) -> str:
    team, user = str(g.between(10**9, 10**13)), str(g.between(10**9, 10**13))
    form = g.pick(["bot", "user", "app", "refresh", "config"])
    if form == "bot":
        return f"xoxb-{team}-{user}-{g.s(ALNUM, 24)}"
    if form == "user":
        return f"xoxp-{team}-{user}-{g.between(10**11, 10**13)}-{g.s(HEX, 32)}"
    if form == "app":
        return f"xapp-1-A{g.s(UPPER_ALNUM, 10)}-{g.between(10**12, 10**13)}-{g.s(HEX, 64)}"
    if form == "refresh":
        return f"xoxe-1-{g.s(ALNUM, 140)}"
    return f"xoxe.xoxp-1-{g.s(ALNUM, 150)}"


def _stripe(g: Gen) -> str:
    form = g.pick(["sk_live_", "rk_live_", "sk_test_", "whsec_", "sk_live_51"])
    if form == "sk_live_51":
        return "sk_live_51" + g.s(ALNUM, 97)
    if form == "whsec_":
        return "whsec_" + g.s(ALNUM, 32)
    return form + g.s(ALNUM, g.rng.choice((24, 99)))


def _openai(g: Gen) -> str:
    form = g.pick(["legacy", "proj", "proj", "svcacct"])
    if form == "legacy":
        return "sk-" + g.s(ALNUM, 20) + "T3BlbkFJ" + g.s(ALNUM, 20)
    prefix = "sk-proj-" if form == "proj" else "sk-svcacct-"
    return prefix + g.s(B64URL, 74) + "T3BlbkFJ" + g.s(B64URL, 74)


def _anthropic(g: Gen) -> str:
    return g.pick(["sk-ant-api03-", "sk-ant-api03-", "sk-ant-admin01-"]) + g.s(B64URL, 93) + "AA"


def _aws_key_id(g: Gen) -> str:
    return g.pick(["AKIA", "AKIA", "ASIA"]) + g.s(BASE32, 16)


def _aws_secret(g: Gen) -> str:
    return g.s(B64, 40)


def _aws_session(g: Gen) -> str:
    return g.pick(["FwoGZXIvYXdzE", "IQoJb3JpZ2luX2VjE"]) + g.s(B64, g.between(300, 400))


def _gitlab(g: Gen) -> str:
    form = g.pick(["glpat-", "glpat-", "gldt-", "glrt-", "glptt-"])
    if form == "glptt-":
        return form + g.s(HEX, 40)
    return form + g.s(B64URL, 20)


def _npm(g: Gen) -> str:
    body = g.s(ALNUM, 30)
    return "npm_" + body + g.base62_checksum(body)


def _pypi(g: Gen) -> str:
    return g.pick(["pypi-AgEIcHlwaS5vcmcCJ", "pypi-AgENdGVzdC5weXBpLm9yZwIk"]) + g.s(B64URL, g.between(140, 190))


def _sendgrid(g: Gen) -> str:
    return "SG." + g.s(B64URL, 22) + "." + g.s(B64URL, 43)


def _google(g: Gen) -> str:
    if g.rng.random() < 0.25:
        return "GOCSPX-" + g.s(B64URL, 28)
    return "AIza" + g.s(B64URL, 35)


def _jwt(g: Gen) -> str:
    alg = g.pick(["HS256", "RS256", "ES256"])
    header: dict[str, str] = {"alg": alg, "typ": "JWT"}
    if alg != "HS256":
        header = {"kid": g.s(HEX, 16), **header} if g.rng.random() < 0.5 else {**header, "kid": g.s(ALNUM, 22)}
    iat = g.between(1_600_000_000, 1_750_000_000)
    claims = g.pick(
        [
            json.dumps({"sub": g.uuid(), "iat": iat, "exp": iat + 3600, "scope": "repo:write"}),
            json.dumps({"iss": "supabase", "ref": g.s(string.ascii_lowercase, 20), "role": "service_role"}),
            json.dumps({"email": "ops@acme.dev", "aud": "api", "iat": iat}, separators=(",", ":")),
        ]
    )
    sig_bytes = {"HS256": 32, "RS256": 256, "ES256": 64}[alg]

    def b64u(raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    header_json = json.dumps(header, separators=(",", ":"))
    return f"{b64u(header_json.encode())}.{b64u(claims.encode())}.{b64u(g.rng.randbytes(sig_bytes))}"


def _vercel(g: Gen) -> str:
    return g.s(ALNUM, 24)


def _cohere(g: Gen) -> str:
    return g.s(ALNUM, 40)


def _other(g: Gen) -> str:
    form = g.pick(["hf", "shopify", "do", "telegram", "databricks", "mailgun", "linear", "postman", "doppler"])
    return {
        "hf": lambda: "hf_" + g.s(string.ascii_letters, 34),
        "shopify": lambda: g.pick(["shpat_", "shpss_", "shpca_"]) + g.s(HEX, 32),
        "do": lambda: "dop_v1_" + g.s(HEX, 64),
        "telegram": lambda: f"{g.between(10**8, 10**10)}:AA{g.s(B64URL, 33)}",
        "databricks": lambda: "dapi" + g.s(HEX, 32),
        "mailgun": lambda: "key-" + g.s(HEX, 32),
        "linear": lambda: "lin_api_" + g.s(ALNUM, 40),
        "postman": lambda: f"PMAK-{g.s(HEX, 24)}-{g.s(HEX, 34)}",
        "doppler": lambda: "dp.st.prd." + g.s(ALNUM, 43),
    }[form]()


def _contextual_other(g: Gen) -> str:
    return g.pick([g.uuid(), g.s(HEX, 32), g.b64_of(66)])


TOKEN_KINDS: tuple[TokenKind, ...] = (
    TokenKind("github-pat-classic", "github", ("GITHUB_TOKEN", "GH_TOKEN", "GITHUB_PAT", "CI_TOKEN"), _github_classic),
    TokenKind("github-pat-fine-grained", "github", ("GITHUB_TOKEN", "GH_PAT", "RELEASE_TOKEN"), _github_fine_grained),
    TokenKind("github-app-token", "github", ("GITHUB_TOKEN", "GH_INSTALLATION_TOKEN", "TOKEN"), _github_other),
    TokenKind("aws-access-key-id", "aws", ("AWS_ACCESS_KEY_ID", "aws_access_key_id", "AccessKeyId"), _aws_key_id),
    TokenKind("aws-secret-key", "aws secret", ("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key"), _aws_secret, True),
    TokenKind("aws-session-token", "aws session", ("AWS_SESSION_TOKEN", "aws_session_token"), _aws_session, True),
    TokenKind("slack-token", "slack", ("SLACK_BOT_TOKEN", "SLACK_TOKEN", "SLACK_APP_TOKEN"), _slack_token),
    TokenKind("stripe-key", "stripe", ("STRIPE_SECRET_KEY", "STRIPE_API_KEY", "STRIPE_WEBHOOK_SECRET"), _stripe),
    TokenKind("openai-key", "openai", ("OPENAI_API_KEY", "OPENAI_KEY", "LLM_API_KEY"), _openai),
    TokenKind("anthropic-key", "anthropic", ("ANTHROPIC_API_KEY", "CLAUDE_API_KEY"), _anthropic),
    TokenKind("cohere-key", "cohere", ("COHERE_API_KEY", "CO_API_KEY"), _cohere, True),
    TokenKind("vercel-token", "vercel", ("VERCEL_TOKEN", "VERCEL_API_TOKEN"), _vercel, True),
    TokenKind("gitlab-token", "gitlab", ("GITLAB_TOKEN", "CI_JOB_TOKEN_OVERRIDE", "GL_TOKEN"), _gitlab),
    TokenKind("npm-token", "npm", ("NPM_TOKEN", "NODE_AUTH_TOKEN"), _npm),
    TokenKind("pypi-token", "pypi", ("PYPI_TOKEN", "TWINE_PASSWORD", "UV_PUBLISH_TOKEN"), _pypi),
    TokenKind("sendgrid-key", "sendgrid", ("SENDGRID_API_KEY", "EMAIL_API_KEY"), _sendgrid),
    TokenKind("google-api-key", "google", ("GOOGLE_API_KEY", "FIREBASE_API_KEY", "GOOGLE_CLIENT_SECRET"), _google),
    TokenKind("jwt", "jwt", ("SUPABASE_SERVICE_ROLE_KEY", "ACCESS_TOKEN", "ID_TOKEN", "AUTH_TOKEN"), _jwt),
    TokenKind("other-provider", "api", ("API_TOKEN", "HF_TOKEN", "SHOPIFY_TOKEN", "BOT_TOKEN"), _other),
    TokenKind(
        "contextual-api-key",
        "heroku",
        ("HEROKU_API_KEY", "DATADOG_API_KEY", "TWILIO_AUTH_TOKEN", "AZURE_STORAGE_KEY"),
        _contextual_other,
        True,
    ),
)

# Placement templates. {N} a variable name, {n} its lower-case form, {V} the value, {p} the provider.
# Templates marked "named" say which credential it is; the others only hold the value (fine for shapes
# that carry their provider's marker, not for contextual kinds).
NAMED_TEMPLATES: tuple[tuple[str, str], ...] = _pairs("named_templates")
BARE_TEMPLATES: tuple[tuple[str, str], ...] = _pairs("bare_templates")


def _fill(template: str, kind: TokenKind, name: str, value: str) -> str:
    return (
        template.replace("{N}", name).replace("{n}", name.lower()).replace("{p}", kind.provider).replace("{V}", value)
    )


def token_secrets(g: Gen) -> Iterator[Labelled]:
    for k_index, kind in enumerate(TOKEN_KINDS):
        templates = NAMED_TEMPLATES if kind.needs_context else NAMED_TEMPLATES + BARE_TEMPLATES
        per_kind = SECRETS_PER_KIND + (4 if not kind.needs_context else 0)
        for i in range(per_kind):
            context, template = templates[(k_index * 7 + i * 5) % len(templates)]
            value = kind.make(g)
            yield Labelled(kind.kind, _fill(template, kind, g.pick(kind.names), value), (value,), context)


def _slack_webhooks(g: Gen) -> Iterator[Labelled]:
    templates = _pairs("slack_webhook_templates")
    for i in range(SECRETS_PER_KIND):
        secret = g.s(ALNUM, 24)
        url = f"https://hooks.slack.com/services/T{g.s(UPPER_ALNUM, 8)}/B{g.s(UPPER_ALNUM, 10)}/{secret}"
        context, template = templates[i % len(templates)]
        yield Labelled("slack-webhook", template.replace("{U}", url), (url,), context)


# PEM: (label, body prefix, body length, line width, extra header lines)
PEM_FORMS: tuple[tuple[str, str, int, int, str], ...] = tuple(
    (label, prefix, length, width, extra) for label, prefix, length, width, extra in _DATA["pem_forms"]
)


def _pem(g: Gen, form: tuple[str, str, int, int, str]) -> tuple[str, list[str]]:
    label, prefix, length, width, extra = form
    body = prefix + g.s(B64, length - len(prefix) - 2) + "=="
    lines = wrap(body, width)
    header = extra.replace("{IV}", g.s("0123456789ABCDEF", 32))
    block = f"-----BEGIN {label}-----\n{header}" + "\n".join(lines) + f"\n-----END {label}-----"
    if label.startswith("PGP"):
        block = block.replace(f"\n-----END {label}-----", f"\n={g.s(B64, 4)}\n-----END {label}-----")
    return block, lines


def pem_secrets(g: Gen) -> Iterator[Labelled]:
    contexts = (
        "file",
        "chat",
        "json-escaped",
        "dotenv-escaped",
        "yaml-block",
        "pr-markdown",
        "python-literal",
        "k8s-tls",
        "terraform-heredoc",
        "gcp-service-account",
    )
    for i in range(SECRETS_PER_KIND + 10):
        block, lines = _pem(g, PEM_FORMS[i % len(PEM_FORMS)])
        context = contexts[(i * 3) % len(contexts)]
        escaped = block.replace("\n", "\\n")
        text = {
            "file": block + "\n",
            "chat": "can someone check if this is the right deploy key?\n" + block + "\nthanks",
            "json-escaped": json.dumps({"type": "tls", "private_key": block + "\n"}),
            "dotenv-escaped": f'PRIVATE_KEY="{escaped}\\n"\nAPP_ID=123456',
            "yaml-block": "deploy:\n  ssh_key: |\n" + "".join("    " + ln + "\n" for ln in block.split("\n")),
            "pr-markdown": "Rotating the bastion key. Old one below for reference:\n\n```\n" + block + "\n```\n",
            "python-literal": f'PRIVATE_KEY = """{block}\n"""',
            "k8s-tls": "kind: Secret\ntype: kubernetes.io/tls\nstringData:\n  tls.key: |\n"
            + "".join("    " + ln + "\n" for ln in block.split("\n")),
            "terraform-heredoc": f'resource "tls_key" "k" {{\n  private_key_pem = <<EOT\n{block}\nEOT\n}}',
            "gcp-service-account": json.dumps(
                {
                    "type": "service_account",
                    "project_id": "acme-prod-4821",
                    "private_key_id": g.s(HEX, 40),
                    "private_key": block + "\n",
                    "client_email": "deployer@acme-prod-4821.iam.gserviceaccount.com",
                },
                indent=2,
            ),
        }[context]
        yield Labelled("private-key", text, tuple(lines), context)


def _password(g: Gen) -> str:
    form = g.rng.random()
    if form < 0.35:
        word = g.pick(["Summer", "Winter", "Dragon", "Monkey", "Falcon", "Kestrel", "Orchid", "Marmot"])
        return f"{word}{g.between(1990, 2025)}{g.pick(['!', '#', '$', '*', '?', '&'])}"
    if form < 0.5:
        words = [
            g.pick(["correct", "horse", "battery", "staple", "tiger", "lamp", "river", "copper"]) for _ in range(4)
        ]
        return g.pick(["-", ".", "_"]).join(words)
    return g.s(ALNUM + "!#$%^&*()-_=+[]{}<>?~@:", g.between(14, 24))


URL_SCHEMES: tuple[str, ...] = tuple(_DATA["url_schemes"])


def url_password_secrets(g: Gen) -> Iterator[Labelled]:
    for i in range(SECRETS_PER_KIND * 3):
        scheme = URL_SCHEMES[i % len(URL_SCHEMES)]
        password = _password(g)
        raw = i % 4 == 3 and not any(c in password for c in "/?#:[]{}%<> ")
        shown = password if raw else quote(password, safe="!$&'()*+,;=-._~")
        user = "" if scheme.startswith("redis") and i % 2 else g.pick(["app", "admin", "deploy", "svc_api", "root"])
        host = g.pick(["db.internal.acme.dev", "10.0.3.17", "prod-cluster.x1y2z.mongodb.net", "mq.acme.io"])
        url = f"{scheme}://{user}:{shown}@{host}:{g.between(1000, 9999)}/{g.pick(['app', 'orders', '0', 'vhost'])}"
        context = ("dotenv", "yaml", "python", "log", "chat", "compose", "jdbc", "ado-net", "git-credentials")[i % 9]
        text = {
            "dotenv": f"DATABASE_URL={url}",
            "yaml": f"database:\n  url: {url}\n  pool_size: 10\n",
            "python": f'engine = create_engine("{url}", pool_pre_ping=True)',
            "log": f"2024-05-01 12:00:01 INFO worker connecting to {url} (attempt 2)",
            "chat": f"the staging broker is {url} if you need it",
            "compose": f"    environment:\n      CELERY_BROKER_URL: {url}\n",
            "jdbc": f"spring.datasource.url=jdbc:postgresql://{host}:5432/app"
            f"?user={user or 'app'}&password={shown}&ssl=true",
            "ado-net": f"Server=tcp:acme.database.windows.net,1433;Initial Catalog=app;User ID={user or 'sa'};"
            f"Password={password if ';' not in password else shown};Encrypt=True;",
            "git-credentials": f"https://{user or 'ci'}:{shown}@git.acme.dev",
        }[context]
        secret = password if context == "ado-net" and ";" not in password else shown
        where = context if context in ("jdbc", "ado-net") else f"{context}:{scheme}"
        yield Labelled("url-password", text, (secret,), where)


def _shell_quote(password: str) -> str:
    return "'" + password.replace("'", "'\\''") + "'"


def password_secrets(g: Gen) -> Iterator[Labelled]:
    for i in range(SECRETS_PER_KIND * 2):
        pw = _password(g).replace("'", "")
        q = _shell_quote(pw)
        context, text = (
            ("dotenv", f"DB_PASSWORD={pw}"),
            ("yaml", f'database:\n  user: app\n  password: "{pw}"\n'),
            ("json", json.dumps({"username": "admin", "password": pw})),
            ("mysql-history", f"mysql -h db.internal -u root -p{q} orders_production"),
            ("curl-u", f"curl -u deploy:{q} https://ci.acme.dev/job/release/build"),
            ("pgpassword", f"PGPASSWORD={q} psql -h 10.0.3.17 -U app -d app"),
            ("sshpass", f"sshpass -p {q} ssh admin@10.0.3.4 uptime"),
            ("docker-login", f"echo done; docker login -u acme -p {q} registry.acme.dev"),
            ("netrc", f"machine api.acme.dev\n  login deploy\n  password {pw}\n"),
            ("chat", f"the staging admin password is {pw} (don't share)"),
            ("german-chat", f"Das Passwort für den Staging-Admin ist {pw} – bitte nicht teilen."),
            ("python", f'conn = psycopg2.connect(host="db", user="app", password="{pw}")'),
            ("cli-flag", f"./manage.py createsuperuser --username ops --password={q}"),
            ("my-cnf", f"[client]\nuser=root\npassword={pw}\n"),
            ("properties", f"spring.datasource.username=app\nspring.datasource.password={pw}\n"),
            ("redis-conf", f"bind 0.0.0.0\nrequirepass {pw}\n"),
        )[i % 16]
        yield Labelled("password", text, (pw,), context)


def header_secrets(g: Gen) -> Iterator[Labelled]:
    for i in range(SECRETS_PER_KIND * 2):
        user = g.pick(["deploy", "ci-bot", "admin", "svc"])
        creds = base64.b64encode(f"{user}:{_password(g)}".encode()).decode()
        opaque = g.pick([g.s(ALNUM, 40), g.s(HEX, 32), g.b64_of(32, B64URL), g.s(ALNUM, 64)])
        context, text, secret = (
            ("basic-header", f"Authorization: Basic {creds}", creds),
            ("basic-curl", f"curl -H 'Authorization: Basic {creds}' https://registry.acme.dev/v2/_catalog", creds),
            (
                "docker-config",
                json.dumps({"auths": {"registry.acme.dev": {"auth": creds}}}, indent=2),
                creds,
            ),
            (
                "bearer-opaque",
                f"GET /api/v1/orders HTTP/1.1\nHost: api.acme.dev\nAuthorization: Bearer {opaque}\n",
                opaque,
            ),
            ("x-api-key", f"curl https://api.acme.dev/v1/items -H 'X-API-Key: {opaque}'", opaque),
            (
                "python-headers",
                f'headers = {{"Authorization": "Token {opaque}", "Accept": "application/json"}}',
                opaque,
            ),
            ("fetch-js", f"fetch(url, {{ headers: {{ 'x-api-key': '{opaque}' }} }})", opaque),
        )[i % 7]
        yield Labelled("http-auth-header", text, (secret,), context)


def query_secrets(g: Gen) -> Iterator[Labelled]:
    for i in range(SECRETS_PER_KIND):
        value = g.pick([g.s(ALNUM, 40), g.s(HEX, 32), g.b64_of(24, B64URL)])
        param = ("access_token", "api_key", "token", "apikey", "client_secret", "key", "auth")[i % 7]
        url = f"https://api.acme.dev/v1/reports/{g.between(1, 9999)}?{param}={value}&format=json"
        context, text = (
            ("log", f'127.0.0.1 - - [01/May/2024:10:00:00 +0000] "GET {url[20:]} HTTP/1.1" 200 512'),
            ("chat", f"just open {url} in the browser"),
            ("markdown-link", f"See the [report]({url}) for details."),
            ("traceback", f"requests.exceptions.HTTPError: 403 Client Error: Forbidden for url: {url}"),
        )[i % 4]
        yield Labelled("url-query-token", text, (value,), f"{context}:{param}")


def k8s_data_secrets(g: Gen) -> Iterator[Labelled]:
    for i in range(SECRETS_PER_KIND // 2):
        plain = _password(g) if i % 2 else TOKEN_KINDS[i % 4].make(g)
        encoded = base64.b64encode(plain.encode()).decode()
        text = (
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\ndata:\n"
            f"  username: {base64.b64encode(b'app').decode()}\n  password: {encoded}\n"
        )
        yield Labelled("k8s-secret-data", text, (encoded,), "k8s-data")


def misc_secrets(g: Gen) -> Iterator[Labelled]:
    for i in range(SECRETS_PER_KIND // 2):
        key = g.b64_of(64)
        yield Labelled(
            "azure-storage-key",
            f"AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acmelogs{i};"
            f"AccountKey={key};EndpointSuffix=core.windows.net",
            (key,),
            "connection-string",
        )
        wg = g.b64_of(32)
        yield Labelled(
            "wireguard-private-key",
            f"[Interface]\nAddress = 10.8.0.{i + 2}/24\nPrivateKey = {wg}\nListenPort = 51820\n",
            (wg,),
            "wg-conf",
        )


def secrets(seed: int = 44) -> list[Labelled]:
    g = Gen(seed)
    out: list[Labelled] = []
    for source in (
        token_secrets,
        _slack_webhooks,
        pem_secrets,
        url_password_secrets,
        password_secrets,
        header_secrets,
        query_secrets,
        k8s_data_secrets,
        misc_secrets,
    ):
        out.extend(source(g))
    return out


# --- non-secrets ----------------------------------------------------------------------------------------

NonSecretMaker = Callable[[Gen], list[str]]  # one text per case, fresh random values


def _commit_sha(g: Gen) -> list[str]:
    sha = g.sha()
    return [
        f'Revert "Add retry to the uploader"\n\nThis reverts commit {sha}.',
        f"fix: guard empty batch\n\n(cherry picked from commit {sha})",
        f"Fixes the regression introduced in {sha[:7]} (see #{g.between(10, 4000)})",
        f"Bisected: good at {sha[:12]}, bad at {g.sha()[:12]}",
        f"Merge {sha} into {g.sha()}",
        f"https://github.com/acme/api/compare/{sha[:7]}...{g.sha()[:7]}",
        f"git checkout {sha} -- src/billing/",
        f"commit {sha}\nAuthor: Dana Ops <dana@acme.dev>\nDate:   Tue May 7 10:00:00 2024 +0200\n\n    Bump deps",
        f"{sha[:10]} (HEAD -> main, origin/main) Merge pull request #{g.between(1, 999)} from acme/fix",
        f"Squashed commits:\n* {g.sha()[:7]} wip\n* {g.sha()[:7]} tests\n* {sha[:7]} review",
        f"submodule vendor/proto now at {sha}",
        f"ref: refs/heads/main\n{sha} refs/remotes/origin/main",
    ]


def _uuid(g: Gen) -> list[str]:
    u = g.uuid()
    return [
        f"request_id={u}",
        f'{{"id": "{u}", "status": "active"}}',
        f"x-request-id: {u}",
        f"workspace {u} deleted by {g.uuid()}",
        f'"client_id": "{u}", "tenant_id": "{g.uuid()}"',
        f"{{{u.upper()}}}",
        f"x-amzn-RequestId: {u}",
        f"AWS_LAMBDA_LOG_STREAM_NAME=2024/05/01/[$LATEST]{g.s(HEX, 32)}",
        f"correlation_id: {u}",
        f"subscription {u} (resource group rg-prod)",
    ]


def _ulid_and_ids(g: Gen) -> list[str]:
    return [
        f"event {g.ulid()} queued",
        f'"_id": {{"$oid": "{g.s(HEX, 24)}"}}',
        f"job_id={g.ulid()}",
        f"nanoid: {g.s(B64URL, 21)}",
        f"snowflake id {g.between(10**17, 10**18)}",
        f"Firebase key -N{g.s(B64URL, 19)}",
        f"node_id: PR_kwDO{g.s(B64URL, 22)}",
        f"MDQ6VXNlcj{g.s(ALNUM, 6)}= is the legacy node id",
        f"cf-ray: {g.s(HEX, 16)}-FRA",
        f"instance i-0{g.s(HEX, 16)} in sg-0{g.s(HEX, 16)}, subnet-0{g.s(HEX, 16)}, vpc-{g.s(HEX, 8)}",
        f"ami-0{g.s(HEX, 16)}",
        f"pod api-{g.s('bcdfghjklmnpqrstvwxz2456789', 10)}-{g.s('bcdfghjklmnpqrstvwxz2456789', 5)} restarted",
    ]


def _digest(g: Gen) -> list[str]:
    return [
        f"{g.s(HEX, 64)}  dist/neural_memory-0.4.1.tar.gz",
        f"sha512: {g.s(HEX, 128)}",
        f'ETag: "{g.s(HEX, 32)}"',
        f"Content-MD5: {g.b64_of(16)}",
        f"checksum: sha256:{g.s(HEX, 64)}",
        f"x-amz-checksum-sha256: {g.b64_of(32)}",
        f"SHA256 ({g.pick(['app.zip', 'layer.zip'])}) = {g.s(HEX, 64)}",
        f"blake3 {g.s(HEX, 64)}",
        f"md5sum: {g.s(HEX, 32)}",
        f"The artifact hash changed from {g.s(HEX, 64)} to {g.s(HEX, 64)}.",
        f"CodeSha256: {g.b64_of(32)}",
    ]


def _integrity(g: Gen) -> list[str]:
    pkg = g.pick(["lodash", "react-dom", "@types/node", "esbuild", "left-pad", "zod"])
    ver = f"{g.between(0, 20)}.{g.between(0, 30)}.{g.between(0, 9)}"
    sha512 = g.b64_of(64)
    return [
        f'"node_modules/{pkg}": {{\n  "version": "{ver}",\n  "resolved": '
        f'"https://registry.npmjs.org/{pkg}/-/{pkg.split("/")[-1]}-{ver}.tgz",\n'
        f'  "integrity": "sha512-{sha512}"\n}}',
        f'{pkg}@^{ver}:\n  version "{ver}"\n  resolved "https://registry.yarnpkg.com/{pkg}/-/{pkg}-{ver}.tgz#'
        f'{g.sha()}"\n  integrity sha512-{sha512}',
        f"  /{pkg}@{ver}:\n    resolution: {{integrity: sha512-{sha512}}}",
        f'<script src="https://cdn.jsdelivr.net/npm/{pkg}@{ver}/dist/index.min.js" '
        f'integrity="sha384-{g.b64_of(48)}" crossorigin="anonymous"></script>',
        f'"integrity": "sha1-{g.b64_of(20)}"',
    ]


def _lockfile_hash(g: Gen) -> list[str]:
    pkg = g.pick(["requests-toolbelt", "pydantic-core", "anyio", "serde", "tokio", "golang.org/x/net"])
    return [
        f"{pkg}==2.{g.between(0, 9)}.0 \\\n    --hash=sha256:{g.s(HEX, 64)} \\\n    --hash=sha256:{g.s(HEX, 64)}",
        f'files = [\n    {{file = "{pkg}-1.0-py3-none-any.whl", hash = "sha256:{g.s(HEX, 64)}"}},\n]',
        f'[[package]]\nname = "{pkg}"\nversion = "1.{g.between(0, 40)}.0"\nsource = '
        f'"registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "{g.s(HEX, 64)}"',
        f"{pkg} v0.{g.between(1, 30)}.0 h1:{g.b64_of(32)}\n{pkg} v0.{g.between(1, 30)}.0/go.mod h1:{g.b64_of(32)}",
        f'"dist": {{"type": "zip", "shasum": "{g.sha()}", "reference": "{g.sha()}"}}',
        f"  remote: https://rubygems.org/\n  specs:\n    rack (3.0.{g.between(0, 9)})\n    sha256={g.s(HEX, 64)}",
    ]


def _docker_digest(g: Gen) -> list[str]:
    d = g.s(HEX, 64)
    return [
        f"FROM python:3.12-slim@sha256:{d}",
        f"image: ghcr.io/acme/api@sha256:{d}",
        f"Digest: sha256:{d}\nStatus: Downloaded newer image for node:20-alpine",
        f'{g.s(HEX, 12)}   acme/api:latest   "gunicorn app:app"   2 hours ago   Up 2 hours',
        f"writing image sha256:{d} done",
        f"container {g.s(HEX, 64)} exited with code 137",
    ]


def _lfs_pointer(g: Gen) -> list[str]:
    return [f"version https://git-lfs.github.com/spec/v1\noid sha256:{g.s(HEX, 64)}\nsize {g.between(1000, 10**9)}\n"]


def _base64_fixture(g: Gen) -> list[str]:
    blob = g.b64_of(g.between(24, 180))
    return [
        f'PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk{g.s(B64, 12)}AAAAABJRU5ErkJggg=="',
        f'payload = base64.b64decode("{blob}")',
        f'def test_decode():\n    assert decode("{blob}") == EXPECTED',
        f'{{"body": "{blob}", "isBase64Encoded": true}}',
        f"background: url(data:image/png;base64,{blob});",
        f'<img src="data:image/gif;base64,R0lGODlh{blob}">',
        f"src: url(data:font/woff2;base64,d09GMgABAAAA{blob}) format('woff2');",
        f'FIXTURE_BYTES = b"{blob}"',
        f"//# sourceMappingURL=data:application/json;base64,eyJ2ZXJzaW9uIjozLCJzb3VyY2VzIjpb{blob}",
        f"protobuf (base64): {blob}",
        f'"Data": "{blob}"  // SQS message body sample',
    ]


def _public_key(g: Gen) -> list[str]:
    host = g.pick(["dana@laptop", "ci@runner-7", "deploy", "root@bastion"])
    pem_body = "\n".join(wrap("MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA" + g.s(B64, 348) + "IDAQAB", 64))
    cert_body = "\n".join(wrap("MIIDdzCCAl+gAwIBAgIE" + g.s(B64, 1100) + "==", 64))
    return [
        f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{g.s(B64, 510)} {host}",
        f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{g.s(B64, 43)} {host}",
        f"github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{g.s(B64, 43)}",
        f"ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBB{g.s(B64, 118)}= {host}",
        f"-----BEGIN PUBLIC KEY-----\n{pem_body}\n-----END PUBLIC KEY-----",
        f"-----BEGIN CERTIFICATE-----\n{cert_body}\n-----END CERTIFICATE-----",
        f"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBG{g.s(B64, 58)}\n{g.s(B64, 64)}\n=AbCd\n"
        "-----END PGP PUBLIC KEY BLOCK-----",
        json.dumps({"keys": [{"kty": "RSA", "kid": g.s(HEX, 16), "use": "sig", "n": g.s(B64URL, 342), "e": "AQAB"}]}),
        f"[Peer]\nPublicKey = {g.b64_of(32)}\nAllowedIPs = 10.8.0.0/24\nEndpoint = vpn.acme.dev:51820",
        f"age recipient: age1{g.s('qpzry9x8gf2tvdw0s3jn54khce6mua7l', 58)}",
        f"-----BEGIN CERTIFICATE REQUEST-----\n{cert_body[:400]}\n-----END CERTIFICATE REQUEST-----",
    ]


def _placeholder(g: Gen) -> list[str]:
    return [
        "GITHUB_TOKEN=<your-token>",
        "export OPENAI_API_KEY=${OPENAI_API_KEY}",
        "      GH_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
        "token: {{ secrets.NPM_TOKEN }}",
        'api_key = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"',
        'password: "****"',
        "AWS_SECRET_ACCESS_KEY=YOUR_SECRET_ACCESS_KEY_HERE",
        "OPENAI_API_KEY=sk-...",
        "GITHUB_TOKEN=ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
        "STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx",
        "Authorization: Bearer <token>",
        "Authorization: Bearer $TOKEN",
        "DATABASE_URL=postgres://user:password@localhost:5432/db",
        "DATABASE_URL=postgres://USER:PASSWORD@HOST:PORT/DATABASE",
        "REDIS_URL=redis://:${REDIS_PASSWORD}@redis:6379/0",
        "mongodb+srv://<username>:<password>@cluster0.abcde.mongodb.net/?retryWrites=true",
        "the token [redacted: github-token] was rotated",
        "key=[redacted: aws-access-key-id] secret=[redacted: aws-secret-key]",
        'api_key="<redacted>"',
        "TOKEN=changeme",
        "password=REPLACE_ME",
        "SECRET_KEY=dummy-secret-key-for-tests",
        '"api_key": "test"',
        "AKIAXXXXXXXXXXXXXXXX",
        f"ANTHROPIC_API_KEY=sk-ant-api03-...{g.s(ALNUM, 4)}",
        f"the old token ended in …{g.s(ALNUM, 4)} (ghp_…{g.s(ALNUM, 4)})",
        f"key sk-...{g.s(ALNUM, 4)} was revoked",
        "password: vault:secret/data/db#password",
        "password: {{ .Values.postgresql.auth.password }}",
        "password = %(DB_PASSWORD)s",
        'PGPASSWORD="$(cat /run/secrets/db_password)" psql -h db',
        "POSTGRES_PASSWORD_FILE: /run/secrets/postgres_password",
        "        valueFrom:\n          secretKeyRef:\n            name: db-credentials\n            key: password",
        "OPENAI_API_KEY=op://Engineering/OpenAI/credential",
        f"password: ENC[AES256_GCM,data:{g.b64_of(12)},iv:{g.b64_of(32)},tag:{g.b64_of(16)},type:str]",
        "$ANSIBLE_VAULT;1.1;AES256\n" + "\n".join(g.s(HEX, 80) for _ in range(4)),
        "api_key: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  " + g.s(HEX, 80),
        "password: !!python/object:os.environ DB_PASSWORD",
        "Bearer ey...",
        "xoxb-your-bot-token",
        "SLACK_WEBHOOK_URL=https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN PRIVATE KEY-----\n<your key here>\n-----END PRIVATE KEY-----",
    ]


def _env_reference(g: Gen) -> list[str]:
    name = g.pick(["GITHUB_TOKEN", "STRIPE_SECRET_KEY", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "OPENAI_API_KEY"])
    return [
        f'token = os.environ["{name}"]',
        f'api_key = os.getenv("{name}", "")',
        f"const key = process.env.{name};",
        f'key := os.Getenv("{name}")',
        f'password = ENV.fetch("{name}")',
        f'String pw = System.getenv("{name}");',
        f"$env:{name}",
        f'let token = std::env::var("{name}")?;',
        "password=settings.DATABASE_PASSWORD",
        "client = OpenAI(api_key=api_key)",
        "self.token = token",
        'headers = {"Authorization": f"Bearer {token}"}',
        'curl -u "$CI_USER:$CI_PASSWORD" https://ci.acme.dev/api',
        'mysql -u root -p"$MYSQL_ROOT_PASSWORD" app',
        f"echo ${name} | docker login --username acme --password-stdin",
        f"aws_secret_access_key = {{{{ {name.lower()} }}}}",
        f'secret = boto3.client("secretsmanager").get_secret_value(SecretId="prod/{name.lower()}")',
        f"      - name: {name}\n        value: ${{{{ secrets.{name} }}}}",
        f"[ -z \"${name}\" ] && echo '{name} is not set' && exit 1",
    ]


def _none_assignments(g: Gen) -> list[str]:
    return list(_DATA["none_assignment"])


def _prose(g: Gen) -> list[str]:
    subject = g.pick(["password", "API key", "token", "secret", "access key", "session token", "credentials"])
    return [
        f"Added a {subject} reset flow with an email link.",
        f"The {subject} expired after 1h; we now refresh at 50 minutes.",
        f"Rotate the {subject} every 90 days (see runbook).",
        f"Your {subject} must be at least 12 characters and contain a digit.",
        f"fix: {subject} was not invalidated on logout",
        "Forgot your password? Click 'Reset password' on the login page.",
        "Use a personal access token instead of your password when pushing over HTTPS.",
        "Error: Invalid API key provided. Check your dashboard for the correct key.",
        '{"error": "invalid_grant", "error_description": "The token has expired"}',
        '{"access_token": null, "token_type": "bearer", "expires_in": 3600}',
        "grant_type=password&username=dana&scope=openid",
        "Passwort vergessen? Wir senden Ihnen einen Link zum Zurücksetzen.",
        "Le jeton d'accès a expiré, reconnectez-vous.",
        "La contraseña debe tener al menos 12 caracteres.",
        "令牌已过期，请重新登录。",
        "パスワードをリセットしました。",
        f"We store only a salted hash of the {subject}; the plaintext never leaves the client.",
        f"secret rotation: the {subject} for staging was rotated by @dana on Friday",
        "The webhook secret is checked with hmac.compare_digest against X-Hub-Signature-256.",
        "Tokens are prefixed (ghp_, github_pat_) so secret scanning can find them.",
    ]


def _key_ids(g: Gen) -> list[str]:
    acct, u = g.account(), g.uuid()
    return [
        f'kms_key_id = "arn:aws:kms:eu-west-1:{acct}:key/{u}"',
        f'secret_name = "prod/api/{g.pick(["stripe", "github", "db"])}"',
        f"SecretId: arn:aws:secretsmanager:us-east-1:{acct}:secret:prod/db-{g.s(ALNUM, 6)}",
        '"KeyId": "alias/neural-memory-data"',
        f"key_id: {g.s('0123456789ABCDEF', 16)}",
        'ssh_key_name = "deploy-2024"',
        'access_key_param = "/ci/aws/access-key-id"',
        f"role_arn = arn:aws:iam::{acct}:role/github-actions-deploy",
        f'aws_account_id = "{acct}"',
        f'"kid": "{g.s(HEX, 40)}"',
        f"private_key_id: {g.s(HEX, 40)}",
        f"arn:aws:lambda:us-east-1:{acct}:function:nm-ingest:live",
        f"gpg: using RSA key {g.s('0123456789ABCDEF', 40)}",
        f"projects/acme-prod/secrets/stripe-key/versions/{g.between(1, 30)}",
        f"https://acme-vault.vault.azure.net/secrets/db-password/{g.s(HEX, 32)}",
    ]


def _stripe_ids(g: Gen) -> list[str]:
    return [
        f"Refunded ch_{g.s(ALNUM, 24)} for customer cus_{g.s(ALNUM, 14)}",
        f"payment_intent pi_{g.s(ALNUM, 24)} succeeded",
        f"invoice in_{g.s(ALNUM, 24)} (subscription sub_{g.s(ALNUM, 24)})",
        f'"price": "price_{g.s(ALNUM, 24)}", "product": "prod_{g.s(ALNUM, 14)}"',
        f"evt_{g.s(ALNUM, 24)} delivered to we_{g.s(ALNUM, 24)}",
        f"connected account acct_{g.s(ALNUM, 16)}",
        f"pm_{g.s(ALNUM, 24)} attached, seti_{g.s(ALNUM, 24)}",
        f"Request req_{g.s(ALNUM, 14)}: idempotency key reused",
        f"STRIPE_PUBLISHABLE_KEY=pk_live_{g.s(ALNUM, 99)}",
        f"const stripe = Stripe('pk_test_{g.s(ALNUM, 24)}');",
        f"txn_{g.s(ALNUM, 24)} balance transaction",
    ]


def _vercel_slack_ids(g: Gen) -> list[str]:
    return [
        f"deployment dpl_{g.s(ALNUM, 28)} is READY",
        f'"projectId": "prj_{g.s(ALNUM, 28)}", "orgId": "team_{g.s(ALNUM, 24)}"',
        f"https://api-{g.s(string.ascii_lowercase + string.digits, 9)}-acme.vercel.app",
        f"https://web-git-feature-login-acme.vercel.app/?_vercel_share={g.s(ALNUM, 32)}",
        f"posted in <#C0{g.s(UPPER_ALNUM, 9)}|deploys> by <@U0{g.s(UPPER_ALNUM, 9)}>",
        f"https://acme.slack.com/archives/C0{g.s(UPPER_ALNUM, 9)}/p{g.between(10**15, 10**16)}",
        f'"team_id": "T0{g.s(UPPER_ALNUM, 8)}", "api_app_id": "A0{g.s(UPPER_ALNUM, 9)}"',
        f"thread_ts={g.between(1_600_000_000, 1_750_000_000)}.{g.between(100000, 999999)}",
        f"Slack channel id C0{g.s(UPPER_ALNUM, 8)}, workspace E0{g.s(UPPER_ALNUM, 8)}",
    ]


def _ai_ids(g: Gen) -> list[str]:
    return [
        f'"id": "chatcmpl-{g.s(ALNUM, 29)}"',
        f"file-{g.s(ALNUM, 24)} uploaded for fine-tuning ftjob-{g.s(ALNUM, 24)}",
        f"assistant asst_{g.s(ALNUM, 24)} run run_{g.s(ALNUM, 24)} on thread_{g.s(ALNUM, 24)}",
        f'"id": "msg_01{g.s(ALNUM, 22)}", "type": "message", "role": "assistant"',
        f'"type": "tool_use", "id": "toolu_01{g.s(ALNUM, 22)}"',
        f"request-id: req_{g.s(ALNUM, 24)}",
        f"model ft:gpt-4o-mini-2024-07-18:acme::{g.s(ALNUM, 8)}",
        f"batch_{g.s(HEX, 32)} completed",
        f"x-request-id: {g.s(HEX, 32)}",
    ]


def _ops_ids(g: Gen) -> list[str]:
    return [
        f"traceparent: 00-{g.s(HEX, 32)}-{g.s(HEX, 16)}-01",
        f"x-amz-cf-id: {g.b64_of(42, B64URL)}==",
        f"x-amz-id-2: {g.b64_of(57)}",
        f"x-amz-request-id: {g.s('0123456789ABCDEF', 16)}",
        f"dd.trace_id={g.between(10**18, 10**19)} dd.span_id={g.between(10**18, 10**19)}",
        f"Sentry event {g.s(HEX, 32)} (issue ACME-API-{g.s(UPPER_ALNUM, 3)})",
        f"SENTRY_DSN=https://{g.s(HEX, 32)}@o{g.between(10**5, 10**7)}.ingest.sentry.io/{g.between(10**5, 10**7)}",
        f"RUN_ID={g.between(10**9, 10**10)} RUN_ATTEMPT=1 GITHUB_SHA={g.sha()}",
        f"cloudtrail eventID {g.uuid()} accessKeyId ASIA-redacted-by-aws",
        f"log stream 2024/05/01/[$LATEST]{g.s(HEX, 32)}",
        f"session {g.s(HEX, 64)} ended (sha256 of the cookie)",
    ]


def _fingerprints(g: Gen) -> list[str]:
    return [
        f"256 SHA256:{g.b64_of(32).rstrip('=')} dana@laptop (ED25519)",
        "MD5:" + ":".join(g.s(HEX, 2) for _ in range(16)),
        "SHA256 Fingerprint=" + ":".join(g.s("0123456789ABCDEF", 2) for _ in range(32)),
        "Key fingerprint = " + " ".join(g.s("0123456789ABCDEF", 4) for _ in range(10)),
        f"The authenticity of host 'bastion (10.0.0.5)' can't be established.\n"
        f"ED25519 key fingerprint is SHA256:{g.b64_of(32).rstrip('=')}.",
        f"thumbprint: {g.s('0123456789ABCDEF', 40)}",
    ]


def _test_vectors(g: Gen) -> list[str]:
    return [
        'assert hashlib.sha256(b"abc").hexdigest() == '
        '"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"',
        'assert md5(b"").hexdigest() == "d41d8cd98f00b204e9800998ecf8427e"',
        "EMPTY_SHA1 = 'da39a3ee5e6b4b0d3255bfef95601890afd80709'",
        f"MAGIC = 0x{g.s('0123456789ABCDEF', 16)}",
        f"CRC_TABLE = [0x{g.s(HEX, 8)}, 0x{g.s(HEX, 8)}, 0x{g.s(HEX, 8)}, 0x{g.s(HEX, 8)}]",
        r'TOKEN_RE = re.compile(r"^ghp_[A-Za-z0-9]{36}$")',
        r"pattern: '(?i)aws(.{0,20})?(?-i)[0-9a-zA-Z\/+]{40}'",
        f'expected = bytes.fromhex("{g.s(HEX, 64)}")',
        f'SEED = "{g.s(HEX, 32)}"  # deterministic test seed',
        f'nonce = "{g.b64_of(12)}"  # fixed for the golden file',
        f"hmac({g.s(HEX, 8)}) = {g.s(HEX, 64)}  # RFC 4231 test case {g.between(1, 7)}",
        f'random.seed("{g.s(ALNUM, 16)}")',
    ]


def _long_urls(g: Gen) -> list[str]:
    sha = g.sha()
    return [
        f"https://github.com/acme/api/blob/{sha}/src/billing/invoice.py#L120-L140",
        f"https://github.com/acme/api/actions/runs/{g.between(10**9, 10**10)}/job/{g.between(10**10, 10**11)}",
        f"https://cdn.acme.dev/static/js/main.{g.s(HEX, 8)}.chunk.js",
        f"https://docs.google.com/document/d/{g.s(B64URL, 44)}/edit#heading=h.{g.s(ALNUM, 12)}",
        f"https://www.youtube.com/watch?v={g.s(B64URL, 11)}&t=42s",
        f"https://www.figma.com/file/{g.s(ALNUM, 22)}/Design-System?node-id=12%3A{g.between(1, 999)}",
        f"https://www.loom.com/share/{g.s(HEX, 32)}",
        f"https://acme.atlassian.net/browse/OPS-{g.between(1, 9999)}?focusedCommentId={g.between(10**5, 10**6)}",
        f"https://storage.googleapis.com/acme-artifacts/{g.s(HEX, 40)}/wheel.whl",
        f"https://s3.eu-west-1.amazonaws.com/acme-uploads/{g.uuid()}/{g.s(HEX, 64)}.png",
        f"https://sentry.io/organizations/acme/issues/{g.between(10**9, 10**10)}/?project={g.between(10**6, 10**7)}"
        f"&query=is%3Aunresolved&statsPeriod=14d",
        f"https://app.datadoghq.eu/apm/trace/{g.between(10**18, 10**19)}?spanID={g.between(10**18, 10**19)}",
        f"https://example.com/?utm_source=newsletter&utm_medium=email&utm_campaign={g.s(ALNUM, 20)}",
        f"https://github.com/acme/api/pull/{g.between(1, 3000)}/commits/{sha}",
        f"https://gist.github.com/dana/{g.s(HEX, 32)}",
        f"https://bit.ly/{g.s(ALNUM, 7)}",
    ]


def _minified_js(g: Gen) -> list[str]:
    mods = ",".join(
        f'"{g.s(HEX, 8)}":function(e,t,n){{"use strict";n.d(t,{{{g.s(string.ascii_letters, 1)}:function(){{return '
        f'{g.s(string.ascii_letters, 2)}}}}});var r=n("{g.s(HEX, 4)}"),o=n.n(r)}}'
        for _ in range(g.between(2, 5))
    )
    return [
        f"(self.webpackChunkacme=self.webpackChunkacme||[]).push([[{g.between(100, 999)}],{{{mods}}}]);",
        f'!function(e,t){{"object"==typeof exports?module.exports=t():e.{g.s(string.ascii_letters, 6)}=t()}}'
        f'(this,function(){{var e="{g.s(ALNUM, 32)}";return e.split("").reverse().join("")}});',
        f'var _0x{g.s(HEX, 4)}=["{g.s(ALNUM, 12)}","{g.s(ALNUM, 16)}"];',
        f'__webpack_require__.p="/static/";__webpack_require__.h=function(){{return "{g.s(HEX, 20)}"}};',
        f'import{{a as {g.s(string.ascii_letters, 2)}}}from"./chunk-{g.s(ALNUM, 8).upper()}.js";',
    ]


def _css(g: Gen) -> list[str]:
    def c() -> str:
        return "#" + g.s(HEX, g.rng.choice((3, 6, 6, 8)))

    return [
        f".btn{{color:{c()};background:{c()};border:1px solid {c()}}}",
        f":root {{\n  --brand-500: {c()};\n  --brand-600: {c()};\n  --surface: {c()};\n}}",
        f'<div class="bg-[{c()}] text-[{c()}] hover:bg-[{c()}]">',
        f'fill="{c()}" stroke="{c()}"',
        f".css-{g.s(string.ascii_lowercase + string.digits, 6)}{{display:flex}}"
        f".sc-{g.s(ALNUM, 6)}.{g.s(ALNUM, 6)}{{margin:0}}",
        f"color: rgba({g.between(0, 255)}, {g.between(0, 255)}, {g.between(0, 255)}, 0.{g.between(1, 9)});",
    ]


def _documented_examples(g: Gen) -> list[str]:
    return list(_DATA["documented_example"])


def _dev_defaults(g: Gen) -> list[str]:
    return list(_DATA["dev_default_credentials"])


def _urls_without_password(g: Gen) -> list[str]:
    return [
        "git@github.com:acme/api.git",
        f"https://dana@bitbucket.org/acme/{g.pick(['api', 'web'])}.git",
        "postgres://app@db.internal:5432/app?sslmode=require",
        "ssh://git@gitlab.acme.dev:2222/platform/infra.git",
        "mongodb://mongo-0.mongo,mongo-1.mongo:27017/app?replicaSet=rs0",
        "amqps://mq.acme.io:5671/vhost",
        f"https://acme.dev/reset?email=dana%40acme.dev&expires={g.between(10**9, 2 * 10**9)}",
        "redis://redis.internal:6379/2",
        f"jdbc:postgresql://db.internal:5432/app?user=app&ssl=true&connectTimeout={g.between(1, 30)}",
        "ftp://ftp.debian.org/debian/",
    ]


def _mixed_documents(g: Gen) -> list[str]:
    """Longer texts mixing several look-alikes, as a PR body or a CI log would."""
    return [
        f"## Summary\nBumps the base image to `python:3.12-slim@sha256:{g.s(HEX, 64)}` and regenerates the lock "
        f"file ({g.between(10, 90)} hashes changed).\n\n## Testing\n- CI run {g.between(10**9, 10**10)}\n"
        f"- Deployed {g.sha()[:7]} to staging as dpl_{g.s(ALNUM, 28)}\n\nRequest id {g.uuid()}",
        f"Run actions/checkout@{g.sha()}\n  with:\n    token: ***\n    ref: {g.sha()}\n"
        f"Syncing repository: acme/api\nGetting Git version info\n  /usr/bin/git version 2.43.0\n"
        f"Temporarily overriding HOME='/home/runner/work/_temp/{g.uuid()}'",
        f"Downloading https://files.pythonhosted.org/packages/{g.s(HEX, 2)}/{g.s(HEX, 2)}/{g.s(HEX, 60)}/"
        f"pydantic_core-2.18.2-cp312-cp312-manylinux_2_17_x86_64.whl (2.1 MB)",
        f"Incident 2024-05-01: the token expired at 10:02, the retry storm ({g.between(100, 999)} req/s) hit "
        f"cus_{g.s(ALNUM, 14)}; fixed in {g.sha()[:7]}. Trace {g.s(HEX, 32)}.",
        f"Terraform will perform the following actions:\n  # aws_kms_key.data will be created\n"
        f'  + resource "aws_kms_key" "data" {{\n      + arn    = (known after apply)\n'
        f'      + key_id = "{g.uuid()}"\n    }}',
    ]


NON_SECRET_CATEGORIES: tuple[tuple[str, NonSecretMaker, int], ...] = (
    # (category, cases, draws): "draws" texts, each one case drawn at random with fresh random values;
    # 0 means every case once (fixed lists: a repeated case with another random suffix is no new evidence).
    ("commit-sha", _commit_sha, 140),
    ("uuid", _uuid, 140),
    ("ulid-and-ids", _ulid_and_ids, 140),
    ("digest", _digest, 140),
    ("npm-integrity", _integrity, 140),
    ("lockfile-hash", _lockfile_hash, 140),
    ("docker-digest", _docker_digest, 140),
    ("git-lfs-pointer", _lfs_pointer, 140),
    ("base64-fixture", _base64_fixture, 140),
    ("public-key", _public_key, 140),
    ("placeholder", _placeholder, 0),
    ("env-reference", _env_reference, 60),
    ("none-assignment", _none_assignments, 0),
    ("password-prose", _prose, 60),
    ("key-id-arn-name", _key_ids, 140),
    ("stripe-object-id", _stripe_ids, 140),
    ("vercel-slack-id", _vercel_slack_ids, 140),
    ("ai-object-id", _ai_ids, 140),
    ("ops-id", _ops_ids, 140),
    ("fingerprint", _fingerprints, 140),
    ("test-vector", _test_vectors, 140),
    ("long-url", _long_urls, 140),
    ("minified-js", _minified_js, 140),
    ("css", _css, 140),
    ("url-without-password", _urls_without_password, 0),
    ("mixed-document", _mixed_documents, 140),
    ("documented-example", _documented_examples, 0),
    ("dev-default-credentials", _dev_defaults, 0),
)


def non_secrets(seed: int = 44) -> list[Labelled]:
    g = Gen(seed + 1)
    out: list[Labelled] = []
    for category, cases, draws in NON_SECRET_CATEGORIES:
        texts = cases(g) if draws == 0 else [g.pick(cases(g)) for _ in range(draws)]
        out.extend(Labelled(category, t) for t in dict.fromkeys(texts))  # in order, duplicates once
    return out


# --- scoring ------------------------------------------------------------------------------------------------


def covered(text: str, secret: str, findings: list[Finding]) -> bool:
    """Every character of every occurrence of ``secret`` lies inside some finding."""
    inside = bytearray(len(text))
    for f in findings:
        inside[f.start : f.end] = b"\x01" * (f.end - f.start)
    start = text.find(secret)
    if start < 0:
        raise ValueError(f"label not in text: {secret!r}")
    while start >= 0:
        if not all(inside[start : start + len(secret)]):
            return False
        start = text.find(secret, start + 1)
    return True


def _overlaps_a_secret(text: str, secrets_: tuple[str, ...], f: Finding) -> bool:
    for s in secrets_:
        start = text.find(s)
        while start >= 0:
            if f.start < start + len(s) and start < f.end:
                return True
            start = text.find(s, start + 1)
    return False


def _show(prefix: str, item: Labelled, findings: list[Finding]) -> None:
    got = [(f.kind, item.text[f.start : f.end][:60]) for f in findings]
    print(f"{prefix} {item.kind} [{item.context}]: {item.text[:400]!r} -> {got}")


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.secrets_holdout", description=__doc__)
    parser.add_argument("--show", action="store_true", help="print every miss and false positive")
    parser.add_argument("--seed", type=int, default=44)
    args = parser.parse_args()
    positives, negatives = secrets(args.seed), non_secrets(args.seed)
    found: Counter[str] = Counter()
    total: Counter[str] = Counter()
    partial = over_redacted = 0
    for item in positives:
        findings = find_secrets(item.text)
        total[item.kind] += 1
        if all(covered(item.text, s, findings) for s in item.secrets):
            found[item.kind] += 1
        else:
            partial += bool(findings)
            if args.show:
                _show("MISS", item, findings)
        if any(not _overlaps_a_secret(item.text, item.secrets, f) for f in findings):
            over_redacted += 1
            if args.show:
                _show("OVER", item, [f for f in findings if not _overlaps_a_secret(item.text, item.secrets, f)])
    flagged: Counter[str] = Counter()
    by_category: Counter[str] = Counter(item.kind for item in negatives)
    for item in negatives:
        findings = find_secrets(item.text)
        if findings:
            flagged[item.kind] += 1
            if args.show:
                _show("FALSE POSITIVE", item, findings)
    for kind in sorted(total):
        print(f"{kind:26} {found[kind]:4} / {total[kind]:4}  recall {found[kind] / total[kind]:.3f}")
    recall = sum(found.values()) / sum(total.values())
    misses = sum(total.values()) - sum(found.values())
    print(
        f"secrets: {sum(total.values())} of {len(total)} kinds; recall {recall:.4f} "
        f"({misses} missed, {partial} of them partly found)"
    )
    print(f"secret-bearing texts with a finding beyond their secrets: {over_redacted}")
    print("non-secrets flagged, per category:")
    for category in sorted(by_category):
        print(f"  {category:26} {flagged[category]:4} / {by_category[category]:4}")
    fps = sum(flagged.values())
    print(f"non-secrets: {len(negatives)}; false positives {fps} ({1000 * fps / len(negatives):.2f} per 1,000)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
