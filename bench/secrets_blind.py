"""A third, blind evaluation of the secret detector (issue 44): ``find_secrets`` as a black box.

    python -m bench.secrets_blind [--show] [--seed N]

Written without reading the detector, its two earlier labelled sets or their history, so that
neither the patterns nor the examples of this set were tuned against each other. Everything is
generated from ``--seed`` (default 44); nothing in it is real: every token, key and password is
random bytes shaped like the provider's published format (prefixes, lengths, alphabets, the
GitHub/npm CRC32 checksum, DER prefixes of PEM bodies), and every name, host and account is made up.

**Secrets** (about 520, 55 kinds): the credentials engineering teams hold (GitHub, GitLab, AWS key
ids, secret keys and session tokens, GCP service-account JSON, Google API keys and OAuth client
secrets, Azure storage keys, SAS signatures and client secrets, Slack, Discord, Twilio, SendGrid,
Mailgun, Stripe secret/restricted/webhook keys, Shopify, Atlassian, Datadog, New Relic, Sentry,
npm, PyPI, RubyGems, NuGet, Docker Hub, Heroku, DigitalOcean, Cloudflare, Okta, Vault, Terraform
Cloud, OpenAI, Anthropic, Cohere, Hugging Face, Vercel, Netlify, Supabase, a dozen smaller
providers, passwords in database URLs and in config/SQL/code, PEM/PKCS8/OpenSSH/PGP private keys,
JWT access tokens, base64 ``data`` of a Kubernetes Secret, HTTP Basic and docker ``auth`` values,
framework signing keys (Rails, Django, Laravel, Flask, NextAuth), unprefixed API keys and OAuth
client secrets named by their context), each put into one of ~30 carriers: commit messages, PR
descriptions in Markdown, review comments, chat turns between a developer and a coding agent
(with the tool output the agent pastes: ``env``, ``cat .env``, ``kubectl get secret -o yaml``,
``docker inspect``, CI logs, stack traces that print config), shell transcripts, Jupyter output,
Terraform state, Helm values, Ansible vars, SQL, Java/C#/Ruby/PHP/Rust/Go/TypeScript/Python code,
XML, ``.properties``, ``.ini``, ``.toml``, docker-compose and HTTP dumps.

**Non-secrets** (4,650 texts, 62 categories of 75, none holding a secret): engineering noise that looks
like one: git logs and ``git show`` headers, lockfiles, image digests, Kubernetes UIDs and
resourceVersions, Terraform ids, AWS request ids (``x-amz-id-2``), ARNs, log stream names, ETags,
Sentry event ids, trace/span ids, base64 fixtures and data URIs, minified JS, source maps, SVG
paths, public keys, certificates, JWKS moduli, fingerprints, GPG key ids, hashed CDN URLs and SRI
hashes, Stripe/Vercel/Slack object ids, password-policy prose, docs saying where a token goes,
references to a secret (``${{ secrets.X }}``, ``secretKeyRef``, ``os.environ``, Vault paths),
encrypted values (SOPS ``ENC[...]``, ansible-vault, KMS ciphertext), placeholders, masked values,
code that handles a secret without holding one, URLs without or with a masked password, and the
providers' own published examples.

**Labelling rules.**
- A secret is a value that grants access or signs something and would have to be rotated if
  leaked; its labelled span is the value alone as it appears in the text (escaped ``\\n`` in JSON,
  indentation inside a YAML block, percent-encoding inside a URL included), not its key or the
  ``Bearer`` scheme. In a URL only the password is labelled; a Slack/Discord webhook URL and an
  Azure SAS ``sig`` are secrets themselves. It counts as found only if the union of the findings
  covers every character of that span.
- Test-mode keys (``sk_test_…``) are secrets (they read and write the account's test data); an
  encrypted PEM key is a secret (the passphrase is usually at hand).
- Not secrets: identifiers (AWS account ids, Twilio SIDs, client ids, tenant ids), public keys
  and certificates, hashes and digests, encrypted values (SOPS, ansible-vault, KMS), references
  and placeholders, masked values, and keys that the provider documents as public by design
  (Stripe ``pk_live_``, Supabase ``sb_publishable_`` and ``anon`` JWT, Sentry DSNs, Datadog RUM
  ``pub…`` client tokens, Mapbox ``pk.``). **The providers' own published documentation
  examples** (AWS ``AKIAIOSFODNN7EXAMPLE``, the Azurite account key, jwt.io's token, Stripe's
  documentation test key, Slack's ``xoxb-not-a-real-token``) are *not* secrets: they are public,
  cannot be rotated and grant nothing real, so redacting them costs recall of engineering text.
  Nor are the documented defaults of local images (``POSTGRES_PASSWORD: postgres``, ``minioadmin``,
  ``guest:guest``) in a compose file or a ``localhost`` URL.
- A non-secret text counts one false positive if any finding falls in it (false positives per
  1,000 non-secret texts). Findings in a secret-bearing text that touch no labelled secret are
  counted separately ("stray findings").
"""

# ruff: noqa: E501 -- the texts below are templates of whole lines; wrapping them would hide what they look like
from __future__ import annotations

import argparse
import base64
import json
import string
import sys
import uuid
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import Any
from urllib.parse import quote

DEFAULT_SEED = 44
NON_SECRETS_PER_CATEGORY = 75
SECRETS_PER_KIND = 9

#: The set's longer fixed lists (names, code headers, fixed non-secret texts), kept as data; the code
#: below draws from them and writes the random values.
_DATA: dict[str, Any] = json.loads((Path(__file__).parent / "data" / "secrets_blind.json").read_text("utf-8"))

# ---------------------------------------------------------------------------------------------
# Marking: generators write a secret as \x01kind\x02value\x03; unmark() strips the marks and
# records the span, so texts are written naturally and offsets are never computed by hand.

_OPEN, _MID, _CLOSE = "\x01", "\x02", "\x03"


def mark(kind: str, value: str) -> str:
    return f"{_OPEN}{kind}{_MID}{value}{_CLOSE}"


@dataclass(frozen=True)
class Span:
    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class Sample:
    category: str
    text: str
    secrets: tuple[Span, ...]


def unmark(marked: str) -> tuple[str, tuple[Span, ...]]:
    out: list[str] = []
    spans: list[Span] = []
    i = 0
    length = 0
    while i < len(marked):
        ch = marked[i]
        if ch == _OPEN:
            mid = marked.index(_MID, i)
            close = marked.index(_CLOSE, mid)
            kind, value = marked[i + 1 : mid], marked[mid + 1 : close]
            if _OPEN in value:
                raise ValueError("nested secret marks")
            spans.append(Span(kind, length, length + len(value)))
            out.append(value)
            length += len(value)
            i = close + 1
        else:
            out.append(ch)
            length += 1
            i += 1
    return "".join(out), tuple(spans)


def esc(value: str) -> str:
    """A string escaped for a JSON/C-like double-quoted literal, leaving the marks alone."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def indent(value: str, pad: str) -> str:
    return value.replace("\n", "\n" + pad)


# ---------------------------------------------------------------------------------------------
# Random material

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
DIGITS = string.digits
HEX = "0123456789abcdef"
UHEX = "0123456789ABCDEF"
B62 = string.ascii_letters + DIGITS
B64 = B62 + "+/"
B64URL = B62 + "-_"
B32 = UPPER + "234567"
ALNUM_L = LOWER + DIGITS


def rs(r: Random, alphabet: str, n: int) -> str:
    return "".join(r.choice(alphabet) for _ in range(n))


def hexs(r: Random, n: int) -> str:
    return rs(r, HEX, n)


def uid(r: Random) -> str:
    return str(uuid.UUID(int=r.getrandbits(128), version=4))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def base62(n: int, width: int) -> str:
    out = ""
    while n:
        n, rem = divmod(n, 62)
        out = B62[rem] + out
    return out.rjust(width, "0")


def checksummed(r: Random, prefix: str, body: int) -> str:
    """GitHub's and npm's token shape: random base62 and a base62 CRC32 of it."""
    random_part = rs(r, B62, body)
    return prefix + random_part + base62(zlib.crc32(random_part.encode()), 6)


def wrap(text: str, width: int) -> str:
    return "\n".join(text[i : i + width] for i in range(0, len(text), width))


def ts(r: Random) -> str:
    return f"2025-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}Z"


def pick(r: Random, items: list[str] | tuple[str, ...]) -> str:
    return items[r.randrange(len(items))]


PEOPLE: list[tuple[str, str]] = [(name, login) for name, login in _DATA["people"]]
ORGS = ["northwind", "globex", "initech", "hooli", "vandelay", "umbrella-labs"]
SERVICES: list[str] = list(_DATA["services"])
FILES: list[str] = list(_DATA["files"])
WORDS = "amber river falcon copper orbit maple quartz tundra velvet harbor lantern cobalt meadow prism".split()


def person(r: Random) -> tuple[str, str]:
    return PEOPLE[r.randrange(len(PEOPLE))]


def email(r: Random) -> str:
    return f"{person(r)[1]}@{pick(r, ORGS)}.io"


def host(r: Random) -> str:
    return f"{pick(r, SERVICES)}.{pick(r, ['prod', 'staging', 'eu1', 'us-east-1'])}.{pick(r, ORGS)}.internal"


def human_password(r: Random) -> str:
    style = r.randrange(5)
    if style == 0:
        return pick(r, WORDS).capitalize() + str(r.randint(10, 2029)) + pick(r, list("!#$%&*?@"))
    if style == 1:
        return "-".join(r.sample(WORDS, 4))
    if style == 2:
        return rs(r, B62 + "!#$%^&*_-+=", r.randint(14, 24))
    if style == 3:
        word = pick(r, WORDS)
        leet = word.replace("a", "4").replace("e", "3").replace("o", "0").replace("i", "1")
        return leet.capitalize() + pick(r, ["#", "@", "!"]) + rs(r, DIGITS, 3) + pick(r, WORDS).upper()
    return rs(r, B62, r.randint(16, 32))


# ---------------------------------------------------------------------------------------------
# Key material shapes (DER prefixes make the base64 bodies start as real ones do)

_DER = {
    "RSA PRIVATE KEY": (bytes.fromhex("308204a40201000282010100"), 1180),
    "PRIVATE KEY": (bytes.fromhex("308204bd020100300d06092a864886f70d0101010500048204a7"), 1190),
    "EC PRIVATE KEY": (bytes.fromhex("307702010104"), 115),
    "ENCRYPTED PRIVATE KEY": (bytes.fromhex("3082051c304e06092a864886f70d01050d"), 1290),
    "ED25519": (bytes.fromhex("302e020100300506032b657004220420"), 32),
}


def pem_private(r: Random) -> str:
    label = pick(r, ["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "ED25519", "OPENSSH"])
    if label == "OPENSSH":
        raw = b"openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none" + r.randbytes(r.choice([380, 1800]))
        return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + wrap(b64(raw), 70) + "\n-----END OPENSSH PRIVATE KEY-----"
    prefix, n = _DER[label]
    body = b64(prefix + r.randbytes(n))
    name = "PRIVATE KEY" if label == "ED25519" else label
    return f"-----BEGIN {name}-----\n{wrap(body, 64)}\n-----END {name}-----"


def pgp_private(r: Random) -> str:
    body = b64(bytes.fromhex("9505d80465") + r.randbytes(r.choice([900, 1500])))
    crc = b64(r.randbytes(3))
    return f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{wrap(body, 64)}\n={crc}\n-----END PGP PRIVATE KEY BLOCK-----"


def certificate(r: Random) -> str:
    body = b64(
        bytes.fromhex("308203")
        + r.randbytes(1)
        + bytes.fromhex("308202")
        + r.randbytes(1)
        + bytes.fromhex("a003020102")
        + r.randbytes(800)
    )
    return f"-----BEGIN CERTIFICATE-----\n{wrap(body, 64)}\n-----END CERTIFICATE-----"


def public_pem(r: Random) -> str:
    body = b64(bytes.fromhex("30820122300d06092a864886f70d01010105000382010f003082010a0282010100") + r.randbytes(262))
    return f"-----BEGIN PUBLIC KEY-----\n{wrap(body, 64)}\n-----END PUBLIC KEY-----"


def ssh_public(r: Random) -> str:
    if r.random() < 0.5:
        return "ssh-ed25519 " + b64(b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + r.randbytes(32))
    return "ssh-rsa " + b64(
        b"\x00\x00\x00\x07ssh-rsa\x00\x00\x00\x03\x01\x00\x01\x00\x00\x01\x81\x00" + r.randbytes(384)
    )


def jwt(r: Random, payload: dict[str, object], alg: str = "HS256") -> str:
    header: dict[str, object] = {"alg": alg, "typ": "JWT"}
    if alg != "HS256":
        header["kid"] = rs(r, B64URL, 27)
    sig = r.randbytes(32 if alg == "HS256" else 256)
    enc = b64url(json.dumps(header, separators=(",", ":")).encode())
    return f"{enc}.{b64url(json.dumps(payload, separators=(',', ':')).encode())}.{b64url(sig)}"


def access_jwt(r: Random) -> str:
    now = r.randint(1_735_000_000, 1_760_000_000)
    payload: dict[str, object] = {
        "sub": uid(r),
        "iss": pick(
            r,
            [
                "https://auth.northwind.io/",
                "https://login.microsoftonline.com/" + uid(r) + "/v2.0",
                "https://globex.okta.com/oauth2/default",
            ],
        ),
        "aud": pick(r, ["api://billing", "https://api.globex.io", "account"]),
        "iat": now,
        "exp": now + r.choice([900, 3600, 86400]),
        "scope": pick(r, ["read:orders write:orders", "openid profile email", "admin"]),
    }
    if r.random() < 0.5:
        payload["email"] = email(r)
    return jwt(r, payload, pick(r, ["HS256", "RS256", "ES256"]))


# ---------------------------------------------------------------------------------------------
# Secret kinds: how a value is made and the names it goes by


@dataclass(frozen=True)
class Kind:
    name: str
    about: str  # how a person would name it in prose
    names: tuple[str, ...]  # variable names it is stored under
    make: Callable[[Random], str]
    multiline: bool = False


def _stripe(r: Random) -> str:
    prefix = pick(r, ["sk_live_", "sk_live_", "rk_live_", "sk_test_"])
    return prefix + (pick(r, ["51", "4e"]) + rs(r, B62, 97) if r.random() < 0.7 else rs(r, B62, 24))


def _gitlab(r: Random) -> str:
    which = r.randrange(6)
    if which == 0:
        return "glpat-" + rs(r, B64URL, 27) + "." + rs(r, ALNUM_L, 2) + rs(r, ALNUM_L, 7)
    if which == 1:
        return "gldt-" + rs(r, B64URL, 20)
    if which == 2:
        return "glrt-" + rs(r, B64URL, 20)
    if which == 3:
        return "GR1348941" + rs(r, B64URL, 20)
    if which == 4:
        return "glptt-" + hexs(r, 40)
    return "glpat-" + rs(r, B64URL, 20)


def _slack(r: Random) -> str:
    which = r.randrange(3)
    if which == 0:
        return f"xoxb-{rs(r, DIGITS, 12)}-{rs(r, DIGITS, 13)}-{rs(r, B62, 24)}"
    if which == 1:
        return f"xoxp-{rs(r, DIGITS, 12)}-{rs(r, DIGITS, 12)}-{rs(r, DIGITS, 13)}-{hexs(r, 32)}"
    return f"xapp-1-A{rs(r, UPPER + DIGITS, 10)}-{rs(r, DIGITS, 13)}-{hexs(r, 64)}"


def _discord_bot(r: Random) -> str:
    user = b64(str(r.randint(10**17, 10**18 * 2)).encode()).rstrip("=")
    return f"{user}.{rs(r, B64URL, 6)}.{rs(r, B64URL, r.choice([27, 38]))}"


def _openai(r: Random) -> str:
    which = r.randrange(4)
    if which == 0:
        return "sk-" + rs(r, B62, 20) + "T3BlbkFJ" + rs(r, B62, 20)
    prefix = pick(r, ["sk-proj-", "sk-proj-", "sk-svcacct-", "sk-admin-"])
    n = r.choice([74, 58])
    return prefix + rs(r, B64URL, n) + "T3BlbkFJ" + rs(r, B64URL, n)


def _sentry(r: Random) -> str:
    if r.random() < 0.5:
        return "sntryu_" + hexs(r, 64)
    claims = {
        "iat": r.randint(1_700_000_000, 1_760_000_000),
        "url": "https://sentry.io",
        "region_url": "https://us.sentry.io",
        "org": pick(r, ORGS),
    }
    return "sntrys_" + b64(json.dumps(claims, separators=(",", ":")).encode()) + "_" + rs(r, B64, 43)


def _newrelic(r: Random) -> str:
    which = r.randrange(3)
    if which == 0:
        return "NRAK-" + rs(r, UPPER + DIGITS, 27)
    if which == 1:
        return "NRII-" + rs(r, B64URL, 32)
    return hexs(r, 36) + "NRAL"


def _vault(r: Random) -> str:
    which = r.randrange(3)
    if which == 0:
        return "hvs." + rs(r, B62, 24)
    if which == 1:
        return "hvs.CAESI" + rs(r, B64URL, 86)
    return "hvb.AAAAAQ" + rs(r, B64URL, 140)


def _supabase(r: Random) -> str:
    if r.random() < 0.4:
        return "sb_secret_" + rs(r, B64URL, 31)
    ref = rs(r, LOWER, 20)
    now = r.randint(1_690_000_000, 1_750_000_000)
    return jwt(r, {"iss": "supabase", "ref": ref, "role": "service_role", "iat": now, "exp": now + 315_360_000})


def _other(r: Random) -> str:
    which = r.randrange(14)
    makers: list[Callable[[], str]] = [
        lambda: "lin_api_" + rs(r, B62, 40),
        lambda: "ntn_" + rs(r, DIGITS, 11) + rs(r, B62, 35),
        lambda: "PMAK-" + hexs(r, 24) + "-" + hexs(r, 34),
        lambda: "glsa_" + rs(r, B62, 32) + "_" + hexs(r, 8),
        lambda: "dp.st." + pick(r, ["prd", "stg", "dev"]) + "." + rs(r, B62, 40),
        lambda: "pul-" + hexs(r, 40),
        lambda: "dapi" + hexs(r, 32),
        lambda: "AGE-SECRET-KEY-1" + rs(r, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
        lambda: "ops_eyJ" + rs(r, B64, 300),
        lambda: "pscale_pw_" + rs(r, B64URL, 43),
        lambda: "fo1_" + rs(r, B64URL, 43),
        lambda: f"{r.randint(10**8, 10**10)}:AA{rs(r, B64URL, 33)}",
        lambda: "sk.eyJ1IjoiI" + rs(r, B64URL, 60) + "." + rs(r, B64URL, 22),
        lambda: "EAAA" + rs(r, B64URL, 60),
    ]
    return makers[which]()


_OTHER_NAMES = (
    "LINEAR_API_KEY",
    "NOTION_TOKEN",
    "POSTMAN_API_KEY",
    "GRAFANA_SA_TOKEN",
    "DOPPLER_TOKEN",
    "PULUMI_ACCESS_TOKEN",
    "DATABRICKS_TOKEN",
    "SOPS_AGE_KEY",
    "OP_SERVICE_ACCOUNT_TOKEN",
    "PLANETSCALE_PASSWORD",
    "FLY_API_TOKEN",
    "TELEGRAM_BOT_TOKEN",
    "MAPBOX_SECRET_TOKEN",
    "SQUARE_ACCESS_TOKEN",
)


def _app_secret(r: Random) -> str:
    which = r.randrange(5)
    if which == 0:
        return hexs(r, 128)  # Rails secret_key_base
    if which == 1:
        return rs(r, LOWER + DIGITS + "!@#$%^&*(-_=+)", 50)  # Django get_random_secret_key
    if which == 2:
        return "base64:" + b64(r.randbytes(32))  # Laravel APP_KEY
    if which == 3:
        return b64(r.randbytes(32))  # NextAuth / openssl rand -base64 32
    return hexs(r, 64)  # Flask secrets.token_hex(32)


def _db_password(r: Random) -> str:
    return human_password(r)


def pem_private_pkcs8(r: Random) -> str:
    body = b64(_DER["PRIVATE KEY"][0] + r.randbytes(_DER["PRIVATE KEY"][1]))
    return f"-----BEGIN PRIVATE KEY-----\n{wrap(body, 64)}\n-----END PRIVATE KEY-----\n"


KINDS: list[Kind] = [
    Kind(
        "github-token",
        "GitHub token",
        ("GITHUB_TOKEN", "GH_TOKEN", "GH_PAT", "HOMEBREW_GITHUB_API_TOKEN", "RENOVATE_TOKEN"),
        lambda r: checksummed(r, pick(r, ["ghp_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"]), 30),
    ),
    Kind(
        "github-fine-grained",
        "fine-grained GitHub PAT",
        ("GITHUB_TOKEN", "GH_TOKEN", "GITHUB_PAT"),
        lambda r: "github_pat_11" + rs(r, UPPER + DIGITS, 20) + "_" + rs(r, B62, 59),
    ),
    Kind(
        "gitlab-token", "GitLab token", ("GITLAB_TOKEN", "CI_JOB_TOKEN_OVERRIDE", "GL_TOKEN", "RUNNER_TOKEN"), _gitlab
    ),
    Kind(
        "aws-access-key-id",
        "AWS access key id",
        ("AWS_ACCESS_KEY_ID", "aws_access_key_id", "AccessKeyId"),
        lambda r: pick(r, ["AKIA", "AKIA", "ASIA"]) + rs(r, B32, 16),
    ),
    Kind(
        "aws-secret-key",
        "AWS secret key",
        ("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key", "SecretAccessKey"),
        lambda r: rs(r, B64, 40),
    ),
    Kind(
        "aws-session-token",
        "AWS session token",
        ("AWS_SESSION_TOKEN", "aws_session_token", "SessionToken"),
        lambda r: (
            pick(r, ["IQoJb3JpZ2luX2VjE", "FwoGZXIvYXdzE"]) + rs(r, B64, r.randint(300, 700)) + pick(r, ["", "=", "=="])
        ),
    ),
    Kind(
        "gcp-service-account-key",
        "GCP service account key",
        ("GOOGLE_CREDENTIALS", "GCP_SA_KEY"),
        pem_private_pkcs8,
        multiline=True,
    ),
    Kind(
        "google-api-key",
        "Google API key",
        ("GOOGLE_API_KEY", "GOOGLE_MAPS_SERVER_KEY", "YOUTUBE_API_KEY"),
        lambda r: "AIza" + rs(r, B64URL, 35),
    ),
    Kind(
        "google-oauth-client-secret",
        "Google OAuth client secret",
        ("GOOGLE_CLIENT_SECRET", "OAUTH_CLIENT_SECRET"),
        lambda r: "GOCSPX-" + rs(r, B64URL, 28),
    ),
    Kind(
        "azure-storage-key",
        "Azure storage account key",
        ("AZURE_STORAGE_CONNECTION_STRING", "AzureWebJobsStorage", "STORAGE_CONNECTION"),
        lambda r: b64(r.randbytes(64)),
    ),
    Kind(
        "azure-sas-signature",
        "Azure SAS URL",
        ("AZURE_BLOB_SAS_URL", "EXPORT_CONTAINER_URL"),
        lambda r: quote(b64(r.randbytes(32)), safe=""),
    ),
    Kind(
        "azure-client-secret",
        "Azure AD client secret",
        ("AZURE_CLIENT_SECRET", "ARM_CLIENT_SECRET", "AAD_CLIENT_SECRET"),
        lambda r: rs(r, B62, 3) + str(r.randint(0, 9)) + "Q~" + rs(r, B62 + "_~.-", 34),
    ),
    Kind("slack-token", "Slack token", ("SLACK_BOT_TOKEN", "SLACK_TOKEN", "SLACK_APP_TOKEN"), _slack),
    Kind(
        "slack-webhook",
        "Slack webhook",
        ("SLACK_WEBHOOK_URL", "ALERTS_WEBHOOK"),
        lambda r: (
            f"https://hooks.slack.com/services/T{rs(r, UPPER + DIGITS, 8)}/B{rs(r, UPPER + DIGITS, 10)}/{rs(r, B62, 24)}"
        ),
    ),
    Kind("discord-bot-token", "Discord bot token", ("DISCORD_TOKEN", "DISCORD_BOT_TOKEN"), _discord_bot),
    Kind(
        "discord-webhook",
        "Discord webhook",
        ("DISCORD_WEBHOOK_URL",),
        lambda r: f"https://discord.com/api/webhooks/{r.randint(10**17, 10**19)}/{rs(r, B64URL, 68)}",
    ),
    Kind("twilio-auth-token", "Twilio auth token", ("TWILIO_AUTH_TOKEN", "twilio_auth_token"), lambda r: hexs(r, 32)),
    Kind(
        "sendgrid-key",
        "SendGrid key",
        ("SENDGRID_API_KEY", "SMTP_PASSWORD"),
        lambda r: "SG." + rs(r, B64URL, 22) + "." + rs(r, B64URL, 43),
    ),
    Kind(
        "mailgun-key",
        "Mailgun key",
        ("MAILGUN_API_KEY", "MAILGUN_KEY"),
        lambda r: "key-" + hexs(r, 32) if r.random() < 0.5 else f"{hexs(r, 32)}-{hexs(r, 8)}-{hexs(r, 8)}",
    ),
    Kind("stripe-secret", "Stripe secret key", ("STRIPE_SECRET_KEY", "STRIPE_API_KEY", "STRIPE_KEY"), _stripe),
    Kind(
        "stripe-webhook-secret",
        "Stripe webhook signing secret",
        ("STRIPE_WEBHOOK_SECRET", "STRIPE_ENDPOINT_SECRET"),
        lambda r: "whsec_" + rs(r, B62, 32),
    ),
    Kind(
        "shopify-token",
        "Shopify token",
        ("SHOPIFY_ACCESS_TOKEN", "SHOPIFY_API_SECRET"),
        lambda r: pick(r, ["shpat_", "shpss_", "shpca_", "shppa_"]) + hexs(r, 32),
    ),
    Kind(
        "atlassian-token",
        "Atlassian API token",
        ("JIRA_API_TOKEN", "ATLASSIAN_TOKEN", "CONFLUENCE_TOKEN"),
        lambda r: "ATATT3xFfGF0" + rs(r, B64URL, 172) + "=" + rs(r, UHEX, 8),
    ),
    Kind(
        "datadog-key",
        "Datadog key",
        ("DD_API_KEY", "DD_APP_KEY", "DATADOG_API_KEY"),
        lambda r: hexs(r, r.choice([32, 40])),
    ),
    Kind(
        "newrelic-key",
        "New Relic key",
        ("NEW_RELIC_LICENSE_KEY", "NEW_RELIC_API_KEY", "NEWRELIC_INSERT_KEY"),
        _newrelic,
    ),
    Kind("sentry-token", "Sentry auth token", ("SENTRY_AUTH_TOKEN",), _sentry),
    Kind("npm-token", "npm token", ("NPM_TOKEN", "NODE_AUTH_TOKEN"), lambda r: checksummed(r, "npm_", 30)),
    Kind(
        "pypi-token",
        "PyPI token",
        ("PYPI_API_TOKEN", "TWINE_PASSWORD", "POETRY_PYPI_TOKEN_PYPI"),
        lambda r: "pypi-AgEIcHlwaS5vcmc" + rs(r, B64URL, r.randint(150, 200)),
    ),
    Kind(
        "rubygems-token", "RubyGems key", ("GEM_HOST_API_KEY", "RUBYGEMS_API_KEY"), lambda r: "rubygems_" + hexs(r, 48)
    ),
    Kind("nuget-key", "NuGet API key", ("NUGET_API_KEY", "NUGET_KEY"), lambda r: "oy2" + rs(r, ALNUM_L, 43)),
    Kind(
        "dockerhub-token",
        "Docker Hub token",
        ("DOCKERHUB_TOKEN", "DOCKER_PASSWORD", "REGISTRY_PASSWORD"),
        lambda r: pick(r, ["dckr_pat_", "dckr_pat_", "dckr_oat_"]) + rs(r, B64URL, 27),
    ),
    Kind(
        "heroku-key",
        "Heroku API key",
        ("HEROKU_API_KEY",),
        lambda r: "HRKU-AA" + rs(r, B64URL, 58) if r.random() < 0.6 else uid(r),
    ),
    Kind(
        "digitalocean-token",
        "DigitalOcean token",
        ("DIGITALOCEAN_ACCESS_TOKEN", "DO_TOKEN"),
        lambda r: pick(r, ["dop_v1_", "doo_v1_", "dor_v1_"]) + hexs(r, 64),
    ),
    Kind(
        "cloudflare-token",
        "Cloudflare API token",
        ("CLOUDFLARE_API_TOKEN", "CF_API_TOKEN", "CF_API_KEY"),
        lambda r: rs(r, B64URL, 40) if r.random() < 0.7 else hexs(r, 37),
    ),
    Kind("okta-token", "Okta API token", ("OKTA_API_TOKEN", "OKTA_CLIENT_TOKEN"), lambda r: "00" + rs(r, B64URL, 40)),
    Kind("vault-token", "Vault token", ("VAULT_TOKEN",), _vault),
    Kind(
        "terraform-cloud-token",
        "Terraform Cloud token",
        ("TF_API_TOKEN", "TFE_TOKEN", "TF_TOKEN_app_terraform_io"),
        lambda r: rs(r, B62, 14) + ".atlasv1." + rs(r, B64URL, 67),
    ),
    Kind("openai-key", "OpenAI key", ("OPENAI_API_KEY",), _openai),
    Kind(
        "anthropic-key",
        "Anthropic key",
        ("ANTHROPIC_API_KEY",),
        lambda r: pick(r, ["sk-ant-api03-", "sk-ant-api03-", "sk-ant-admin01-"]) + rs(r, B64URL, 93) + "AA",
    ),
    Kind("cohere-key", "Cohere key", ("COHERE_API_KEY", "CO_API_KEY"), lambda r: rs(r, B62, 40)),
    Kind(
        "huggingface-token",
        "Hugging Face token",
        ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"),
        lambda r: pick(r, ["hf_", "hf_", "api_org_"]) + rs(r, string.ascii_letters, 34),
    ),
    Kind(
        "vercel-token",
        "Vercel token",
        ("VERCEL_TOKEN",),
        lambda r: (
            pick(r, ["vcp_", "vci_", "vck_"]) + rs(r, B64URL, 50) + rs(r, B62, 6)
            if r.random() < 0.6
            else rs(r, B62, 24)
        ),
    ),
    Kind(
        "netlify-token",
        "Netlify token",
        ("NETLIFY_AUTH_TOKEN",),
        lambda r: "nfp_" + rs(r, B62, 36) if r.random() < 0.6 else rs(r, B64URL, 43),
    ),
    Kind(
        "supabase-service-key", "Supabase service key", ("SUPABASE_SERVICE_ROLE_KEY", "SUPABASE_SECRET_KEY"), _supabase
    ),
    Kind(
        "database-password",
        "database password",
        ("DATABASE_URL", "SQLALCHEMY_DATABASE_URI", "REDIS_URL", "MONGO_URI", "AMQP_URL"),
        _db_password,
    ),
    Kind(
        "password",
        "password",
        (
            "DB_PASSWORD",
            "POSTGRES_PASSWORD",
            "MYSQL_ROOT_PASSWORD",
            "SMTP_PASS",
            "LDAP_BIND_CREDENTIAL",
            "KEYSTORE_PASS",
            "ADMIN_PASSWD",
            "RABBITMQ_DEFAULT_PASS",
            "PGPASSWORD",
            "db_pw",
        ),
        human_password,
    ),
    Kind(
        "private-key",
        "private key",
        ("TLS_KEY", "SSH_PRIVATE_KEY", "DEPLOY_KEY", "JWT_PRIVATE_KEY"),
        pem_private,
        multiline=True,
    ),
    Kind("pgp-private-key", "PGP private key", ("GPG_PRIVATE_KEY", "SIGNING_KEY"), pgp_private, multiline=True),
    Kind("jwt", "access token", ("ACCESS_TOKEN", "AUTH_TOKEN", "ID_TOKEN"), access_jwt),
    Kind("k8s-secret-data", "Kubernetes secret", ("password", "api-token"), lambda r: b64(human_password(r).encode())),
    Kind(
        "basic-auth",
        "basic auth",
        ("Authorization",),
        lambda r: b64(f"{pick(r, ['deploy', 'ci-bot', 'admin', person(r)[1]])}:{human_password(r)}".encode()),
    ),
    Kind(
        "app-secret",
        "app signing secret",
        (
            "SECRET_KEY_BASE",
            "DJANGO_SECRET_KEY",
            "APP_KEY",
            "NEXTAUTH_SECRET",
            "SESSION_SECRET",
            "JWT_SECRET",
            "COOKIE_SECRET",
        ),
        _app_secret,
    ),
    Kind(
        "generic-api-key",
        "API key",
        ("API_KEY", "X_API_KEY", "PARTNER_API_KEY", "INTERNAL_SERVICE_KEY"),
        lambda r: rs(r, B62, r.choice([32, 40, 48])),
    ),
    Kind(
        "oauth-client-secret",
        "OAuth client secret",
        ("GITHUB_CLIENT_SECRET", "AUTH0_CLIENT_SECRET", "KEYCLOAK_CLIENT_SECRET"),
        lambda r: hexs(r, 40) if r.random() < 0.4 else rs(r, B64URL, 64),
    ),
    Kind("other-provider-token", "token", _OTHER_NAMES, _other),
]


# ---------------------------------------------------------------------------------------------
# A credential as it sits in a text: the marked value, possibly inside the thing that carries it
# (a URL around a password, a connection string around an account key).


@dataclass
class Cred:
    kind: str
    about: str
    name: str
    raw: str  # the secret alone
    value: str  # marked, as it is written after `name =`
    multiline: bool = False
    extra: list[str] = field(default_factory=list)  # lines that go with it (a key id with its secret)

    @property
    def snake(self) -> str:
        return self.name.lower() if not any(c.islower() for c in self.name) else self.name

    @property
    def camel(self) -> str:
        parts = self.name.lower().split("_")
        return parts[0] + "".join(p.capitalize() for p in parts[1:])


def database_url(r: Random, name: str, m: str) -> tuple[str, str]:
    """A connection URL around a marked (percent-encoded) password, and the name it is stored under."""
    user = pick(r, ["app", "billing", "postgres", "admin", "svc_ledger", person(r)[1]])
    if name == "REDIS_URL":
        return name, f"rediss://default:{m}@{host(r)}:6380/0"
    if name == "MONGO_URI":
        return (
            name,
            f"mongodb+srv://{user}:{m}@cluster0.{rs(r, ALNUM_L, 5)}.mongodb.net/{pick(r, SERVICES)}?retryWrites=true&w=majority",
        )
    if name == "AMQP_URL":
        return name, f"amqps://{user}:{m}@{host(r)}:5671/%2F"
    if r.random() < 0.2:
        db = pick(r, SERVICES).replace("-", "_")
        return (
            "SPRING_DATASOURCE_URL",
            f"jdbc:postgresql://{host(r)}:5432/{db}?user={user}&password={m}&sslmode=require",
        )
    scheme = pick(r, ["postgresql", "postgres", "mysql", "postgresql+psycopg"])
    port = 5432 if "post" in scheme else 3306
    return name, f"{scheme}://{user}:{m}@{host(r)}:{port}/{pick(r, SERVICES).replace('-', '_')}"


def build_cred(r: Random, kind: Kind) -> Cred:
    raw = kind.make(r)
    name = pick(r, kind.names)
    m = mark(kind.name, raw)
    value = m
    extra: list[str] = []
    if kind.name == "database-password":
        m = mark(kind.name, quote(raw, safe=""))
        name, value = database_url(r, name, m)
    elif kind.name == "azure-storage-key":
        account = pick(r, ORGS).replace("-", "") + pick(r, ["prodlogs", "exports", "media", "tfstate"])
        value = f"DefaultEndpointsProtocol=https;AccountName={account};AccountKey={m};EndpointSuffix=core.windows.net"
    elif kind.name == "azure-sas-signature":
        account = pick(r, ORGS).replace("-", "") + "exports"
        value = (
            f"https://{account}.blob.core.windows.net/{pick(r, ['reports', 'backups', 'uploads'])}?sv=2022-11-02&ss=b&srt=co"
            f"&sp={pick(r, ['rl', 'rwdlac', 'racwdli'])}&se=2026-0{r.randint(1, 9)}-01T00:00:00Z&st=2025-0{r.randint(1, 9)}-01T00:00:00Z&spr=https&sig={m}"
        )
    elif kind.name == "gcp-service-account-key":
        project = f"{pick(r, ORGS)}-{pick(r, ['prod', 'data', 'ml'])}-{r.randint(100000, 999999)}"
        sa = f"{pick(r, ['ci-deployer', 'bq-loader', 'terraform'])}@{project}.iam.gserviceaccount.com"
        doc = [
            ('"type"', '"service_account"'),
            ('"project_id"', f'"{project}"'),
            ('"private_key_id"', f'"{hexs(r, 40)}"'),
            ('"private_key"', '"' + mark(kind.name, esc(raw.rstrip("\n"))) + '\\n"'),
            ('"client_email"', f'"{sa}"'),
            ('"client_id"', f'"{r.randint(10**20, 10**21)}"'),
            ('"auth_uri"', '"https://accounts.google.com/o/oauth2/auth"'),
            ('"token_uri"', '"https://oauth2.googleapis.com/token"'),
        ]
        if r.random() < 0.5:
            value = "{\n" + ",\n".join(f"  {k}: {v}" for k, v in doc) + "\n}"
        else:
            value = "{" + ", ".join(f"{k}: {v}" for k, v in doc) + "}"
            return Cred(kind.name, kind.about, name, raw, value, multiline=False)
    elif kind.name in ("aws-secret-key", "aws-session-token") and r.random() < 0.7:
        key_id = mark("aws-access-key-id", pick(r, ["AKIA", "ASIA"]) + rs(r, B32, 16))
        extra.append(f"AWS_ACCESS_KEY_ID={key_id}" if name.isupper() else f"aws_access_key_id = {key_id}")
    elif kind.name == "twilio-auth-token":
        extra.append(f"TWILIO_ACCOUNT_SID=AC{hexs(r, 32)}")
    return Cred(kind.name, kind.about, name, raw, value, multiline=kind.multiline, extra=extra)


# ---------------------------------------------------------------------------------------------
# How a credential is written in each syntax


def env_line(c: Cred, quote_char: str = "") -> str:
    if c.multiline:
        return f'{c.name}="{esc(c.value)}"'
    return f"{c.name}={quote_char}{c.value}{quote_char}"


def env_lines(c: Cred) -> str:
    return "\n".join([*c.extra, env_line(c)])


def yaml_pair(c: Cred, pad: str = "") -> str:
    key = c.name.lower()
    if c.multiline:
        return f"{pad}{key}: |\n{pad}  " + indent(c.value, pad + "  ")
    return f"{pad}{key}: {c.value}" if "#" not in c.raw and ": " not in c.raw else f'{pad}{key}: "{c.value}"'


def json_pair(c: Cred, key: str | None = None) -> str:
    return f'"{key or c.camel}": "{esc(c.value)}"'


def code_literal(r: Random, c: Cred, lang: str) -> str:
    v = esc(c.value)
    var = c.camel
    if lang == "python":
        if c.multiline and r.random() < 0.5:
            return f'{c.name} = """{c.value}"""'
        return f'{c.name} = "{v}"' if r.random() < 0.5 else f'client = Client(api_key="{v}", timeout=30)'
    if lang == "java":
        return f'    private static final String {c.name} = "{v}";'
    if lang == "csharp":
        return (
            f'        var {var} = "{v}";'
            if r.random() < 0.5
            else f'        options.{var[0].upper() + var[1:]} = "{v}";'
        )
    if lang == "ruby":
        return f'  config.{c.name.lower()} = "{v}"' if r.random() < 0.5 else f"{c.name} = '{c.value}'.freeze"
    if lang == "php":
        return f"    '{c.name.lower()}' => '{c.value}'," if r.random() < 0.5 else f"define('{c.name}', '{c.value}');"
    if lang == "rust":
        return (
            f'const {c.name}: &str = "{v}";' if r.random() < 0.5 else f'    let {c.name.lower()} = "{v}".to_string();'
        )
    if lang == "go":
        return f'\t{var} := "{v}"' if r.random() < 0.5 else f'const {var} = "{v}"'
    # typescript
    return f"const {var} = '{c.value}';" if r.random() < 0.5 else f'  {var}: "{v}",'


LANGS = ["python", "java", "csharp", "ruby", "php", "rust", "go", "typescript"]


# ---------------------------------------------------------------------------------------------
# Carriers: the engineering texts a credential turns up in (each returns marked text)

Carrier = Callable[[Random, Cred], str]


def sha(r: Random) -> str:
    return hexs(r, 40)


def c_commit(r: Random, c: Cred) -> str:
    subj = pick(
        r,
        [
            "fix(deploy): unblock release pipeline",
            "chore: wire up " + c.about,
            "hotfix: 401 from upstream",
            "WIP local testing",
            "ci: add nightly job",
            "feat: send alerts to ops channel",
        ],
    )
    body = pick(
        r,
        [
            f"Hardcoding {env_line(c)} until the Vault role lands; revert before merge.",
            f"The old token expired. New one: {c.value}",
            f"Temporarily set\n\n    {env_line(c)}\n\nso the nightly job stops failing (see INC-{r.randint(100, 999)}).",
            f"Tested against staging with `{env_line(c)}`.",
        ],
    )
    trailer = f"\n\nRefs: #{r.randint(10, 4000)}\nCo-authored-by: {person(r)[0]} <{email(r)}>"
    if c.multiline:
        body = f"Add the deploy key so the runner can clone submodules:\n\n{c.value}"
    return f"{subj}\n\n{body}{trailer}"


def c_git_show(r: Random, c: Cred) -> str:
    name, handle = person(r)
    f = pick(r, FILES)
    return (
        f"commit {sha(r)}\nAuthor: {name} <{handle}@{pick(r, ORGS)}.io>\nDate:   Tue Mar {r.randint(1, 28)} 10:{r.randint(10, 59)}:02 2025 +0100\n\n"
        f"    {pick(r, ['Add staging credentials', 'Configure client', 'Quick fix for prod'])}\n\n"
        f"diff --git a/{f} b/{f}\nindex {hexs(r, 7)}..{hexs(r, 7)} 100644\n--- a/{f}\n+++ b/{f}\n@@ -{r.randint(3, 90)},6 +{r.randint(3, 90)},7 @@\n"
        f"-{c.name} = os.environ['{c.name}']\n+{code_literal(r, c, pick(r, LANGS)).strip()}\n"
    )


def c_pr(r: Random, c: Cred) -> str:
    block = pick(r, ["bash", "yaml", "env"])
    inner = {"bash": f"export {env_line(c, pick(r, ['', chr(34)]))}", "yaml": yaml_pair(c), "env": env_lines(c)}[block]
    return (
        f"## Summary\n\nMoves `{pick(r, SERVICES)}` to the new {c.about}. Closes #{r.randint(10, 900)}.\n\n"
        f"## How to test\n\n1. Copy the snippet below into your local env\n```{block}\n{inner}\n```\n2. Run `make e2e`\n\n"
        f"- [x] Added tests\n- [ ] Updated docs\n\n<!-- reviewers: @{person(r)[1]} -->"
    )


def c_review(r: Random, c: Cred) -> str:
    f = pick(r, FILES)
    return (
        f"**{person(r)[1]}** commented on `{f}` line {r.randint(5, 300)}:\n\n"
        f"```diff\n+{code_literal(r, c, pick(r, LANGS)).strip()}\n```\n"
        f"{pick(r, ['This should come from the secret store, not the source.', 'nit: move this to settings', 'Is this the prod key?? Please rotate.'])}"
    )


def c_chat(r: Random, c: Cred) -> str:
    user_lines = [
        f"user: deploy of {pick(r, SERVICES)} fails with 401. I set {env_line(c)} in the action, what's wrong?",
        f"user: here's my config, why does the client say unauthorized?\n\n{yaml_pair(c)}",
        f"User: can you add the {c.about} to the test fixture? it's {c.value}",
    ]
    if c.multiline:
        user_lines = [f"user: ssh keeps asking for a passphrase, this is the key I'm using:\n\n{c.value}\n\nany idea?"]
    return (
        pick(r, user_lines)
        + "\n\nassistant: "
        + pick(
            r,
            _DATA["assistant_replies"],
        )
    )


def c_env_dump(r: Random, c: Cred) -> str:
    lines = [
        f"HOSTNAME={hexs(r, 12)}",
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        f"HOME=/home/{person(r)[1]}",
        "LANG=C.UTF-8",
        f"AWS_REGION={pick(r, ['us-east-1', 'eu-west-1'])}",
        f"GIT_COMMIT={sha(r)}",
        f"KUBERNETES_SERVICE_HOST=10.{r.randint(0, 255)}.0.1",
        f"OTEL_RESOURCE_ATTRIBUTES=service.name={pick(r, SERVICES)},service.version=1.{r.randint(0, 40)}.{r.randint(0, 9)}",
        *c.extra,
        env_line(c),
    ]
    r.shuffle(lines)
    return (
        "assistant: I printed the container environment to see what the job gets:\n\n$ "
        + pick(r, ["env", "printenv", "kubectl exec deploy/api -- env"])
        + "\n"
        + "\n".join(lines)
    )


def c_cat_env(r: Random, c: Cred) -> str:
    lines = [
        f"NODE_ENV={pick(r, ['production', 'development'])}",
        f"PORT={r.randint(3000, 9000)}",
        f"LOG_LEVEL={pick(r, ['info', 'debug'])}",
        *c.extra,
        env_line(c, pick(r, ["", '"', "'"])),
    ]
    r.shuffle(lines)
    return "$ cat .env\n" + "\n".join(lines) + "\n$ npm run dev"


def c_docker_inspect(r: Random, c: Cred) -> str:
    env = ['"PATH=/usr/local/bin:/usr/bin"', f'"{c.name}={esc(c.value)}"', f'"PYTHON_VERSION=3.12.{r.randint(0, 9)}"']
    env += [f'"{esc(e)}"' for e in c.extra]
    return (
        '$ docker inspect api-1 --format "{{json .Config}}" | jq\n{\n'
        f'  "Hostname": "{hexs(r, 12)}",\n  "Image": "sha256:{hexs(r, 64)}",\n  "Env": [\n    '
        + ",\n    ".join(env)
        + "\n  ],\n"
        f'  "Labels": {{"com.docker.compose.project": "{pick(r, SERVICES)}", "org.opencontainers.image.revision": "{sha(r)}"}}\n}}'
    )


def c_ci_log(r: Random, c: Cred) -> str:
    t = f"2025-0{r.randint(1, 9)}-1{r.randint(0, 9)}T0{r.randint(0, 9)}:1{r.randint(0, 9)}:0{r.randint(0, 9)}.{rs(r, DIGITS, 7)}Z"
    step = pick(
        r,
        [
            f"{t} + echo {env_line(c)}\n{t} {env_line(c)}",
            f"{t} + curl -sf -H 'Authorization: Bearer {c.value}' https://api.{pick(r, ORGS)}.io/v1/deploys",
            f"{t} Run ./scripts/publish.sh --token {c.value}",
        ],
    )
    if c.multiline:
        step = f"{t} + cat $RUNNER_TEMP/key.pem\n{c.value}"
    return f"{t} ##[group]Run ./scripts/deploy.sh\n{t} cache key: node-cache-Linux-x64-npm-{hexs(r, 64)}\n{step}\n{t} ##[endgroup]\n{t} Error: Process completed with exit code 1."


def c_stack_trace(r: Random, c: Cred) -> str:
    if r.random() < 0.5:
        return (
            "Traceback (most recent call last):\n"
            f'  File "/srv/app/{pick(r, SERVICES)}/client.py", line {r.randint(20, 400)}, in connect\n    raise ConnectionError(f"could not connect with {{settings!r}}")\n'
            f"ConnectionError: could not connect with Settings({c.snake.lower()}='{c.value}', timeout=30, region='eu-west-1', request_id='{uid(r)}')"
        )
    return (
        f"Exception in thread \"main\" java.lang.IllegalStateException: Failed to bind properties under 'app.client'\n"
        f'\tProperty: app.client.{c.camel}\n\tValue: "{esc(c.value)}"\n\tOrigin: class path resource [application-prod.yml] - {r.randint(3, 80)}:{r.randint(3, 20)}\n'
        f"\tat org.springframework.boot.context.properties.bind.Binder.handleBindError(Binder.java:{r.randint(300, 400)})\n"
        f"\tat com.{pick(r, ORGS).replace('-', '')}.Application.main(Application.java:{r.randint(10, 40)})"
    )


def c_shell(r: Random, c: Cred) -> str:
    if c.multiline:
        return (
            f"$ cat ~/.ssh/{pick(r, ['id_ed25519', 'deploy_key', 'id_rsa'])}\n{c.value}\n$ chmod 600 ~/.ssh/deploy_key"
        )
    cmd = pick(
        r,
        [
            f"$ export {env_line(c)}\n$ ./bin/sync --dry-run\nsynced {r.randint(2, 300)} objects in {r.random():.2f}s",
            f'$ curl -s -H "Authorization: Bearer {c.value}" https://api.{pick(r, ORGS)}.io/v2/me | jq .login\n"{person(r)[1]}"',
            f"$ {pick(r, ['mycli', 'deployctl', 'terraform login'])} --token={c.value} --env prod\nOK",
            f"$ echo '{c.value}' | docker login {pick(r, ['ghcr.io', 'registry.gitlab.com', 'docker.io'])} -u {person(r)[1]} --password-stdin\nLogin Succeeded",
        ],
    )
    return "\n".join(f"$ export {e}" for e in c.extra) + ("\n" if c.extra else "") + cmd


def c_jupyter(r: Random, c: Cred) -> str:
    return (
        f"In [{r.randint(1, 40)}]: cfg = load_config('prod')\n        cfg\n"
        f"Out[{r.randint(1, 40)}]: {{'region': 'us-east-1', '{c.snake.lower()}': '{esc(c.value)}', 'batch_size': {r.choice([32, 64, 128])}, 'run_id': '{uid(r)}'}}"
    )


def c_tfstate(r: Random, c: Cred) -> str:
    return (
        '{\n  "version": 4,\n  "terraform_version": "1.7.5",\n'
        f'  "serial": {r.randint(1, 400)},\n  "lineage": "{uid(r)}",\n  "resources": [\n    {{\n      "mode": "managed",\n'
        f'      "type": "{pick(r, ["aws_db_instance", "github_actions_secret", "kubernetes_secret", "azurerm_key_vault_secret"])}",\n'
        f'      "name": "{pick(r, SERVICES).replace("-", "_")}",\n      "instances": [\n        {{\n          "attributes": {{\n'
        f'            "id": "{pick(r, SERVICES)}-{hexs(r, 8)}",\n            "arn": "arn:aws:rds:us-east-1:{rs(r, DIGITS, 12)}:db:{pick(r, SERVICES)}",\n'
        f"            {json_pair(c, pick(r, ['password', 'plaintext_value', 'value', c.name.lower()]))}\n"
        '          },\n          "sensitive_attributes": []\n        }\n      ]\n    }\n  ]\n}'
    )


def c_helm(r: Random, c: Cred) -> str:
    return (
        f"# values-{pick(r, ['prod', 'staging'])}.yaml\nimage:\n  repository: ghcr.io/{pick(r, ORGS)}/{pick(r, SERVICES)}\n"
        f'  tag: "1.{r.randint(0, 30)}.{r.randint(0, 9)}"\nreplicaCount: {r.randint(1, 6)}\nenv:\n{yaml_pair(c, "  ")}\n'
        "resources:\n  limits:\n    memory: 512Mi"
    )


def c_ansible(r: Random, c: Cred) -> str:
    return f"---\n# group_vars/{pick(r, ['prod', 'db_servers', 'all'])}.yml\nntp_server: time.{pick(r, ORGS)}.io\n{yaml_pair(c)}\napp_user: deploy\n"


def c_compose(r: Random, c: Cred) -> str:
    return (
        f"services:\n  {pick(r, SERVICES)}:\n    image: {pick(r, ORGS)}/{pick(r, SERVICES)}:latest\n    environment:\n"
        + "".join(f"      - {e}\n" for e in c.extra)
        + f'      - {env_line(c)}\n    ports:\n      - "{r.randint(3000, 9000)}:8080"'
    )


def c_code(r: Random, c: Cred) -> str:
    lang = pick(r, LANGS)
    head: str = _DATA["code_head"][lang]
    tail: str = _DATA["code_tail"][lang]
    ext: str = _DATA["code_ext"][lang]
    comment = "#" if lang in ("python", "ruby") else "//"
    return (
        f"{comment} src/{pick(r, SERVICES).replace('-', '_')}/client.{ext}\n" + head + code_literal(r, c, lang) + tail
    )


def c_xml(r: Random, c: Cred) -> str:
    return pick(
        r,
        [
            f'<configuration>\n  <appSettings>\n    <add key="{c.name}" value="{c.value}" />\n    <add key="Environment" value="Production" />\n  </appSettings>\n</configuration>',
            f"<settings>\n  <servers>\n    <server>\n      <id>{pick(r, ORGS)}-releases</id>\n      <username>ci</username>\n      <password>{c.value}</password>\n    </server>\n  </servers>\n</settings>",
            f'<?xml version="1.0" encoding="utf-8"?>\n<configuration>\n  <packageSourceCredentials>\n    <{pick(r, ORGS)}>\n      <add key="Username" value="ci" />\n      <add key="ClearTextPassword" value="{c.value}" />\n    </{pick(r, ORGS)}>\n  </packageSourceCredentials>\n</configuration>',
        ],
    )


def c_properties(r: Random, c: Cred) -> str:
    key = pick(r, ["app.client." + c.camel, c.name.lower().replace("_", "."), "spring.datasource.password", c.name])
    return f"# application-prod.properties\nserver.port=8080\nspring.jpa.open-in-view=false\n{key}={c.value}\nmanagement.endpoints.web.exposure.include=health,info"


def c_ini(r: Random, c: Cred) -> str:
    if c.kind in ("aws-secret-key", "aws-session-token"):
        return (
            f"$ cat ~/.aws/credentials\n[{pick(r, ['default', 'prod', 'ci'])}]\n"
            + "\n".join(c.extra)
            + f"\n{c.name.lower()} = {c.value}\nregion = us-east-1"
        )
    return f"[{pick(r, ['server', 'auth', 'upstream', 'pypi'])}]\nhost = {host(r)}\n{c.name.lower()} = {c.value}\nretries = 3"


def c_toml(r: Random, c: Cred) -> str:
    return f'[{pick(r, ["registry", "client", "integrations." + pick(r, SERVICES)])}]\nurl = "https://{host(r)}"\n{c.name.lower()} = "{esc(c.value)}"\ntimeout_ms = {r.randint(100, 5000)}'


def c_http(r: Random, c: Cred) -> str:
    return (
        f"$ curl -v https://api.{pick(r, ORGS)}.io/v1/orders -H 'X-Api-Key: {c.value}'\n> GET /v1/orders HTTP/2\n> Host: api.{pick(r, ORGS)}.io\n"
        f'> user-agent: curl/8.5.0\n< HTTP/2 200\n< x-request-id: {uid(r)}\n< etag: W/"{hexs(r, 16)}"'
    )


def c_sql(r: Random, c: Cred) -> str:
    if c.kind == "password":
        return pick(
            r,
            [
                f"CREATE USER {pick(r, ['reporting', 'app_rw', 'grafana'])} WITH PASSWORD '{c.value}';\nGRANT CONNECT ON DATABASE billing TO reporting;",
                f"ALTER ROLE app_rw PASSWORD '{c.value}' VALID UNTIL '2026-01-01';",
                f"CREATE USER 'etl'@'%' IDENTIFIED BY '{c.value}';\nGRANT SELECT ON analytics.* TO 'etl'@'%';",
                f"CREATE SERVER reporting FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '{host(r)}', dbname 'ledger');\nCREATE USER MAPPING FOR app SERVER reporting OPTIONS (user 'ro', password '{c.value}');",
            ],
        )
    return f"INSERT INTO integrations (workspace_id, provider, token, created_at)\nVALUES ('{uid(r)}', '{c.about}', '{c.value}', now());"


def c_workflow(r: Random, c: Cred) -> str:
    return (
        "name: release\non:\n  push:\n    tags: ['v*']\njobs:\n  publish:\n    runs-on: ubuntu-latest\n    env:\n"
        f"      {c.name}: {c.value}\n    steps:\n      - uses: actions/checkout@{sha(r)}\n      - run: make publish"
    )


SINGLE_LINE_CARRIERS: dict[str, Carrier] = {
    "commit-message": c_commit,
    "git-show": c_git_show,
    "pr-description": c_pr,
    "review-comment": c_review,
    "chat-turn": c_chat,
    "env-dump": c_env_dump,
    "cat-dotenv": c_cat_env,
    "docker-inspect": c_docker_inspect,
    "ci-log": c_ci_log,
    "stack-trace": c_stack_trace,
    "shell": c_shell,
    "jupyter": c_jupyter,
    "terraform-state": c_tfstate,
    "helm-values": c_helm,
    "ansible-vars": c_ansible,
    "docker-compose": c_compose,
    "code": c_code,
    "xml": c_xml,
    "properties": c_properties,
    "ini": c_ini,
    "toml": c_toml,
    "http-dump": c_http,
    "sql": c_sql,
    "workflow": c_workflow,
}
MULTILINE_CARRIERS = [
    "commit-message",
    "pr-description",
    "chat-turn",
    "ci-log",
    "shell",
    "helm-values",
    "ansible-vars",
    "terraform-state",
    "code",
    "docker-inspect",
]


def k8s_secret_sample(r: Random, kind: Kind) -> str:
    name = pick(r, SERVICES)
    fields = [f"  username: {b64(pick(r, ['app', 'admin', 'ci']).encode())}"]
    secret_fields = r.sample(
        ["password", "api-token", "client-secret", "redis-password", "DATABASE_PASSWORD"], r.randint(1, 2)
    )
    for f in secret_fields:
        fields.append(f"  {f}: {mark(kind.name, kind.make(r))}")
    r.shuffle(fields)
    return (
        f"assistant: The pod can't authenticate, so I looked at the secret it mounts:\n\n$ kubectl get secret {name}-credentials -o yaml\n"
        f"apiVersion: v1\ndata:\n"
        + "\n".join(fields)
        + f'\nkind: Secret\nmetadata:\n  creationTimestamp: "{ts(r)}"\n  name: {name}-credentials\n'
        f'  namespace: {pick(r, ["default", "payments", "prod"])}\n  resourceVersion: "{r.randint(10**6, 10**8)}"\n  uid: {uid(r)}\ntype: Opaque'
    )


def basic_auth_sample(r: Random, kind: Kind) -> str:
    m = mark(kind.name, kind.make(r))
    return pick(
        r,
        [
            f'$ cat ~/.docker/config.json\n{{\n  "auths": {{\n    "{pick(r, ["ghcr.io", "registry.gitlab.com", "https://index.docker.io/v1/"])}": {{\n      "auth": "{m}"\n    }}\n  }},\n  "credsStore": ""\n}}',
            f"> POST /api/v4/projects/{r.randint(10, 9999)}/trigger/pipeline HTTP/1.1\n> Host: {host(r)}\n> Authorization: Basic {m}\n> Content-Type: application/json\n< HTTP/1.1 201 Created",
            f"user: the webhook from our monitor sends `Authorization: Basic {m}` and nginx rejects it, why?",
            f"; .npmrc\nregistry=https://{pick(r, ORGS)}.jfrog.io/artifactory/api/npm/npm/\n_auth={m}\nalways-auth=true",
        ],
    )


def secret_samples(r: Random) -> list[Sample]:
    samples: list[Sample] = []
    for kind in KINDS:
        for i in range(
            SECRETS_PER_KIND + (3 if kind.name in ("password", "database-password", "private-key", "jwt") else 0)
        ):
            if kind.name == "k8s-secret-data":
                samples.append(Sample("kubectl-secret", *unmark(k8s_secret_sample(r, kind))))
                continue
            if kind.name == "basic-auth":
                samples.append(Sample("basic-auth-carrier", *unmark(basic_auth_sample(r, kind))))
                continue
            c = build_cred(r, kind)
            names = MULTILINE_CARRIERS if c.multiline else list(SINGLE_LINE_CARRIERS)
            if kind.name not in ("password", "database-password"):
                names = [n for n in names if n != "sql"] if i % 7 else names
            carrier = names[(i * 5 + r.randrange(len(names))) % len(names)]
            if kind.name == "password" and i % 3 == 0:
                carrier = "sql"  # CREATE USER … PASSWORD '…' and friends
            text, spans = unmark(SINGLE_LINE_CARRIERS[carrier](r, c))
            samples.append(Sample(carrier, text, spans))
    return samples


# ---------------------------------------------------------------------------------------------
# Non-secrets: engineering text that looks like a secret and is not one

NonSecret = Callable[[Random], str]


def ns_git_log(r: Random) -> str:
    if r.random() < 0.5:
        lines = [
            f"{hexs(r, r.choice([7, 8, 10]))} {pick(r, ['feat', 'fix', 'chore', 'refactor'])}({pick(r, SERVICES)}): {pick(r, ['rotate token handling', 'bump deps', 'retry on 429', 'drop legacy auth header', 'secret scanning in CI'])}"
            for _ in range(r.randint(4, 12))
        ]
        lines[0] = lines[0].replace(" ", " (HEAD -> main, origin/main) ", 1)
        return "$ git log --oneline\n" + "\n".join(lines)
    name, handle = person(r)
    return (
        f"commit {sha(r)}\nMerge: {hexs(r, 7)} {hexs(r, 7)}\nAuthor: {name} <{handle}@{pick(r, ORGS)}.io>\nDate:   Mon Feb {r.randint(1, 28)} 09:1{r.randint(0, 9)}:44 2025 +0000\n\n"
        f"    Merge pull request #{r.randint(100, 9000)} from {handle}/token-refresh\n\n    Refresh OAuth tokens before expiry\n\n"
        f"    Change-Id: I{hexs(r, 40)}\n    Reviewed-on: https://review.{pick(r, ORGS)}.io/c/{pick(r, SERVICES)}/+/{r.randint(10000, 99999)}\n    Signed-off-by: {name} <{handle}@{pick(r, ORGS)}.io>"
    )


def ns_git_show(r: Random) -> str:
    f = pick(r, FILES)
    return (
        f"commit {sha(r)} (tag: v{r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 9)})\ntree {sha(r)}\nparent {sha(r)}\n\n"
        f"diff --git a/{f} b/{f}\nindex {hexs(r, 12)}..{hexs(r, 12)} 100644\n--- a/{f}\n+++ b/{f}\n"
        f'@@ -1,3 +1,3 @@\n-VERSION = "{sha(r)}"\n+VERSION = "{sha(r)}"\n Binary files a/logo.png and b/logo.png differ\n'
        f"similarity index 9{r.randint(0, 9)}%\nrename from old/{f}"
    )


def ns_package_lock(r: Random) -> str:
    pkg = pick(r, ["lodash", "@babel/core", "react-dom", "zod", "esbuild", "@types/node", "jsonwebtoken", "dotenv"])
    ver = f"{r.randint(0, 20)}.{r.randint(0, 30)}.{r.randint(0, 20)}"
    base = pkg.split("/")[-1]
    if r.random() < 0.5:
        return (
            f'    "node_modules/{pkg}": {{\n      "version": "{ver}",\n      "resolved": "https://registry.npmjs.org/{pkg}/-/{base}-{ver}.tgz",\n'
            f'      "integrity": "sha512-{b64(r.randbytes(64))}",\n      "dev": true,\n      "license": "MIT"\n    }}'
        )
    return f'{pkg}@^{ver}:\n  version "{ver}"\n  resolved "https://registry.yarnpkg.com/{pkg}/-/{base}-{ver}.tgz#{sha(r)}"\n  integrity sha512-{b64(r.randbytes(64))}'


def ns_poetry_lock(r: Random) -> str:
    name = pick(r, ["requests", "pydantic-core", "cryptography", "boto3", "httpx", "numpy"])
    ver = f"{r.randint(0, 5)}.{r.randint(0, 30)}.{r.randint(0, 9)}"
    files = "\n".join(
        f'    {{file = "{name.replace("-", "_")}-{ver}-cp312-cp312-{plat}.whl", hash = "sha256:{hexs(r, 64)}"}},'
        for plat in ["manylinux_2_17_x86_64", "macosx_11_0_arm64", "win_amd64"]
    )
    if r.random() < 0.3:
        return f"{name}=={ver} \\\n    --hash=sha256:{hexs(r, 64)} \\\n    --hash=sha256:{hexs(r, 64)}"
    return f'[[package]]\nname = "{name}"\nversion = "{ver}"\noptional = false\npython-versions = ">=3.9"\nfiles = [\n{files}\n]'


def ns_cargo_lock(r: Random) -> str:
    if r.random() < 0.5:
        mod = pick(
            r,
            _DATA["go_modules"],
        )
        ver = f"v{r.randint(0, 2)}.{r.randint(0, 60)}.{r.randint(0, 9)}"
        return f"{mod} {ver} h1:{b64(r.randbytes(32))}\n{mod} {ver}/go.mod h1:{b64(r.randbytes(32))}"
    name = pick(r, ["serde", "tokio", "ring", "rustls", "hyper", "base64"])
    return f'[[package]]\nname = "{name}"\nversion = "{r.randint(0, 2)}.{r.randint(0, 40)}.{r.randint(0, 9)}"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "{hexs(r, 64)}"\ndependencies = [\n "libc",\n]'


def ns_docker_digest(r: Random) -> str:
    img = f"{pick(r, ['ghcr.io', 'public.ecr.aws', 'docker.io'])}/{pick(r, ORGS)}/{pick(r, SERVICES)}"
    layers = "\n".join(f"{hexs(r, 12)}: Pull complete" for _ in range(r.randint(2, 6)))
    return pick(
        r,
        [
            f"$ docker pull {img}:1.{r.randint(0, 20)}\n{layers}\nDigest: sha256:{hexs(r, 64)}\nStatus: Downloaded newer image for {img}:1.{r.randint(0, 20)}",
            f"FROM {img}@sha256:{hexs(r, 64)} AS build\nCOPY --from=build /app /app",
            f"image: {img}@sha256:{hexs(r, 64)}\nimagePullPolicy: IfNotPresent",
            f"REPOSITORY  TAG  DIGEST  IMAGE ID  CREATED  SIZE\n{img}  latest  sha256:{hexs(r, 64)}  {hexs(r, 12)}  2 days ago  {r.randint(40, 900)}MB",
        ],
    )


def ns_k8s_meta(r: Random) -> str:
    svc = pick(r, SERVICES)
    h = rs(r, ALNUM_L, 10)
    return (
        f'metadata:\n  name: {svc}-{h}-{rs(r, ALNUM_L, 5)}\n  namespace: prod\n  uid: {uid(r)}\n  resourceVersion: "{r.randint(10**6, 10**9)}"\n'
        f"  labels:\n    pod-template-hash: {h}\n    controller-revision-hash: {svc}-{rs(r, ALNUM_L, 10)}\n  ownerReferences:\n  - apiVersion: apps/v1\n"
        f"    kind: ReplicaSet\n    name: {svc}-{h}\n    uid: {uid(r)}\nstatus:\n  containerStatuses:\n  - containerID: containerd://{hexs(r, 64)}\n"
        f"    imageID: ghcr.io/{pick(r, ORGS)}/{svc}@sha256:{hexs(r, 64)}"
    )


def ns_k8s_secret_listing(r: Random) -> str:
    svc = pick(r, SERVICES)
    if r.random() < 0.5:
        return (
            f"$ kubectl describe secret {svc}-credentials\nName:         {svc}-credentials\nNamespace:    prod\nLabels:       app={svc}\n"
            f"Annotations:  sealedsecrets.bitnami.com/managed: true\n\nType:  Opaque\n\nData\n====\npassword:  {r.randint(12, 40)} bytes\napi-token:  {r.randint(30, 90)} bytes\nusername:  {r.randint(3, 9)} bytes"
        )
    rows = "\n".join(
        f"{s}-{k}   {t}   {r.randint(1, 5)}      {r.randint(2, 400)}d"
        for s, k, t in [
            (pick(r, SERVICES), "tls", "kubernetes.io/tls"),
            (svc, "credentials", "Opaque"),
            ("regcred", "docker", "kubernetes.io/dockerconfigjson"),
        ]
    )
    return f"$ kubectl get secrets -n prod\nNAME   TYPE   DATA   AGE\n{rows}"


def ns_tf_ids(r: Random) -> str:
    return (
        '{\n  "mode": "managed",\n  "type": "aws_instance",\n  "name": "bastion",\n  "instances": [{\n    "attributes": {\n'
        f'      "id": "i-0{hexs(r, 16)}",\n      "ami": "ami-0{hexs(r, 16)}",\n      "subnet_id": "subnet-0{hexs(r, 16)}",\n'
        f'      "vpc_security_group_ids": ["sg-0{hexs(r, 16)}"],\n      "key_name": "ops-{pick(r, ORGS)}",\n      "kms_key_id": "arn:aws:kms:us-east-1:{rs(r, DIGITS, 12)}:key/{uid(r)}",\n'
        f'      "zone_id": "Z{rs(r, UPPER + DIGITS, 20)}",\n      "password_data": "",\n      "get_password_data": false\n    }},\n    "private": "{b64(json.dumps({"schema_version": "1"}).encode())}"\n  }}]\n}}'
    )


def ns_tf_plan(r: Random) -> str:
    return (
        f'  # aws_db_instance.{pick(r, SERVICES).replace("-", "_")} will be updated in-place\n  ~ resource "aws_db_instance" "main" {{\n'
        f'        id                 = "db-{rs(r, UPPER + DIGITS, 26)}"\n      ~ password           = (sensitive value)\n      + master_user_secret = (known after apply)\n'
        f'        tags               = {{\n            "commit" = "{sha(r)}"\n        }}\n    }}\n\nPlan: 0 to add, 1 to change, 0 to destroy.'
    )


def ns_aws_request_ids(r: Random) -> str:
    return (
        f"< HTTP/1.1 403 Forbidden\n< x-amz-request-id: {rs(r, UHEX, 16)}\n< x-amz-id-2: {b64(r.randbytes(57))}\n"
        f"< x-amzn-RequestId: {uid(r)}\n< x-amz-cf-id: {b64url(r.randbytes(42))}==\n< Date: Tue, 0{r.randint(1, 9)} Apr 2025 10:00:00 GMT\n"
        f"<Error><Code>AccessDenied</Code><RequestId>{rs(r, UHEX, 16)}</RequestId><HostId>{b64(r.randbytes(57))}</HostId></Error>"
    )


def ns_arns(r: Random) -> str:
    acct = rs(r, DIGITS, 12)
    return "\n".join(
        [
            f"arn:aws:iam::{acct}:role/{pick(r, SERVICES)}-task-role",
            f"arn:aws:secretsmanager:us-east-1:{acct}:secret:prod/{pick(r, SERVICES)}/db-{rs(r, B62, 6)}",
            f"arn:aws:kms:eu-west-1:{acct}:key/{uid(r)}",
            f"arn:aws:lambda:us-east-1:{acct}:function:{pick(r, SERVICES)}:{r.randint(1, 90)}",
            f"arn:aws:sts::{acct}:assumed-role/GitHubActions/{r.randint(10**9, 10**10)}",
            f"arn:aws:ssm:us-east-1:{acct}:parameter/prod/{pick(r, SERVICES)}/api_token",
        ][: r.randint(2, 6)]
    )


def ns_cloudwatch(r: Random) -> str:
    rid = uid(r)
    return (
        f"log group: /aws/lambda/{pick(r, SERVICES)}\nlog stream: 2025/0{r.randint(1, 9)}/1{r.randint(0, 9)}/[$LATEST]{hexs(r, 32)}\n"
        f"START RequestId: {rid} Version: $LATEST\nEND RequestId: {rid}\nREPORT RequestId: {rid}\tDuration: {r.random() * 900:.2f} ms\tBilled Duration: {r.randint(1, 900)} ms\t"
        f"Memory Size: 1024 MB\tMax Memory Used: {r.randint(80, 900)} MB\nXRAY TraceId: 1-{hexs(r, 8)}-{hexs(r, 24)}\tSegmentId: {hexs(r, 16)}\tSampled: true"
    )


def ns_s3_etag(r: Random) -> str:
    multipart = f"-{r.randint(2, 40)}" if r.random() < 0.4 else ""
    return (
        '$ aws s3api head-object --bucket acme-artifacts --key builds/app.tar.gz\n{\n    "AcceptRanges": "bytes",\n'
        f'    "LastModified": "{ts(r)}",\n    "ContentLength": {r.randint(10**4, 10**9)},\n    "ETag": "\\"{hexs(r, 32)}{multipart}\\"",\n'
        f'    "VersionId": "{rs(r, B62 + "._", 32)}",\n    "ChecksumSHA256": "{b64(r.randbytes(32))}",\n    "ServerSideEncryption": "aws:kms",\n'
        f'    "SSEKMSKeyId": "arn:aws:kms:us-east-1:{rs(r, DIGITS, 12)}:key/{uid(r)}"\n}}'
    )


def ns_sentry(r: Random) -> str:
    eid = hexs(r, 32)
    return pick(
        r,
        [
            f"Sentry event {eid} captured for issue {pick(r, SERVICES).upper()}-{rs(r, UPPER + DIGITS, 3)}: https://{pick(r, ORGS)}.sentry.io/issues/{r.randint(10**9, 10**10)}/events/{eid}/",
            f'{{"event_id": "{eid}", "level": "error", "release": "{pick(r, SERVICES)}@{sha(r)}", "trace_id": "{hexs(r, 32)}", "fingerprint": ["{{{{ default }}}}"]}}',
        ],
    )


def ns_otel(r: Random) -> str:
    tid, sid = hexs(r, 32), hexs(r, 16)
    return pick(
        r,
        [
            f"traceparent: 00-{tid}-{sid}-01\ntracestate: rojo={hexs(r, 16)},congo=t61rcWkgMzE\nX-B3-TraceId: {tid}\nX-B3-SpanId: {hexs(r, 16)}",
            f'{{"timestamp":"{ts(r)}","severity":"INFO","body":"checkout completed","trace_id":"{tid}","span_id":"{sid}","attributes":{{"http.route":"/v1/checkout","order.id":"{uid(r)}"}}}}',
        ],
    )


def ns_base64_fixture(r: Random) -> str:
    blob = b64(r.randbytes(r.choice([24, 48, 96, 180])))
    return pick(
        r,
        [
            f'FIXTURE_THUMBNAIL = base64.b64decode(\n    "{blob}"\n)',
            f'<img alt="logo" src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAA{b64(r.randbytes(120))}" />',
            f'it("decodes the frame", () => {{\n  const frame = Buffer.from("{blob}", "base64");\n  expect(parse(frame).length).toBe({r.randint(10, 200)});\n}});',
            f'{{"payload": "{blob}", "encoding": "base64", "contentType": "application/x-protobuf"}}',
        ],
    )


def ns_minified_js(r: Random) -> str:
    ids = [rs(r, string.ascii_letters, r.randint(1, 2)) for _ in range(8)]
    chunk = ",".join(f'{r.randint(10, 999)}:"{hexs(r, 8)}"' for _ in range(r.randint(3, 8)))
    return (
        f'!function(e){{var t={{}};function n(r){{if(t[r])return t[r].exports}}n.p="/static/js/",n.u=function(e){{return""+({{{chunk}}}[e])+".chunk.js"}}}}([]);'
        f'var {ids[0]}=function({ids[1]},{ids[2]}){{return {ids[1]}.{ids[3]}?"css-{rs(r, ALNUM_L, 7)}":"{b64url(r.randbytes(12))}"}};'
        f'window.__NEXT_DATA__={{"buildId":"{rs(r, B64URL, 21)}","page":"/","query":{{}}}};'
    )


def ns_source_map(r: Random) -> str:
    vlq = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    mappings = ";".join(
        ",".join(rs(r, vlq, r.randint(4, 8)) for _ in range(r.randint(3, 9))) for _ in range(r.randint(3, 8))
    )
    return f'{{"version":3,"file":"main.{hexs(r, 8)}.js","sources":["webpack://app/./src/index.tsx"],"names":["e","t","n"],"mappings":"{mappings}","sourceRoot":""}}'


def ns_svg(r: Random) -> str:
    pts = " ".join(
        f"{pick(r, list('MLCQSZmlcqs'))}{r.random() * 24:.3f} {r.random() * 24:.3f}" for _ in range(r.randint(6, 20))
    )
    if r.random() < 0.3:
        return f"@font-face {{\n  font-family: Inter;\n  src: url(data:font/woff2;base64,d09GMgABAAAAA{b64(r.randbytes(150))}) format('woff2');\n}}"
    return f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path fill-rule="evenodd" d="{pts}" clip-rule="evenodd"/></svg>'


def ns_public_keys(r: Random) -> str:
    which = r.randrange(4)
    if which == 0:
        return f"$ cat ~/.ssh/authorized_keys\n{ssh_public(r)} {person(r)[1]}@laptop\n{ssh_public(r)} deploy@ci"
    if which == 1:
        return f"|1|{b64(r.randbytes(20))}|{b64(r.randbytes(20))} ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBB{b64(r.randbytes(63))}"
    if which == 2:
        return f"The service verifies tokens with this key:\n\n{public_pem(r)}"
    return (
        f'{{"keys": [{{"kty": "RSA", "use": "sig", "alg": "RS256", "kid": "{rs(r, B64URL, 43)}",\n'
        f'  "n": "{b64url(r.randbytes(256))}",\n  "e": "AQAB", "x5t": "{b64url(r.randbytes(20))}"}}]}}'
    )


def ns_certificates(r: Random) -> str:
    if r.random() < 0.5:
        return f"$ openssl s_client -showcerts -connect api.{pick(r, ORGS)}.io:443 </dev/null\n{certificate(r)}\n{certificate(r)}"
    serial = ":".join(rs(r, "0123456789abcdef", 2) for _ in range(16))
    modulus = ":".join(rs(r, HEX, 2) for _ in range(30))
    return f"Certificate:\n    Data:\n        Version: 3 (0x2)\n        Serial Number:\n            {serial}\n        Signature Algorithm: sha256WithRSAEncryption\n            Modulus:\n                00:{modulus}\n        X509v3 Subject Key Identifier:\n            {':'.join(rs(r, UHEX, 2) for _ in range(20))}"


def ns_fingerprints(r: Random) -> str:
    fp = b64(r.randbytes(32)).rstrip("=")
    return pick(
        r,
        [
            f"$ ssh-keygen -lf ~/.ssh/id_ed25519.pub\n256 SHA256:{fp} {person(r)[1]}@{pick(r, ORGS)}.io (ED25519)",
            f"The authenticity of host 'bastion.{pick(r, ORGS)}.io ({r.randint(1, 254)}.{r.randint(0, 254)}.{r.randint(0, 254)}.{r.randint(1, 254)})' can't be established.\nED25519 key fingerprint is SHA256:{fp}.\nThis key is not known by any other names.",
            f"deploy key added: {':'.join(rs(r, HEX, 2) for _ in range(16))} (MD5) / SHA256:{fp}",
        ],
    )


def ns_gpg(r: Random) -> str:
    fpr = rs(r, UHEX, 40)
    spaced = " ".join(fpr[i : i + 4] for i in range(0, 40, 4))
    name, handle = person(r)
    return pick(
        r,
        [
            f"$ gpg --list-secret-keys --keyid-format=long\nsec   ed25519/{fpr[-16:]} 2024-03-01 [SC]\n      {fpr}\nuid                 [ultimate] {name} <{handle}@{pick(r, ORGS)}.io>\nssb   cv25519/{rs(r, UHEX, 16)} 2024-03-01 [E]",
            f'gpg: Signature made Tue 04 Mar 2025 10:11:12 CET\ngpg:                using RSA key {fpr}\ngpg: Good signature from "{name} <{handle}@{pick(r, ORGS)}.io>" [full]\nPrimary key fingerprint: {spaced}',
            f"git config --global user.signingkey {fpr[-16:]}",
        ],
    )


def ns_cdn(r: Random) -> str:
    lib = pick(
        r,
        _DATA["cdn_libraries"],
    )
    return pick(
        r,
        [
            f'<script src="https://cdn.jsdelivr.net/npm/{lib}" integrity="sha384-{b64(r.randbytes(48))}" crossorigin="anonymous"></script>',
            f'<link rel="preload" href="/_next/static/chunks/pages/_app-{hexs(r, 16)}.js" as="script"/><link rel="stylesheet" href="https://d{rs(r, ALNUM_L, 13)}.cloudfront.net/assets/app.{hexs(r, 20)}.css"/>',
            f"![diagram](https://user-images.githubusercontent.com/{r.randint(10**6, 10**8)}/{r.randint(10**8, 10**9)}-{uid(r)}.png)",
        ],
    )


def ns_stripe_ids(r: Random) -> str:
    return (
        f'{{\n  "id": "pi_3{rs(r, B62, 23)}",\n  "object": "payment_intent",\n  "amount": {r.randint(100, 99999)},\n  "customer": "cus_{rs(r, B62, 14)}",\n'
        f'  "latest_charge": "ch_3{rs(r, B62, 23)}",\n  "payment_method": "pm_1{rs(r, B62, 23)}",\n  "invoice": "in_1{rs(r, B62, 23)}",\n'
        f'  "metadata": {{"order_id": "{uid(r)}"}}\n}}\nRequest-Id: req_{rs(r, B62, 14)}\nevent: evt_1{rs(r, B62, 23)} (payment_intent.succeeded) on acct_1{rs(r, B62, 15)}'
    )


def ns_vercel_ids(r: Random) -> str:
    app = pick(r, SERVICES)
    return (
        f"$ vercel inspect {app}-{rs(r, ALNUM_L, 9)}-{pick(r, ORGS)}.vercel.app\n  General\n    id      dpl_{rs(r, B62, 28)}\n    name    {app}\n    target  production\n"
        f"    project prj_{rs(r, B62, 28)}\n    team    team_{rs(r, B62, 24)}\n  x-vercel-id: {pick(r, ['iad1', 'fra1', 'sfo1'])}::{rs(r, ALNUM_L, 5)}-{r.randint(10**12, 10**13)}-{hexs(r, 12)}"
    )


def ns_slack_ids(r: Random) -> str:
    tsv = f"{r.randint(1_700_000_000, 1_760_000_000)}.{rs(r, DIGITS, 6)}"
    return (
        f'{{"ok": true, "channel": "C{rs(r, UPPER + DIGITS, 10)}", "ts": "{tsv}", "message": {{"bot_id": "B{rs(r, UPPER + DIGITS, 10)}", "app_id": "A{rs(r, UPPER + DIGITS, 10)}",'
        f' "user": "U{rs(r, UPPER + DIGITS, 10)}", "team": "T{rs(r, UPPER + DIGITS, 8)}", "text": "Deploy finished"}}}}\n'
        f"permalink: https://{pick(r, ORGS)}.slack.com/archives/C{rs(r, UPPER + DIGITS, 10)}/p{tsv.replace('.', '')}"
    )


def ns_password_prose(r: Random) -> str:
    return pick(
        r,
        [
            f"Passwords must be at least {r.randint(10, 16)} characters and may not reuse any of the last {r.randint(3, 24)} passwords. The reset link in the email expires after {r.randint(15, 60)} minutes.",
            f"Incident {r.randint(100, 999)}: the database password was rotated at 14:{r.randint(10, 59)} UTC and the old secret revoked; pods picked up the new value through the CSI driver within {r.randint(2, 9)} minutes.",
            "We hash passwords with argon2id (m=19456, t=2, p=1); never log the password field, and send the reset token only over the email channel.",
            "Q: why does `forgot password` return 200 for unknown emails?\nA: so the endpoint cannot be used to enumerate accounts.",
        ],
    )


def ns_token_docs(r: Random) -> str:
    return pick(
        r,
        _DATA["token_docs"],
    )


def ns_secret_refs(r: Random) -> str:
    n = pick(r, ["NPM_TOKEN", "DB_PASSWORD", "STRIPE_SECRET_KEY", "SLACK_WEBHOOK_URL", "AWS_SECRET_ACCESS_KEY"])
    return pick(
        r,
        [
            f"      - run: npm publish\n        env:\n          NODE_AUTH_TOKEN: ${{{{ secrets.{n} }}}}",
            f"        env:\n        - name: {n}\n          valueFrom:\n            secretKeyRef:\n              name: {pick(r, SERVICES)}-credentials\n              key: {n.lower()}",
            f'{n.lower()} = os.environ["{n}"]\nclient = Client(api_key=os.environ.get("{n}"))',
            f"const token = process.env.{n} ?? '';\nif (!token) throw new Error('{n} is not set');",
            f'String password = System.getenv("{n}");',
            f"$ vault kv get -field=password secret/data/prod/{pick(r, SERVICES)}/postgres",
            f"password: \"{{{{ vault_{n.lower()} }}}}\"\napi_token: \"{{{{ lookup('env', '{n}') }}}}\"",
            f"MasterUserPassword: '{{{{resolve:secretsmanager:prod/{pick(r, SERVICES)}:SecretString:password}}}}'",
            f"export {n}=$(op read op://Engineering/{pick(r, SERVICES)}/{n.lower()})",
            f'{n}=${{{n}:?must be set}}\npsql "postgres://app:${{DB_PASSWORD}}@{host(r)}/app"',
        ],
    )


def ns_encrypted(r: Random) -> str:
    which = r.randrange(4)
    if which == 0:
        enc = f"ENC[AES256_GCM,data:{b64(r.randbytes(r.randint(8, 40)))},iv:{b64(r.randbytes(32))},tag:{b64(r.randbytes(16))},type:str]"
        return (
            f"database:\n    password: {enc}\nsops:\n    age:\n        - recipient: age1{rs(r, 'qpzry9x8gf2tvdw0s3jn54khce6mua7l', 58)}\n"
            f'    lastmodified: "{ts(r)}"\n    mac: ENC[AES256_GCM,data:{b64(r.randbytes(64))},iv:{b64(r.randbytes(32))},tag:{b64(r.randbytes(16))},type:str]\n    version: 3.9.0'
        )
    if which == 1:
        lines = "\n".join("          " + hexs(r, 80) for _ in range(r.randint(3, 6)))
        return f"db_password: !vault |\n          $ANSIBLE_VAULT;1.1;AES256\n{lines}"
    if which == 2:
        return f"$ aws kms encrypt --key-id alias/app --plaintext fileb://token.txt --output text --query CiphertextBlob\nAQICAHh{b64(r.randbytes(150))}"
    return (
        f"apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata:\n  name: {pick(r, SERVICES)}\nspec:\n  encryptedData:\n"
        f"    password: AgB{b64(r.randbytes(400))}"
    )


def ns_placeholders(r: Random) -> str:
    return pick(
        r,
        [
            "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "export OPENAI_API_KEY=<your-api-key>",
            "STRIPE_SECRET_KEY=sk_live_...\nSTRIPE_WEBHOOK_SECRET=whsec_...",
            "aws_access_key_id = YOUR_ACCESS_KEY_ID\naws_secret_access_key = YOUR_SECRET_ACCESS_KEY",
            'DATABASE_URL="postgres://USER:PASSWORD@HOST:5432/DBNAME"',
            "password: REPLACE_ME\napi_key: TODO",
            "curl -H 'Authorization: Bearer <token>' https://api.example.com/v1/me",
            "SLACK_WEBHOOK_URL=https://hooks.slack.com/services/XXXXXXXXX/XXXXXXXXX/XXXXXXXXXXXXXXXXXXXXXXXX",
            'connectionString: "DefaultEndpointsProtocol=https;AccountName=<account>;AccountKey=<key>;EndpointSuffix=core.windows.net"',
            "ANTHROPIC_API_KEY=sk-ant-api03-...",
            "password = %(db_password)s\ntoken = {{ .Values.apiToken }}",
            f"{pick(r, ['HF_TOKEN', 'NPM_TOKEN', 'VAULT_TOKEN'])}=changeme",
            "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
        ],
    ) + pick(r, ["", "\n", f"\n# see docs/setup.md#{pick(r, ['tokens', 'secrets'])}"])


def ns_masked(r: Random) -> str:
    return pick(
        r,
        [
            f"OPENAI_API_KEY=sk-…{rs(r, B62, 4)}",
            f"$ gh auth status\ngithub.com\n  ✓ Logged in to github.com account {person(r)[1]} (keyring)\n  - Token: gho_************************************\n  - Token scopes: 'gist', 'read:org', 'repo'",
            f'{ts(r)} Run curl -H "Authorization: Bearer ***" https://api.{pick(r, ORGS)}.io',
            f"aws_access_key_id = AKIA************{rs(r, B32, 4)}",
            f"DATABASE_URL=postgres://app:****@{host(r)}:5432/app",
            '{"api_key": "[REDACTED]", "password": "********", "region": "eu-west-1"}',
            f"Your new key: ghp_{'•' * 32}{rs(r, B62, 4)} (copy it now, you won't see it again)",
            f"Stripe key ending in {rs(r, B62, 4)} was rolled by {email(r)}",
        ],
    )


def ns_handler_code(r: Random) -> str:
    return pick(
        r,
        _DATA["handler_code"],
    )


def ns_url_no_password(r: Random) -> str:
    return pick(
        r,
        [
            f"DATABASE_URL=postgres://app@{host(r)}:5432/app?sslmode=verify-full",
            "REDIS_URL=redis://localhost:6379/0",
            f"git clone https://{person(r)[1]}@github.com/{pick(r, ORGS)}/{pick(r, SERVICES)}.git",
            f"git@github.com:{pick(r, ORGS)}/{pick(r, SERVICES)}.git",
            f"ssh://git@bitbucket.{pick(r, ORGS)}.io:7999/plat/{pick(r, SERVICES)}.git",
            f"mongodb+srv://cluster0.{rs(r, ALNUM_L, 5)}.mongodb.net/?authSource=%24external&authMechanism=MONGODB-AWS",
            f"jdbc:postgresql://{host(r)}:5432/ledger?ssl=true&sslmode=require",
            f"https://{pick(r, ORGS)}.atlassian.net/browse/{pick(r, ['PLAT', 'SEC', 'OPS'])}-{r.randint(10, 9999)}",
        ],
    )


def ns_published_examples(r: Random) -> str:
    return pick(
        r,
        _DATA["published_examples"],
    ) + pick(r, ["", "\n# from the provider's documentation", "\n(example values from the docs; use your own)"])


def ns_public_by_design(r: Random) -> str:
    ref = rs(r, LOWER, 20)
    now = r.randint(1_690_000_000, 1_750_000_000)
    return pick(
        r,
        [
            f"NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY=pk_live_51{rs(r, B62, 97)}",
            f"NEXT_PUBLIC_SUPABASE_URL=https://{ref}.supabase.co\nNEXT_PUBLIC_SUPABASE_ANON_KEY={jwt(r, {'iss': 'supabase', 'ref': ref, 'role': 'anon', 'iat': now, 'exp': now + 315_360_000})}",
            f"VITE_SUPABASE_PUBLISHABLE_KEY=sb_publishable_{rs(r, B64URL, 31)}",
            f'Sentry.init({{ dsn: "https://{hexs(r, 32)}@o{r.randint(10**5, 10**7)}.ingest.us.sentry.io/{r.randint(10**6, 10**7)}", tracesSampleRate: 0.1 }});',
            f"datadogRum.init({{ applicationId: '{uid(r)}', clientToken: 'pub{hexs(r, 32)}', site: 'datadoghq.eu', service: '{pick(r, SERVICES)}' }});",
            f"mapboxgl.accessToken = 'pk.eyJ1Ijoi{b64url(pick(r, ORGS).encode())}IiwiYSI6Im{rs(r, B64URL, 20)}In0.{rs(r, B64URL, 22)}';",
            f'<div class="g-recaptcha" data-sitekey="6L{rs(r, B64URL, 38)}"></div>',
            f"GOOGLE_CLIENT_ID={r.randint(10**11, 10**12)}-{rs(r, ALNUM_L, 32)}.apps.googleusercontent.com",
        ],
    )


def ns_ids(r: Random) -> str:
    return pick(
        r,
        [
            f"{ts(r)} INFO job={pick(r, SERVICES)} correlation_id={uid(r)} idempotency_key={uid(r)} attempt={r.randint(1, 5)}",
            f"created order 01{rs(r, '0123456789ABCDEFGHJKMNPQRSTVWXYZ', 24)} (ulid) for customer {uid(r)}",
            f"ksuid={rs(r, B62, 27)} nanoid={rs(r, B64URL, 21)} snowflake={r.randint(10**17, 10**18)}",
            f"Workspace ID: {uid(r)}\nProject ID: {hexs(r, 24)}\nInstallation ID: {r.randint(10**7, 10**8)}",
        ],
    )


def ns_checksums(r: Random) -> str:
    return pick(
        r,
        [
            f"$ sha256sum dist/*\n{hexs(r, 64)}  dist/{pick(r, SERVICES)}-linux-amd64.tar.gz\n{hexs(r, 64)}  dist/{pick(r, SERVICES)}-darwin-arm64.tar.gz",
            f"md5: {hexs(r, 32)}\nsha1: {sha(r)}\nContent-MD5: {b64(r.randbytes(16))}",
            f"x-goog-hash: crc32c={b64(r.randbytes(4))},md5={b64(r.randbytes(16))}",
            f"sha512-{b64(r.randbytes(64))} {pick(r, SERVICES)}-1.0.0.tgz",
        ],
    )


def ns_ci_log_clean(r: Random) -> str:
    t = f"2025-0{r.randint(1, 9)}-1{r.randint(0, 9)}T0{r.randint(0, 9)}:1{r.randint(0, 9)}:0{r.randint(0, 9)}.{rs(r, DIGITS, 7)}Z"
    return (
        f"{t} ##[group]Run actions/cache@{sha(r)}\n{t} Cache restored from key: Linux-pnpm-store-{hexs(r, 64)}\n"
        f"{t} env:\n{t}   NODE_AUTH_TOKEN: ***\n{t}   GITHUB_SHA: {sha(r)}\n{t} Artifact digest: SHA256:{hexs(r, 64)}\n"
        f"{t} Requesting OIDC token for audience sts.amazonaws.com\n{t} Assumed role arn:aws:iam::{rs(r, DIGITS, 12)}:role/gha-deploy\n"
        f"{t} https://github.com/{pick(r, ORGS)}/{pick(r, SERVICES)}/actions/runs/{r.randint(10**9, 10**10)}/job/{r.randint(10**10, 10**11)}"
    )


def ns_jupyter_clean(r: Random) -> str:
    rows = "\n".join(f"{i}  {hexs(r, 24)}  {uid(r)}  {r.random():.4f}" for i in range(r.randint(3, 6)))
    return f"In [{r.randint(1, 50)}]: df.head()\nOut[{r.randint(1, 50)}]:\n   object_id                 run_id                                score\n{rows}\n\nIn [{r.randint(1, 50)}]: model.config._commit_hash\nOut[{r.randint(1, 50)}]: '{sha(r)}'"


def ns_stack_trace_clean(r: Random) -> str:
    return pick(
        r,
        [
            f"Traceback (most recent call last):\n  File \"/srv/app/worker.py\", line {r.randint(10, 300)}, in run\n    self.handle(msg)\nKeyError: 'token'\n<Worker object at 0x7f{hexs(r, 10)}> failed on message {uid(r)}",
            f"panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x{hexs(r, 7)}]\n\ngoroutine {r.randint(1, 900)} [running]:\nmain.(*Server).auth(0xc{hexs(r, 9)}, {{0x{hexs(r, 7)}, 0xc{hexs(r, 9)}}})",
            f'java.lang.NullPointerException: Cannot invoke "String.length()" because "password" is null\n\tat com.acme.auth.Validator.check(Validator.java:{r.randint(10, 99)})\n\tat com.acme.auth.LoginController$$SpringCGLIB$$0@{hexs(r, 7)}',
        ],
    )


def ns_content_addressed(r: Random) -> str:
    return pick(
        r,
        [
            f"version https://git-lfs.github.com/spec/v1\noid sha256:{hexs(r, 64)}\nsize {r.randint(10**4, 10**9)}",
            f"ipfs://bafybei{rs(r, 'abcdefghijklmnopqrstuvwxyz234567', 52)}\nQm{rs(r, '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz', 44)}",
            f"/nix/store/{rs(r, '0123456789abcdfghijklmnpqrsvwxyz', 32)}-python3-3.12.{r.randint(0, 9)}",
            f"remote cache hit: ac/{hexs(r, 64)} (bazel), cas/{hexs(r, 64)}",
        ],
    )


def ns_config_nonsecret(r: Random) -> str:
    return pick(
        r,
        [
            f"auth:\n  token_ttl: {r.randint(300, 86400)}\n  refresh_token_rotation: true\n  password_min_length: {r.randint(8, 16)}\n  api_key_header: X-Api-Key",
            f"llm:\n  max_tokens: {r.choice([1024, 4096, 8192])}\n  tokenizer: cl100k_base\n  secret_name: prod/{pick(r, SERVICES)}/openai",
            f"postgresql:\n  auth:\n    existingSecret: {pick(r, SERVICES)}-db\n    secretKeys:\n      adminPasswordKey: postgres-password\n      userPasswordKey: password",
            f"[azure]\ntenant_id = {uid(r)}\nclient_id = {uid(r)}\nsubscription_id = {uid(r)}\nuse_oidc = true",
            'password: ""\ntoken: null\nSECRET_KEY: ~\n# filled in by the init container',
            f'kms_key_id = "alias/{pick(r, SERVICES)}"\nsigning_key_path = "/var/run/secrets/{pick(r, SERVICES)}/signing.pem"\npassword_file = "/run/secrets/db_password"',
        ],
    )


def ns_urls_with_ids(r: Random) -> str:
    return pick(
        r,
        [
            f"https://docs.google.com/document/d/1{rs(r, B64URL, 43)}/edit#heading=h.{rs(r, ALNUM_L, 12)}",
            f"https://www.figma.com/design/{rs(r, B62, 22)}/Checkout?node-id={r.randint(1, 999)}-{r.randint(1, 9999)}",
            f"https://www.notion.so/{pick(r, ORGS)}/Runbook-{hexs(r, 32)}",
            f"https://gist.github.com/{person(r)[1]}/{hexs(r, 32)}",
            f"https://github.com/{pick(r, ORGS)}/{pick(r, SERVICES)}/compare/{sha(r)}...{sha(r)}",
            f"https://www.loom.com/share/{hexs(r, 32)}",
            f"https://grafana.{pick(r, ORGS)}.io/d/{rs(r, B62, 14)}/latency?orgId=1&from=now-6h",
            f"https://example.com/landing?utm_source=newsletter&fbclid=IwAR{rs(r, B64URL, 56)}",
        ],
    )


def ns_chat_clean(r: Random) -> str:
    return pick(
        r,
        [
            f"user: rotate the Stripe key after the leak report\n\nassistant: Done: I rolled the secret key in the dashboard, updated `STRIPE_SECRET_KEY` in the `prod` environment of the repository and redeployed {pick(r, SERVICES)}; the old key stops working in 12 hours.",
            f"assistant: `gh secret list` shows:\nNPM_TOKEN          Updated 2025-0{r.randint(1, 9)}-0{r.randint(1, 9)}\nAWS_ROLE_ARN       Updated 2025-0{r.randint(1, 9)}-1{r.randint(0, 9)}\nSLACK_WEBHOOK_URL  Updated 2024-1{r.randint(0, 2)}-2{r.randint(0, 8)}",
            f"assistant: `vault kv metadata get secret/prod/{pick(r, SERVICES)}`:\ncreated_time     {ts(r)}\ncurrent_version  {r.randint(1, 30)}\nmax_versions     0\n\nThe value itself I did not print.",
            "user: don't paste tokens here, use the 1Password link\n\nassistant: Understood. I'll reference the item as op://Engineering/deploy-bot/credential.",
        ],
    )


def ns_crypto(r: Random) -> str:
    return pick(
        r,
        [
            f"contract deployed at 0x{hexs(r, 40)} in tx 0x{hexs(r, 64)} (block {r.randint(10**6, 10**8)})",
            f"withdrawal address: bc1q{rs(r, 'qpzry9x8gf2tvdw0s3jn54khce6mua7l', 38)}",
            f"program id: {rs(r, '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz', 44)}",
        ],
    )


def ns_webhook_headers(r: Random) -> str:
    if r.random() < 0.5:
        return (
            f"POST /webhooks/github HTTP/1.1\nX-GitHub-Event: push\nX-GitHub-Delivery: {uid(r)}\nX-GitHub-Hook-ID: {r.randint(10**8, 10**9)}\n"
            f"X-Hub-Signature: sha1={sha(r)}\nX-Hub-Signature-256: sha256={hexs(r, 64)}\nUser-Agent: GitHub-Hookshot/{hexs(r, 7)}"
        )
    return f"Stripe-Signature: t={r.randint(1_700_000_000, 1_760_000_000)},v1={hexs(r, 64)},v0={hexs(r, 64)}\nsvix-signature: v1,{b64(r.randbytes(32))}"


def ns_dev_defaults(r: Random) -> str:
    return pick(
        r,
        _DATA["dev_defaults"],
    )


def ns_resource_names(r: Random) -> str:
    acct = rs(r, DIGITS, 12)
    return pick(
        r,
        [
            f"{acct}.dkr.ecr.us-east-1.amazonaws.com/{pick(r, SERVICES)}:{sha(r)[:12]}",
            f"/subscriptions/{uid(r)}/resourceGroups/rg-{pick(r, SERVICES)}/providers/Microsoft.KeyVault/vaults/kv-{pick(r, ORGS)}-prod",
            f"{pick(r, ['ci-deployer', 'bq-loader'])}@{pick(r, ORGS)}-prod-{r.randint(100000, 999999)}.iam.gserviceaccount.com",
            f"$ docker ps\nCONTAINER ID   IMAGE   STATUS\n{hexs(r, 12)}   {pick(r, SERVICES)}:latest   Up 3 hours\n{hexs(r, 12)}   redis:7   Up 3 hours",
            f"pod/{pick(r, SERVICES)}-{rs(r, ALNUM_L, 10)}-{rs(r, ALNUM_L, 5)} 1/1 Running 0 4h",
        ],
    )


def ns_env_dump_clean(r: Random) -> str:
    lines = [
        f"HOSTNAME={hexs(r, 12)}",
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin",
        f"SSH_AUTH_SOCK=/tmp/ssh-{rs(r, B62, 12)}/agent.{r.randint(1000, 99999)}",
        "GPG_AGENT_INFO=/run/user/1000/gnupg/S.gpg-agent:0:1",
        f"AWS_PROFILE={pick(r, ['prod-readonly', 'sandbox'])}",
        "AWS_REGION=us-east-1",
        f"KUBECONFIG=/home/{person(r)[1]}/.kube/config",
        f"GIT_COMMIT={sha(r)}",
        f"BUILD_ID={uid(r)}",
        "LS_COLORS=rs=0:di=01;34:ln=01;36:mh=00:pi=40;33",
        f"AWS_ROLE_ARN=arn:aws:iam::{rs(r, DIGITS, 12)}:role/ci",
        "AWS_WEB_IDENTITY_TOKEN_FILE=/var/run/secrets/eks.amazonaws.com/serviceaccount/token",
    ]
    r.shuffle(lines)
    return "$ env | sort\n" + "\n".join(sorted(lines[: r.randint(5, len(lines))]))


def ns_docker_inspect_clean(r: Random) -> str:
    return (
        f'[\n  {{\n    "Id": "{hexs(r, 64)}",\n    "Created": "{ts(r)}",\n    "Image": "sha256:{hexs(r, 64)}",\n'
        f'    "ResolvConfPath": "/var/lib/docker/containers/{hexs(r, 64)}/resolv.conf",\n    "Config": {{\n      "Env": ["PATH=/usr/local/bin:/usr/bin", "NODE_VERSION=20.{r.randint(0, 18)}.0", "YARN_VERSION=1.22.22"],\n'
        f'      "Labels": {{"org.opencontainers.image.revision": "{sha(r)}"}}\n    }}\n  }}\n]'
    )


def ns_sql_clean(r: Random) -> str:
    return pick(
        r,
        [
            "CREATE ROLE app_ro NOLOGIN;\nGRANT SELECT ON ALL TABLES IN SCHEMA public TO app_ro;\nALTER ROLE app_rw PASSWORD NULL;",
            f"SELECT id, email, password_hash, last_login FROM users WHERE id = '{uid(r)}';",
            "\\set pw `cat /run/secrets/reporting_password`\nCREATE USER reporting WITH PASSWORD :'pw';",
            f"UPDATE api_tokens SET revoked_at = now() WHERE token_prefix = 'nm_{rs(r, B62, 6)}' AND workspace_id = {r.randint(1, 9999)};",
            f"SELECT encode(digest(payload, 'sha256'), 'hex') FROM events WHERE id = {r.randint(1, 10**6)};\n-- {hexs(r, 64)}",
        ],
    )


def ns_helm_clean(r: Random) -> str:
    return (
        f"image:\n  repository: ghcr.io/{pick(r, ORGS)}/{pick(r, SERVICES)}\n  digest: sha256:{hexs(r, 64)}\n"
        f"podAnnotations:\n  checksum/config: {hexs(r, 64)}\nserviceAccount:\n  annotations:\n    eks.amazonaws.com/role-arn: arn:aws:iam::{rs(r, DIGITS, 12)}:role/{pick(r, SERVICES)}\n"
        f"externalSecrets:\n  refreshInterval: 1h\n  remoteRef:\n    key: prod/{pick(r, SERVICES)}\n    property: api_token"
    )


def ns_code_ids(r: Random) -> str:
    return pick(
        r,
        [
            f'MIGRATION_ID = "{hexs(r, 12)}"\ndown_revision = "{hexs(r, 12)}"\nbranch_labels = None',
            f'@Test\nvoid hashesMatch() {{\n    assertEquals("{hexs(r, 64)}", sha256Hex("hello"));\n}}',
            f'const FEATURE_FLAG_KEY = "{uid(r)}";\nconst CACHE_BUSTER = "{hexs(r, 8)}";',
            f'let salt = "{b64(r.randbytes(16))}"; // per-test fixture, not a credential',
            f'#[test]\nfn parses_uuid() {{\n    let id = Uuid::parse_str("{uid(r)}").unwrap();\n    assert_eq!(id.get_version_num(), 4);\n}}',
        ],
    )


def ns_review_clean(r: Random) -> str:
    return pick(
        r,
        [
            f"**{person(r)[1]}**: please don't hardcode the token here; read it from `settings.github_token` so the secret store can rotate it.",
            f"LGTM once CI is green. Digest pinned to sha256:{hexs(r, 64)} 👍",
            "> `const key = process.env.STRIPE_SECRET_KEY!`\n\nThe non-null assertion hides a missing key at boot; throw a clear error instead.",
            "Suggested change:\n```suggestion\n    password: {{ .Values.postgresql.auth.existingSecret }}\n```",
        ],
    )


def ns_pr_clean(r: Random) -> str:
    return (
        f"## What\n\nSwitches CI to OIDC: no long-lived AWS keys in `secrets.*` any more (removed `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`).\n\n"
        f"## Notes\n- Role: `arn:aws:iam::{rs(r, DIGITS, 12)}:role/gha-{pick(r, SERVICES)}`\n- Trust policy pins `repo:{pick(r, ORGS)}/{pick(r, SERVICES)}:ref:refs/heads/main`\n"
        f"- Build {hexs(r, 7)} verified; image sha256:{hexs(r, 64)}"
    )


def ns_commit_clean(r: Random) -> str:
    return (
        f"{pick(r, ['fix(auth): reject expired refresh tokens', 'chore: rotate signing key id', 'feat: store API keys hashed (sha256)', 'revert: add debug token logging'])}\n\n"
        f"This reverts commit {sha(r)}.\nKey id is now {pick(r, ['kid', 'key id'])} {rs(r, B64URL, 16)} (public, published in JWKS).\n\nFixes: {hexs(r, 12)} ({pick(r, ['log token prefix only', 'mask secrets in errors'])})"
    )


def ns_shell_clean(r: Random) -> str:
    return pick(
        r,
        [
            f'$ aws sts get-caller-identity\n{{\n    "UserId": "AROA{rs(r, B32, 17)}:{person(r)[1]}",\n    "Account": "{rs(r, DIGITS, 12)}",\n    "Arn": "arn:aws:sts::{rs(r, DIGITS, 12)}:assumed-role/Admin/{person(r)[1]}"\n}}',
            f"$ openssl rand -hex 4\n{hexs(r, 8)}\n$ git rev-parse HEAD\n{sha(r)}",
            f"$ kubectl get pods -o wide\nNAME                              READY   STATUS    RESTARTS   AGE\n{pick(r, SERVICES)}-{rs(r, ALNUM_L, 10)}-{rs(r, ALNUM_L, 5)}   1/1     Running   0          2d",
            f'$ terraform output\nbucket_arn = "arn:aws:s3:::{pick(r, ORGS)}-artifacts"\ndb_password = <sensitive>\nvpc_id = "vpc-0{hexs(r, 16)}"',
        ],
    )


def ns_properties_clean(r: Random) -> str:
    return pick(
        r,
        [
            f"spring.datasource.url=jdbc:postgresql://{host(r)}:5432/ledger\nspring.datasource.username=ledger\nspring.datasource.password=${{DB_PASSWORD}}",
            "[pypi]\nusername = __token__\npassword = ${PYPI_TOKEN}\nrepository = https://upload.pypi.org/legacy/",
            f"//registry.npmjs.org/:_authToken=${{NPM_TOKEN}}\n@{pick(r, ORGS)}:registry=https://npm.pkg.github.com",
            f'[registries.{pick(r, ORGS)}]\nindex = "sparse+https://cargo.{pick(r, ORGS)}.io/index/"\ncredential-provider = ["cargo:token"]',
            "<server>\n  <id>releases</id>\n  <username>${env.MAVEN_USER}</username>\n  <password>${env.MAVEN_PASSWORD}</password>\n</server>",
        ],
    )


def ns_jwt_like(r: Random) -> str:
    header = b64url(
        json.dumps({"alg": "RS256", "typ": "JWT", "kid": rs(r, B64URL, 20)}, separators=(",", ":")).encode()
    )
    return pick(
        r,
        [
            f'The header `{header}` decodes to {{"alg":"RS256",...}}; the payload is the second segment.',
            f"-----BEGIN AGE ENCRYPTED FILE-----\n{wrap(b64(b'age-encryption.org/v1' + r.randbytes(200)), 64)}\n-----END AGE ENCRYPTED FILE-----",
            f"openid-configuration: jwks_uri=https://auth.{pick(r, ORGS)}.io/.well-known/jwks.json, id_token_signing_alg_values_supported=[RS256]",
        ],
    )


NON_SECRETS: dict[str, NonSecret] = {
    "git-log": ns_git_log,
    "git-show": ns_git_show,
    "npm-yarn-lock": ns_package_lock,
    "poetry-pip-lock": ns_poetry_lock,
    "cargo-go-sum": ns_cargo_lock,
    "image-digest": ns_docker_digest,
    "k8s-metadata": ns_k8s_meta,
    "k8s-secret-listing": ns_k8s_secret_listing,
    "terraform-ids": ns_tf_ids,
    "terraform-plan": ns_tf_plan,
    "aws-request-ids": ns_aws_request_ids,
    "arns": ns_arns,
    "cloudwatch": ns_cloudwatch,
    "s3-etag": ns_s3_etag,
    "sentry-ids": ns_sentry,
    "otel-ids": ns_otel,
    "base64-fixture": ns_base64_fixture,
    "minified-js": ns_minified_js,
    "source-map": ns_source_map,
    "svg-font": ns_svg,
    "public-keys": ns_public_keys,
    "certificates": ns_certificates,
    "fingerprints": ns_fingerprints,
    "gpg": ns_gpg,
    "cdn-sri": ns_cdn,
    "stripe-ids": ns_stripe_ids,
    "vercel-ids": ns_vercel_ids,
    "slack-ids": ns_slack_ids,
    "password-prose": ns_password_prose,
    "token-docs": ns_token_docs,
    "secret-references": ns_secret_refs,
    "encrypted-values": ns_encrypted,
    "placeholders": ns_placeholders,
    "masked": ns_masked,
    "handler-code": ns_handler_code,
    "url-no-password": ns_url_no_password,
    "published-examples": ns_published_examples,
    "public-by-design": ns_public_by_design,
    "ids-in-logs": ns_ids,
    "checksums": ns_checksums,
    "ci-log-clean": ns_ci_log_clean,
    "jupyter-clean": ns_jupyter_clean,
    "stack-trace-clean": ns_stack_trace_clean,
    "content-addressed": ns_content_addressed,
    "config-nonsecret": ns_config_nonsecret,
    "urls-with-ids": ns_urls_with_ids,
    "chat-clean": ns_chat_clean,
    "crypto-addresses": ns_crypto,
    "webhook-signatures": ns_webhook_headers,
    "dev-default-credentials": ns_dev_defaults,
    "resource-names": ns_resource_names,
    "env-dump-clean": ns_env_dump_clean,
    "docker-inspect-clean": ns_docker_inspect_clean,
    "sql-clean": ns_sql_clean,
    "helm-clean": ns_helm_clean,
    "code-ids": ns_code_ids,
    "review-clean": ns_review_clean,
    "pr-clean": ns_pr_clean,
    "commit-clean": ns_commit_clean,
    "shell-clean": ns_shell_clean,
    "config-references": ns_properties_clean,
    "jwt-like": ns_jwt_like,
}


def non_secret_samples(r: Random) -> list[Sample]:
    return [Sample(cat, make(r), ()) for cat, make in NON_SECRETS.items() for _ in range(NON_SECRETS_PER_CATEGORY)]


# ---------------------------------------------------------------------------------------------
# Scoring


@dataclass
class Result:
    found: Counter[str] = field(default_factory=Counter)
    total: Counter[str] = field(default_factory=Counter)
    carrier_found: Counter[str] = field(default_factory=Counter)
    carrier_total: Counter[str] = field(default_factory=Counter)
    fp: Counter[str] = field(default_factory=Counter)
    ns_total: Counter[str] = field(default_factory=Counter)
    stray: int = 0
    misses: list[str] = field(default_factory=list)
    false_positives: list[str] = field(default_factory=list)
    strays: list[str] = field(default_factory=list)


def covered(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    pos = start
    for s, e in sorted(spans):
        if s <= pos < e:
            pos = e
            if pos >= end:
                return True
    return pos >= end


def clip(text: str, start: int, end: int, pad: int = 50) -> str:
    return repr(text[max(0, start - pad) : end + pad][:400])


def evaluate(samples: list[Sample], find: Callable[[str], list[tuple[str, int, int]]]) -> Result:
    res = Result()
    for sample in samples:
        findings = find(sample.text)
        spans = [(s, e) for _, s, e in findings]
        if not sample.secrets:
            res.ns_total[sample.category] += 1
            if findings:
                res.fp[sample.category] += 1
                desc = "; ".join(f"{k} {clip(sample.text, s, e, 20)}" for k, s, e in findings)
                res.false_positives.append(f"[{sample.category}] {desc}")
            continue
        for sec in sample.secrets:
            res.total[sec.kind] += 1
            res.carrier_total[sample.category] += 1
            if covered(spans, sec.start, sec.end):
                res.found[sec.kind] += 1
                res.carrier_found[sample.category] += 1
            else:
                part = [f"{k}@{s}-{e}" for k, s, e in findings if s < sec.end and e > sec.start]
                res.misses.append(
                    f"[{sec.kind} in {sample.category}] {'partial ' + ','.join(part) if part else 'not found'}: {clip(sample.text, sec.start, sec.end)}"
                )
        for k, s, e in findings:
            if not any(s < sec.end and e > sec.start for sec in sample.secrets):
                res.stray += 1
                res.strays.append(f"[{sample.category}] {k} {clip(sample.text, s, e, 20)}")
    return res


def detector() -> Callable[[str], list[tuple[str, int, int]]]:
    from neural_memory.redaction.detectors import find_secrets

    return lambda text: [(f.kind, f.start, f.end) for f in find_secrets(text)]


def report(res: Result, show: bool) -> None:
    print("recall per kind (found/total):")
    for kind in sorted(res.total):
        print(f"  {kind:28s} {res.found[kind]:3d}/{res.total[kind]:3d}  {res.found[kind] / res.total[kind]:.3f}")
    n_found, n_total = sum(res.found.values()), sum(res.total.values())
    print("\nsecrets per carrier (found/total):")
    for cat in sorted(res.carrier_total):
        print(f"  {cat:28s} {res.carrier_found[cat]:3d}/{res.carrier_total[cat]:3d}")
    print("\nnon-secret texts per category (with a finding/total):")
    for cat in sorted(res.ns_total):
        print(f"  {cat:28s} {res.fp[cat]:3d}/{res.ns_total[cat]:3d}")
    n_fp, n_ns = sum(res.fp.values()), sum(res.ns_total.values())
    print(f"\nsecrets: {n_total} of {len(res.total)} kinds; non-secret texts: {n_ns} in {len(res.ns_total)} categories")
    print(f"recall: {n_found}/{n_total} = {n_found / n_total:.3f}")
    print(f"false positives: {n_fp} non-secret texts with a finding = {1000 * n_fp / n_ns:.1f} per 1,000")
    print(f"stray findings in secret-bearing texts (touching no labelled secret): {res.stray}")
    evasions = [c for c in res.carrier_total if c.startswith("evasion-")]
    if evasions:
        e_found, e_total = sum(res.carrier_found[c] for c in evasions), sum(res.carrier_total[c] for c in evasions)
        print(f"evasions (issue 56): {e_found}/{e_total} = {e_found / e_total:.3f}")
        lookalikes = [c for c in res.ns_total if c.startswith("lookalike-")]
        l_fp, l_total = sum(res.fp[c] for c in lookalikes), sum(res.ns_total[c] for c in lookalikes)
        print(f"look-alikes (issue 56): {l_fp} of {l_total} with a finding = {1000 * l_fp / l_total:.1f} per 1,000")
    if show:
        print(f"\nmisses ({len(res.misses)}):")
        for line in res.misses:
            print("  " + line)
        print(f"\nfalse positives ({len(res.false_positives)}):")
        for line in res.false_positives:
            print("  " + line)
        print(f"\nstray findings ({len(res.strays)}):")
        for line in res.strays:
            print("  " + line)


def build(seed: int) -> list[Sample]:
    from bench.secrets_evasions import evasion_samples, lookalike_samples

    r = Random(seed)
    samples = secret_samples(r) + non_secret_samples(r)
    extra = Random(seed + 56)  # issue 56's set: its own stream, so the earlier samples stay the same
    return samples + evasion_samples(extra) + lookalike_samples(extra)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--show", action="store_true", help="print every miss, false positive and stray finding")
    args = parser.parse_args()
    samples = build(args.seed)
    print(f"bench.secrets_blind seed={args.seed}: {len(samples)} texts", file=sys.stderr)
    report(evaluate(samples, detector()), args.show)


if __name__ == "__main__":
    main()
