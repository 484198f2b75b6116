"""A labelled set for secret detection: secrets of many kinds inside the text our sources carry
(commit messages, PR bodies, chat turns, URLs, JSON, YAML, .env lines, shell, code, logs), and
non-secrets shaped like them (commit SHAs, UUIDs, digests, base64 fixtures, ``SECRET_KEY = None``,
"password reset" prose, references to secrets by name, public keys, certificates).

Generated from a seed, so the set is the same on every run and nothing secret-looking is checked
in. Every secret is random in the shape its provider issues (prefix, alphabet, length); none is
real. ``python -m bench.secrets_detection`` scores the detector on it; tests take samples.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid
from dataclasses import dataclass, field

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"


@dataclass
class Labelled:
    """A text, the secrets in it (each a substring that must not survive), and their kind."""

    text: str
    kind: str  # the secret's kind, or "none"
    secrets: list[str] = field(default_factory=list)


def _s(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _mixed(rng: random.Random, alphabet: str, n: int) -> str:
    """Random, with at least one digit and one letter (as issued tokens are)."""
    while True:
        value = _s(rng, alphabet, n)
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
            return value


def _jwt(rng: random.Random) -> str:
    def part(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    header = part({"alg": rng.choice(["HS256", "RS256"]), "typ": "JWT"})
    payload = part(
        {"sub": str(rng.randint(10**5, 10**9)), "iat": rng.randint(1_600_000_000, 1_800_000_000), "scope": "repo"}
    )
    return f"{header}.{payload}.{_s(rng, URLSAFE, 43)}"


def _pem(rng: random.Random) -> str:
    kind = rng.choice(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"])
    body = "\n".join(_s(rng, B64, 64) for _ in range(rng.randint(3, 8)))
    return f"-----BEGIN {kind}-----\n{body}\n{_s(rng, B64, 20)}==\n-----END {kind}-----"


# Each kind: how its secret is made, and how people write it down.
def _secret(rng: random.Random, kind: str) -> str:
    makers = {
        "aws-access-key-id": lambda: rng.choice(["AKIA", "ASIA"]) + _s(rng, string.ascii_uppercase + string.digits, 16),
        "aws-secret-access-key": lambda: _mixed(rng, B64, 40),
        "github-token": lambda: rng.choice(["ghp_", "gho_", "ghs_", "ghu_"]) + _mixed(rng, ALNUM, 36),
        "github-fine-grained": lambda: "github_pat_" + _mixed(rng, ALNUM, 22) + "_" + _mixed(rng, ALNUM, 59),
        "gitlab-token": lambda: "glpat-" + _mixed(rng, URLSAFE, 20),
        "slack-token": lambda: (
            rng.choice(["xoxb", "xoxp"])
            + f"-{rng.randint(10**9, 10**10)}-{rng.randint(10**12, 10**13)}-{_mixed(rng, LOWER_ALNUM, 24)}"
        ),
        "slack-webhook": lambda: (
            f"https://hooks.slack.com/services/T{_s(rng, string.ascii_uppercase + string.digits, 8)}"
            f"/B{_s(rng, string.ascii_uppercase + string.digits, 8)}/{_mixed(rng, ALNUM, 24)}"
        ),
        "stripe-key": lambda: rng.choice(["sk_live_", "rk_live_"]) + _mixed(rng, ALNUM, 24),
        "openai-key": lambda: "sk-proj-" + _mixed(rng, URLSAFE, 48),
        "anthropic-key": lambda: "sk-ant-api03-" + _mixed(rng, URLSAFE, 93) + "AA",
        "cohere-key": lambda: _mixed(rng, ALNUM, 40),
        "vercel-token": lambda: _mixed(rng, ALNUM, 24),
        "url-password": lambda: _mixed(rng, ALNUM + "!$&*-_.", rng.randint(10, 20)),
        "jwt": lambda: _jwt(rng),
        "private-key": lambda: _pem(rng),
        "password": lambda: _mixed(rng, ALNUM + "!#%^*", rng.randint(9, 18)),
        "npm-token": lambda: "npm_" + _mixed(rng, ALNUM, 36),
        "sendgrid-key": lambda: f"SG.{_mixed(rng, URLSAFE, 22)}.{_mixed(rng, URLSAFE, 43)}",
        "google-api-key": lambda: "AIza" + _mixed(rng, URLSAFE, 35),
    }
    return makers[kind]()


def _in_context(rng: random.Random, kind: str, secret: str) -> str:
    """The secret as people paste it: a commit message, PR body, chat turn, config line, command."""
    host = rng.choice(["db.internal", "prod-db.example.com", "10.0.3.17", "redis.cache.local"])
    user = rng.choice(["admin", "app", "deploy", "svc_api", "postgres"])
    env_name = {
        "aws-access-key-id": "AWS_ACCESS_KEY_ID",
        "aws-secret-access-key": "AWS_SECRET_ACCESS_KEY",
        "github-token": "GITHUB_TOKEN",
        "github-fine-grained": "GH_TOKEN",
        "gitlab-token": "GITLAB_TOKEN",
        "slack-token": "SLACK_BOT_TOKEN",
        "slack-webhook": "SLACK_WEBHOOK_URL",
        "stripe-key": "STRIPE_SECRET_KEY",
        "openai-key": "OPENAI_API_KEY",
        "anthropic-key": "ANTHROPIC_API_KEY",
        "cohere-key": "COHERE_API_KEY",
        "vercel-token": "VERCEL_TOKEN",
        "jwt": "SESSION_TOKEN",
        "password": "DB_PASSWORD",
        "npm-token": "NPM_TOKEN",
        "sendgrid-key": "SENDGRID_API_KEY",
        "google-api-key": "GOOGLE_API_KEY",
    }.get(kind, "SECRET")
    if kind == "url-password":
        scheme = rng.choice(["postgres", "postgresql", "mysql", "redis", "amqp", "https", "mongodb+srv"])
        url = f"{scheme}://{user}:{secret}@{host}:{rng.choice([5432, 3306, 6379, 5672, 443])}/app"
        forms = [
            f"Fix connection string: DATABASE_URL={url}",
            f"Merged PR #{rng.randint(10, 9999)}: point staging at {url}\n\nWe moved the replica.",
            f"can you try `psql {url}` and tell me if it connects?",
            f'{{"database": {{"url": "{url}", "pool": 5}}}}',
            f"database:\n  url: {url}\n  pool: 10",
            f"export REDIS_URL={url}",
            f"Deploy failed: could not connect to {url} (timeout after 30s)",
        ]
        return rng.choice(forms)
    if kind == "private-key":
        forms = [
            f"here's the deploy key, paste it in the runner:\n\n{secret}\n\nthen restart",
            f"Add deploy key for the mirror job\n\n```\n{secret}\n```",
            f'"private_key": "{secret.replace(chr(10), chr(92) + "n")}"',
            f"key: |\n  {secret.replace(chr(10), chr(10) + '  ')}",
        ]
        return rng.choice(forms)
    if kind == "slack-webhook":
        forms = [
            f"Alerts now post to {secret}",
            f"SLACK_WEBHOOK_URL={secret}",
            f'curl -X POST -d \'{{"text": "deploy done"}}\' {secret}',
            f'webhook: "{secret}"',
        ]
        return rng.choice(forms)
    if kind == "jwt":
        forms = [
            f"curl -H 'Authorization: Bearer {secret}' https://api.example.com/v1/me",
            f"the session cookie was {secret} when it failed",
            f'{{"access_token": "{secret}", "expires_in": 3600}}',
            f"Authorization: Bearer {secret}",
            f"token={secret}",
        ]
        return rng.choice(forms)
    if kind == "password":
        forms = [
            f"{env_name}={secret}",
            f"password: {secret}",
            f'db_password = "{secret}"',
            f'{{"username": "{user}", "password": "{secret}"}}',
            f"  password: '{secret}'",
            f"mysql -u {user} --password={secret} -h {host}",
            f"export PGPASSWORD={secret}",
            f"the admin password is now: password={secret} (rotate after the demo)",
        ]
        return rng.choice(forms)
    if kind in ("cohere-key", "vercel-token"):
        forms = [
            f"{env_name}={secret}",
            f"export {env_name}={secret}",
            f'{env_name.lower()} = "{secret}"',
            f'"{env_name.lower()}": "{secret}"',
            f"{env_name.lower()}: {secret}",
        ]
        if kind == "vercel-token":
            forms += [f"vercel deploy --prod --token {secret}", f"vercel --token={secret} env pull"]
        return rng.choice(forms)
    commit = (
        rng.choice(["Fix", "Update", "Add", "Revert"]) + " " + rng.choice(["CI config", "deploy script", "settings"])
    )
    forms = [
        f"{commit}\n\nUse {env_name}={secret} for the nightly job.",
        f"{env_name}={secret}",
        f"export {env_name}={secret}",
        f'{env_name.lower()}: "{secret}"',
        f"{env_name.lower()}: {secret}",
        f'{{"{env_name.lower()}": "{secret}", "region": "us-east-1"}}',
        f"I pasted my key by mistake: {secret} — please rotate it",
        f'Merged PR #{rng.randint(10, 9999)}: configure the client\n\nclient = Client(api_key="{secret}")',
        f"ERROR 401 from upstream with key {secret}: invalid credentials",
        f"env:\n  {env_name}: {secret}\n  REGION: eu-west-1",
    ]
    if kind == "aws-secret-access-key":
        forms = [
            f"aws_secret_access_key={secret}",
            f"aws_secret_access_key = {secret}",
            f"AWS_SECRET_ACCESS_KEY={secret}",
            f'"aws_secret_access_key": "{secret}"',
            f"[default]\naws_access_key_id = AKIA{_s(rng, string.ascii_uppercase + string.digits, 16)}\n"
            f"aws_secret_access_key = {secret}",
        ]
    return rng.choice(forms)


SECRET_KINDS = (
    "aws-access-key-id",
    "aws-secret-access-key",
    "github-token",
    "github-fine-grained",
    "gitlab-token",
    "slack-token",
    "slack-webhook",
    "stripe-key",
    "openai-key",
    "anthropic-key",
    "cohere-key",
    "vercel-token",
    "url-password",
    "jwt",
    "private-key",
    "password",
    "npm-token",
    "sendgrid-key",
    "google-api-key",
)


def secrets(seed: int = 44, per_kind: int = 20) -> list[Labelled]:
    """``per_kind`` secrets of every kind of ``SECRET_KINDS``, each in a text of its own."""
    rng = random.Random(seed)
    out = []
    for kind in SECRET_KINDS:
        for _ in range(per_kind):
            secret = _secret(rng, kind)
            out.append(Labelled(_in_context(rng, kind, secret), kind, [secret]))
    return out


def _non_secret(rng: random.Random) -> str:  # noqa: C901, PLR0912 (one table of shapes)
    sha = _s(rng, HEX, 40)
    digest = _s(rng, HEX, 64)
    an_id = str(uuid.UUID(int=rng.getrandbits(128)))
    blob = base64.b64encode(rng.randbytes(rng.randint(24, 90))).decode()
    words = rng.choice(["login", "signup", "settings", "billing", "the CLI", "SSO"])
    n = rng.randint(0, 39)
    if n == 0:
        return f"Merge pull request #{rng.randint(1, 9999)} from team/{words.replace(' ', '-')}\n\ncommit {sha}"
    if n == 1:
        return f'Revert "{words} change"\n\nThis reverts commit {sha}.'
    if n == 2:
        return f"request_id={an_id} status=200 duration_ms={rng.randint(1, 900)}"
    if n == 3:
        return f"image: ghcr.io/acme/api@sha256:{digest}"
    if n == 4:
        return f'FIXTURE = "{blob}"  # a small PNG for the upload test'
    if n == 5:
        return rng.choice(["SECRET_KEY = None", "SECRET_KEY: str | None = None", "api_key = None", "password = ''"])
    if n == 6:
        return f"Fix password reset for {words}: the reset link expired after 5 minutes instead of 24 hours"
    if n == 7:
        return rng.choice(
            ["token_expiry: 3600", "password_min_length = 12", "secret_rotation_days: 90", "token_ttl=900"]
        )
    if n == 8:
        return rng.choice(
            [
                "api_key = os.environ['COHERE_API_KEY']",
                "token = get_token(session)",
                "password = settings.DATABASE_PASSWORD",
                "secret = request.headers['X-Hub-Signature-256']",
                "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
                "api_key: ${COHERE_API_KEY}",
                'password = os.getenv("PGPASSWORD")',
                "token=$(gh auth token)",
            ]
        )
    if n == 9:
        return rng.choice(["password: str", "token: Optional[str] = None", "api_key: SecretStr", "secret: bytes"])
    if n == 10:
        return f'curl -H "Authorization: Bearer $TOKEN" https://api.example.com/v1/items/{an_id}'
    if n == 11:
        return f"DATABASE_URL=postgres://{rng.choice(['app', 'user'])}:${{DB_PASSWORD}}@db:5432/app"
    if n == 12:
        return (
            f"see https://github.com/acme/api/commit/{sha} and https://github.com/acme/api/pull/{rng.randint(1, 999)}"
        )
    if n == 13:
        return f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{_s(rng, B64, 43)} deploy@ci"
    if n == 14:
        body = "\n".join(_s(rng, B64, 64) for _ in range(4))
        return f"-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----"
    if n == 15:
        return f'"integrity": "sha512-{base64.b64encode(rng.randbytes(64)).decode()}"'
    if n == 16:
        return f'etag: "{_s(rng, HEX, 32)}"  last-modified: Tue, 04 Nov 2025 10:00:00 GMT'
    if n == 17:
        return f"Set a strong password and keep your secret key out of the repo; tokens expire after {n} days."
    if n == 18:
        return f"The tokenizer splits {words} into word pieces; the keyboard shortcut is Ctrl-K."
    if n == 19:
        account = rng.randint(10**11, 10**12)
        return f"arn:aws:secretsmanager:us-east-1:{account}:secret:prod/db/password-{_s(rng, ALNUM, 6)}"
    if n == 20:
        return f'secret_name = "prod/{words.replace(" ", "-")}/api-key"'
    if n == 21:
        return rng.choice(['TOKEN_URL = "https://oauth2.googleapis.com/token"', 'api_key_header = "X-API-Key"'])
    if n == 22:
        return f"cd $(pwd)/build && ls -la {sha[:7]}"
    if n == 23:
        return f"content_hash: {digest}"
    if n == 24:
        return f"data:image/png;base64,{blob}"
    if n == 25:
        return f"Bump version to {rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 30)} ({sha[:10]})"
    if n == 26:
        return f"md5sum: {_s(rng, HEX, 32)}  release.tar.gz"
    if n == 27:
        return f'"id": "{an_id}", "parent_id": "{an_id}", "trace": "{_s(rng, HEX, 32)}"'
    if n == 28:
        return f"https://user@{rng.choice(['github.com', 'gitlab.com'])}/acme/{words.replace(' ', '-')}.git"
    if n == 29:
        return "postgres://user:password@localhost:5432/dev (the README's example connection string)"
    if n == 30:
        ulid = _s(rng, "0123456789ABCDEFGHJKMNPQRSTVWXYZ", 26)
        return f"order {ulid} shipped; webhook delivery {an_id}"
    if n == 31:
        return f"pip install --require-hashes: --hash=sha256:{digest}"
    if n == 32:
        return f"Authorization: Bearer <token>  # replace <token> with {words} token"
    if n == 33:
        return f"{{'password_hash': '$2b$12${_s(rng, B64, 53)}', 'user': 'ann'}}"
    if n == 34:
        return f"git tree {sha} parent {_s(rng, HEX, 40)} author Ann <ann@example.com>"
    if n == 35:
        return f"the test uses {an_id} as the client id and {_s(rng, HEX, 12)} as the tenant"
    if n == 36:
        return f"color: #{_s(rng, HEX, 6)}; background: url(data:font/woff2;base64,{blob})"
    if n == 37:
        return f"{words}: the session token is refreshed every {rng.randint(5, 60)} minutes by the middleware"
    if n == 38:
        return f"keyId: {_s(rng, HEX, 16)}, fingerprint: {':'.join(_s(rng, HEX, 2) for _ in range(16))}"
    return f"cache key {hashlib.sha1(blob.encode()).hexdigest()} hit ratio 0.{rng.randint(10, 99)}"


def non_secrets(seed: int = 4400, count: int = 3200) -> list[Labelled]:
    """``count`` texts holding no secret, shaped like the ones that do."""
    rng = random.Random(seed)
    return [Labelled(_non_secret(rng), "none") for _ in range(count)]
