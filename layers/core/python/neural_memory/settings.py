"""Configuration from the environment (`NM_` prefix), validated once and cached.

Logic never reads ``os.environ``: it receives a ``Settings`` (or asks ``get_settings()``).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from neural_memory.ingest.tiers import DEFAULT_POLICY
from neural_memory.models import Tier  # noqa: TC001 - pydantic needs it at runtime

StoreName = Literal["sqlite", "opensearch"]
EmbedderName = Literal["onnx", "cohere", "none"]


class _Base(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="NM_", extra="ignore", frozen=True)


class StoreSettings(_Base):
    """Where observations live."""

    store: StoreName = "sqlite"
    data_dir: Path = Path(".neural-memory")
    opensearch_url: str | None = None


class ProviderSettings(_Base):
    """Which embedder (and later reranker and gate) the service uses, and their credentials."""

    embedder: EmbedderName = "onnx"
    cohere_api_key: SecretStr | None = None
    cohere_embed_model: str = "embed-english-v3.0"
    cohere_timeout_s: float = Field(default=10.0, gt=0)
    anthropic_api_key: SecretStr | None = None


class SearchSettings(_Base):
    """Knobs of the search pipeline."""

    overfetch_factor: int = Field(default=4, ge=1, le=20)
    rrf_k: int = Field(default=60, ge=1)
    snippet_chars: int = Field(default=280, ge=40, le=4000)


class IngestSettings(_Base):
    """Limits of the ingestion paths."""

    max_body_bytes: int = Field(default=1_048_576, ge=1024)
    collaborative_ttl_days: float = Field(default=7.0, gt=0)
    tier_policy: dict[str, Tier] = Field(default_factory=lambda: dict(DEFAULT_POLICY))


class Settings(StoreSettings, ProviderSettings, SearchSettings, IngestSettings):
    """Everything one process needs; each function reads the same variables."""

    @property
    def sqlite_path(self) -> Path:
        """The embedded store's database file."""
        return self.data_dir / "neural-memory.sqlite3"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read from the environment once."""
    return Settings()
