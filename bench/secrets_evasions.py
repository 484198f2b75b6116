"""Issue 56's evasions, written before the detector was tuned for them, and their look-alikes.

    python -m bench.secrets_blind [--show]        (scores them with the blind set: evasion-* and lookalike-*)

Each evasion is a secret put the way an attacker (or an accident) hides it from a detector that
wants a word boundary, a known name, plain text or a whole PEM block:

- **glued**: a provider's token glued to a letter, a digit or an underscore before (or after) it,
  in a file path, a branch name, an identifier, an id (``deploy/OPENAI_key_is_sk-proj-….txt``,
  ``x`` + ``AKIA…``);
- **unknown name**: a random value of 32-64 characters (base62 or base64, never hex: a hex value
  under an unknown name is a commit or a digest as often as a key) assigned to a name that is not a
  secret's (``BILLING_CRED=…``) in ``.env``, YAML, JSON, TOML, shell and code;
- **url-encoded**: a URL, an assignment or a token percent-encoded once or twice
  (``postgres%3A%2F%2Fuser%3Apw%40…``, ``aws_secret_access_key%20%3D%20…``);
- **upper-case**: an assignment to a secret's name whose value is upper case and digits (or upper
  case only), which reads like a constant's name (``MY_SERVICE_API_KEY=<40 upper random>``);
- **split PEM**: a private key whose block is broken across lines differently: the header split,
  each line commented (``#``, ``//``) or quoted (``>``), or a string concatenated over lines.

The look-alikes are what an engineering history holds in the same shapes and is not a secret:
commit SHAs (glued, assigned), UUIDs and ULIDs and KSUIDs assigned to names, integrity hashes,
docker digests, base64 images and fixtures assigned to names, percent-encoded URLs and queries
without a credential, upper-case constants, public keys and certificates commented or quoted,
identifiers that hold a provider's prefix inside a word.
"""

# ruff: noqa: E501 -- templates of whole lines
from __future__ import annotations

import base64
import hashlib
from typing import TYPE_CHECKING
from urllib.parse import quote

from bench.secrets_blind import (
    B62,
    B64URL,
    DIGITS,
    LOWER,
    UPPER,
    Sample,
    certificate,
    checksummed,
    hexs,
    mark,
    pem_private,
    pick,
    public_pem,
    rs,
    uid,
    unmark,
)

if TYPE_CHECKING:
    from random import Random

EVASIONS_PER_SHAPE = 60
LOOKALIKES_PER_SHAPE = 150


def _token(r: Random) -> tuple[str, str]:
    """One of the eight kinds the issue names, in its provider's shape."""
    which = r.randrange(8)
    if which == 0:
        return "github-token", checksummed(r, "ghp_", 30)
    if which == 1:
        return "github-token", "github_pat_" + rs(r, B62, 22) + "_" + rs(r, B62, 59)
    if which == 2:
        return "slack-token", f"xoxb-{rs(r, DIGITS, 12)}-{rs(r, DIGITS, 13)}-{rs(r, B62, 24)}"
    if which == 3:
        return "stripe-key", "sk_live_" + pick(r, ["51", "4e"]) + rs(r, B62, 97)
    if which == 4:
        return "openai-key", "sk-proj-" + rs(r, B64URL, 74) + "T3BlbkFJ" + rs(r, B64URL, 74)
    if which == 5:
        return "anthropic-key", "sk-ant-api03-" + rs(r, B64URL, 93) + "AA"
    if which == 6:
        return "aws-access-key-id", "AKIA" + rs(r, UPPER + "234567", 16)
    return "gitlab-token", "glpat-" + rs(r, B64URL, 20)


def _random_value(r: Random) -> str:
    n = r.choice([32, 40, 40, 48, 64])
    return rs(r, B62, n) if r.random() < 0.6 else base64.b64encode(r.randbytes(n * 3 // 4)).decode()


_UNKNOWN_NAMES = [
    "BILLING_CRED", "LEDGER_SIGNER", "PAYOUT_AUTHZ", "MAILER_CODE", "SYNC_HANDSHAKE", "ROUTER_SEAL",
    "VENDOR_PIN", "GATEWAY_MAC", "PARTNER_BLOB", "UPLOADER_CRED", "backendCred", "relay_seal", "hmacMaterial",
    "webhookSigning", "INTERNAL_AUTHZ", "cdn_signer",
]  # fmt: skip


def _unknown_name(r: Random) -> str:
    name = pick(r, _UNKNOWN_NAMES)
    value = mark("unknown-name", _random_value(r))
    shape = r.randrange(9)
    if shape == 0:
        return f"# .env for {pick(r, ['staging', 'prod', 'ci'])}\nNODE_ENV=production\n{name}={value}\nPORT=8080"
    if shape == 1:
        return f"export {name}={value}\n./bin/sync --region eu-west-1"
    if shape == 2:
        return f"env:\n  LOG_LEVEL: info\n  {name}: {value}\n"
    if shape == 3:
        return f'{{"service": "payouts", "{name}": "{value}", "retries": 3}}'
    if shape == 4:
        return f'[billing]\nendpoint = "https://billing.internal"\n{name.lower()} = "{value}"\n'
    if shape == 5:
        return f'const {name} = "{value};"'.replace(';"', '";')
    if shape == 6:
        return f"    {name.lower()} = '{value}'  # TODO move to the vault\n"
    if shape == 7:
        return f"docker run -e {name}={value} ghcr.io/acme/payouts:1.4.2"
    return f"services:\n  payouts:\n    environment:\n      - {name}={value}\n"


def _glued(r: Random) -> str:
    kind, token = _token(r)
    value = mark(kind, token)
    shape = r.randrange(9)
    if shape == 0:
        return f"git add deploy/OPENAI_key_is_{value}.txt"
    if shape == 1:
        return f"x{value}"
    if shape == 2:
        return f"branch feature/leak_{value} pushed"
    if shape == 3:
        return f"the id is obs{value}"
    if shape == 4:
        return f"src/config/{pick(r, ['prod', 'tmp', 'old'])}_{value}_backup.json"
    if shape == 5:
        return f"session sess_{value}"
    if shape == 6:
        return f"actor bot-{pick(r, ['ci', 'deploy'])}:{value}x"
    if shape == 7:
        return f"MY_KEY{value}"
    return f"{rs(r, DIGITS, 3)}{value}_old"


def _url_encoded(r: Random) -> str:
    shape = r.randrange(6)
    if shape == 0:
        pw = rs(r, B62, r.randint(12, 24))
        url = f"postgres://svc_{pick(r, ['billing', 'orders'])}:{pw}@db.internal:5432/app"
        return f"GET /v1/experts?q={quote(url, safe='')}".replace(pw, mark("url-password", pw))
    if shape == 1:
        value = rs(r, B62 + "/+", 40)
        return "aws_secret_access_key%20%3D%20" + mark("aws-secret-access-key", quote(value, safe=""))
    if shape == 2:
        kind, token = _token(r)
        return "/v1/facets?q=" + quote("token: ", safe="") + mark(kind, quote(token, safe=""))
    if shape == 3:
        pw = rs(r, B62, 16)
        return "redirect=" + quote(f"https://deploy:{pw}@ci.internal/hook", safe="").replace(
            pw, mark("url-password", pw)
        )
    if shape == 4:  # encoded twice
        value = rs(r, B62, 40)
        return "q=" + quote(quote("api_key=", safe=""), safe="") + mark("credential", value)
    kind, token = _token(r)
    return "next=%2Fsettings%3Ftoken%3D" + mark(kind, quote(token, safe=""))


_UPPER_NAMES = [
    "MY_SERVICE_API_KEY", "PAYMENTS_TOKEN", "ORDERS_DB_PASSWORD", "LEGACY_SECRET", "PARTNER_API_KEY",
    "SFTP_PASSWORD", "SIGNING_KEY", "ADMIN_TOKEN",
]  # fmt: skip


def _upper(r: Random) -> str:
    name = pick(r, _UPPER_NAMES)
    alphabet = UPPER + DIGITS if r.random() < 0.7 else UPPER
    value = mark("upper-case", rs(r, alphabet, r.choice([24, 32, 40, 40])))
    shape = r.randrange(5)
    if shape == 0:
        return f"{name}={value}"
    if shape == 1:
        return f"export {name}={value}"
    if shape == 2:
        return f"  {name.lower()}: {value}"
    if shape == 3:
        return f"run: ./deploy.sh --env prod {name}={value}"
    return f"settings.{name} = {value}"


def _split_pem(r: Random) -> str:
    key = pem_private(r)
    lines = key.split("\n")
    shape = r.randrange(5)
    if shape == 0:  # the header broken across two lines
        header = lines[0]
        cut = header.index(" ", 11)
        text = header[:cut] + "\n" + header[cut + 1 :] + "\n" + "\n".join(lines[1:])
    elif shape == 1:
        text = "\n".join("# " + line for line in lines)
    elif shape == 2:
        text = "\n".join("> " + line for line in lines)
    elif shape == 3:  # a string concatenated over lines: the label from BEGIN to END, not the first quote
        text = "\n".join(f'    "{line}\\n" +' for line in lines).rstrip(" +")
        start, end = text.index("-----BEGIN"), text.rindex("-----") + 5
        return f"key:\n{text[:start]}{mark('private-key', text[start:end])}{text[end:]}\n"
    else:
        text = "\n".join("// " + line for line in lines)
    if shape in (1, 2, 4):
        lead = {1: "# ", 2: "> ", 4: "// "}[shape]
        body = text[len(lead) :]
        return f"{pick(r, ['pasted the key', 'deploy key below', 'see'])}:\n{lead}{mark('private-key', body)}\n"
    return f"key:\n{mark('private-key', text)}\n"


EVASIONS = {
    "evasion-glued": _glued,
    "evasion-unknown-name": _unknown_name,
    "evasion-url-encoded": _url_encoded,
    "evasion-upper-case": _upper,
    "evasion-split-pem": _split_pem,
}


def evasion_samples(r: Random) -> list[Sample]:
    return [
        Sample(category, *unmark(make(r))) for category, make in EVASIONS.items() for _ in range(EVASIONS_PER_SHAPE)
    ]


# ---------------------------------------------------------------------------------------------
# Look-alikes


def _sha(r: Random) -> str:
    return hexs(r, 40)


def la_commit(r: Random) -> str:
    sha = _sha(r)
    return pick(
        r,
        [
            f"COMMIT_SHA={sha}",
            f"GIT_COMMIT: {sha}",
            f'"revision": "{sha}"',
            f"git checkout x{sha}",
            f"branch renovate/bump_{sha}",
            f"export SOURCE_VERSION={sha}",
            f"build_{sha}.log",
            f"rev = '{sha}'",
            f"https://github.com/acme/api/commit/{sha}",
            f"BASE_SHA={sha[:7]}..{sha}",
        ],
    )


def la_uuid(r: Random) -> str:
    u = uid(r)
    ulid = rs(r, "0123456789ABCDEFGHJKMNPQRSTVWXYZ", 26)
    ksuid = rs(r, B62, 27)
    return pick(
        r,
        [
            f"REQUEST_ID={u}",
            f"tenantId: {u}",
            f"CORRELATION_ID={u.upper()}",
            f"TRACE_ID={ulid}",
            f"event_id = '{ksuid}'",
            f"x{u.replace('-', '')}",
            f'{{"jobId": "{ulid}", "status": "done"}}',
            f"DEPLOYMENT_ID={ksuid}",
            f"orderRef: ORD{ulid}",
            f"idempotency_key={u}",
        ],
    )


def la_integrity(r: Random) -> str:
    h = base64.b64encode(r.randbytes(64)).decode()
    h3 = base64.b64encode(r.randbytes(48)).decode()
    return pick(
        r,
        [
            f"integrity: sha512-{h}",
            f'"integrity": "sha384-{h3}"',
            f'<script src="/app.js" integrity="sha384-{h3}" crossorigin="anonymous"></script>',
            f'  resolved "https://registry.yarnpkg.com/left-pad/-/left-pad-1.3.0.tgz#{_sha(r)}"\n  integrity sha512-{h}',
            f"SRI_HASH=sha384-{h3}",
            f"github.com/pkg/errors v0.9.1 h1:{base64.b64encode(r.randbytes(32)).decode()}",
            f"CHECKSUM={hexs(r, 64)}",
            f'checksum = "{hexs(r, 64)}"',
            f'etag: "{hexs(r, 32)}"',
        ],
    )


def la_digest(r: Random) -> str:
    d = hexs(r, 64)
    return pick(
        r,
        [
            f"IMAGE_DIGEST=sha256:{d}",
            f"image: ghcr.io/acme/api@sha256:{d}",
            f"FROM python:3.11-slim@sha256:{d}",
            f'"Id": "sha256:{d}"',
            f"digest: sha256:{d} size: 1573",
            f"BASE_IMAGE_DIGEST={d}",
            f"layer_{d}.tar.gz",
            f"x{d[:40]}",
        ],
    )


def la_base64_image(r: Random) -> str:
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + r.randbytes(r.randint(60, 300))).decode()
    jpeg = base64.b64encode(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + r.randbytes(r.randint(60, 300))).decode()
    gif = base64.b64encode(b"GIF89a" + r.randbytes(r.randint(40, 200))).decode()
    return pick(
        r,
        [
            f"LOGO_PNG={png}",
            f"![logo](data:image/png;base64,{png})",
            f'icon = "data:image/jpeg;base64,{jpeg}"',
            f'"thumbnail": "{jpeg}"',
            f"background: url(data:image/gif;base64,{gif});",
            f"avatar_b64: {png}",
            f'const SPINNER = "{gif}";',
        ],
    )


def la_base64_text(r: Random) -> str:
    words = " ".join(
        pick(r, ["hello", "world", "fixture", "payload", "order", "created", "user", "event"])
        for _ in range(r.randint(5, 12))
    )
    encoded = base64.b64encode(words.encode()).decode()
    return pick(r, [f"FIXTURE_BODY={encoded}", f'sample_payload = "{encoded}"', f"data:\n  config.txt: {encoded}"])


def la_url_encoded(r: Random) -> str:
    u = uid(r)
    return pick(
        r,
        [
            f"redirect_uri=https%3A%2F%2Fapp.example.com%2Fcallback%3Fstate%3D{u}",
            "GET /v1/experts?q=how%20to%20rotate%20the%20api%20key",
            "GET /v1/search?q=postgres%3A%2F%2Fapp%40db.internal%3A5432%2Forders",
            "password%3D%24%7BDB_PASSWORD%7D",
            f"next=%2Frepos%2Facme%2Fapi%2Fcommit%2F{_sha(r)}",
            "q=token%20expiry%20and%20refresh%20flow",
            f"utm_source=newsletter&utm_campaign=spring%20launch&ref={rs(r, LOWER, 8)}",
            "GET /v1/facets?q=deploy%20creds%20for%20staging",
            f"callback=https%3A%2F%2Fhooks.example.com%2Fci%2F{hexs(r, 12)}",
            "filter=aws_secret_access_key%20%3D%20%24%7BAWS_SECRET%7D",
        ],
    )


def la_upper_constants(r: Random) -> str:
    return pick(
        r,
        [
            "LOG_LEVEL=DEBUG",
            "DEFAULT_REGION=US_EAST_1",
            "MODE=PRODUCTION_READONLY",
            "FEATURE_FLAGS=ENABLE_NEW_CHECKOUT_FLOW_V2",
            "HTTP_STATUS_UNAUTHORIZED=401",
            "MY_SERVICE_API_KEY=REPLACE_ME_WITH_YOUR_KEY",
            "API_KEY_HEADER=X_API_KEY",
            "SECRET_BACKEND=AWS_SECRETS_MANAGER",
            "TOKEN_TYPE=BEARER",
            f"PASSWORD_POLICY=MIN_{r.randint(8, 16)}_CHARS_MIXED_CASE",
            "AUTH_MODE=OIDC_PKCE",
            f"ALGOLIA_APP_ID={rs(r, UPPER + DIGITS, 10)}",
            f"TOKEN_ISSUER=ACME_IDP_{rs(r, DIGITS, 4)}",
            "ADMIN_TOKEN=${ADMIN_TOKEN}",
            "SIGNING_KEY=SIGNING_KEY_FROM_KMS",
        ],
    )


def la_public_pem(r: Random) -> str:
    block = public_pem(r) if r.random() < 0.5 else certificate(r)
    lead = pick(r, ["# ", "> ", "// "])
    return "\n".join(lead + line for line in block.split("\n"))


def la_words(r: Random) -> str:
    return pick(
        r,
        [
            "flask_live_reload_enabledByDefault: true",
            "def ask_ant_colony_optimizer(graph): ...",
            "risk-proj-overview-dashboard.tsx",
            "tasks/mask_live_previewThumbnailGenerator.py",
            "The ghp_ prefix marks a classic personal access token; github_pat_ a fine-grained one.",
            "COUNTRIES=SLOVAKIA,SLOVENIA,AUSTRIA",
            "disk-proj-quota-exceeded alarm fired",
            "class TestAKIAPrefixParser(unittest.TestCase):",
            f"tmp_{hashlib.sha1(r.randbytes(8)).hexdigest()}",
            f"cache-key: node-modules-{hexs(r, 64)}",
            f"sessionId: {uid(r)}",
            f"actorName: {pick(r, ['dependabot[bot]', 'renovate-bot', 'alice.wong', 'ci-runner-07'])}",
        ],
    )


def la_ids_assigned(r: Random) -> str:
    return pick(
        r,
        [
            f"GOOGLE_CLIENT_ID={rs(r, DIGITS, 12)}-{rs(r, LOWER + DIGITS, 32)}.apps.googleusercontent.com",
            f"STRIPE_PUBLISHABLE_KEY=pk_live_{rs(r, B62, 99)}",
            f"SENTRY_DSN=https://{hexs(r, 32)}@o{rs(r, DIGITS, 6)}.ingest.sentry.io/{rs(r, DIGITS, 7)}",
            f"AWS_ACCOUNT_ID={rs(r, DIGITS, 12)}",
            f"CLOUDFRONT_DISTRIBUTION=E{rs(r, UPPER + DIGITS, 13)}",
            f"SLACK_CHANNEL_ID=C{rs(r, UPPER + DIGITS, 10)}",
            f"VERCEL_PROJECT_ID=prj_{rs(r, B62, 28)}",
            f"KMS_KEY_ARN=arn:aws:kms:us-east-1:{rs(r, DIGITS, 12)}:key/{uid(r)}",
            f"NPM_CONFIG_CACHE=/home/runner/.npm/_cacache/{hexs(r, 2)}",
            f"build_hash: {hexs(r, 20)}",
        ],
    )


LOOKALIKES = {
    "lookalike-commit-sha": la_commit,
    "lookalike-uuid": la_uuid,
    "lookalike-integrity": la_integrity,
    "lookalike-docker-digest": la_digest,
    "lookalike-base64-image": la_base64_image,
    "lookalike-base64-text": la_base64_text,
    "lookalike-url-encoded": la_url_encoded,
    "lookalike-upper-constants": la_upper_constants,
    "lookalike-public-pem": la_public_pem,
    "lookalike-words": la_words,
    "lookalike-ids-assigned": la_ids_assigned,
}


def lookalike_samples(r: Random) -> list[Sample]:
    return [Sample(category, make(r), ()) for category, make in LOOKALIKES.items() for _ in range(LOOKALIKES_PER_SHAPE)]
