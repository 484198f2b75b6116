"""The patterns of secrets: Yelp's ``detect-secrets`` provider and keyword patterns (a maintained
library made for this), and ours for what it lacks in the shapes our sources carry them.

Ours: newer provider prefixes (GitHub fine-grained, Anthropic, OpenAI project and service keys,
Slack app tokens, Google API keys and OAuth client secrets, Stripe webhook secrets, Hugging Face,
Shopify, DigitalOcean, Databricks, Postman, Linear, AWS session tokens); the patterns that find a
secret by its name, context or syntax are ``contextual_patterns.CONTEXTUAL``.

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
