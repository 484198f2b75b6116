"""The table of models `neural-memory models pull` fetches: every file pinned, each embedding model
its own vector space, and a pulled model chosen by the same setting as a bundled one."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from neural_memory.errors import ConfigurationError
from neural_memory.providers.embeddings import build_embedder
from neural_memory.providers.embeddings.local_models import MODELS, model_spec
from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder
from neural_memory.providers.hub_models import DEFAULT_RERANKER, HUB_MODELS, hub_model, pulled_folder
from neural_memory.settings import Settings

if TYPE_CHECKING:
    from pathlib import Path


def test_every_pullable_file_is_pinned_at_a_commit() -> None:
    assert {"bge-small-en-v1.5", "e5-small-v2", "gte-small", "ms-marco-minilm-l6-v2"} <= set(HUB_MODELS)
    for name, model in HUB_MODELS.items():
        assert model.name == name and model.licence and model.source
        assert re.fullmatch(r"[0-9a-f]{40}", model.revision), name  # a commit, not a branch
        for file in model.files:
            assert re.fullmatch(r"[0-9a-f]{64}", file.sha256) and file.size > 0, (name, file.path)
        url = model.url("https://huggingface.co/", model.model)
        assert url == f"https://huggingface.co/{model.repo}/resolve/{model.revision}/{model.model.path}"


def test_each_pullable_embedding_model_is_a_vector_space_of_its_own() -> None:
    embedding = [m for m in HUB_MODELS.values() if m.role == "embedding"]
    ids = [m.model_id for m in embedding] + [spec.model_id for spec in MODELS.values()]
    assert all(ids) and len(set(ids)) == len(ids)
    assert {m.dimension for m in embedding} == {384}
    assert not set(HUB_MODELS) & set(MODELS)  # one name, one model
    assert hub_model(DEFAULT_RERANKER, role="rerank").role == "rerank"


def test_a_pulled_model_is_chosen_by_nm_local_model_and_is_looked_for_in_the_data_folder(tmp_path: Path) -> None:
    embedder = build_embedder(Settings(data_dir=tmp_path, local_model="e5-small-v2"))
    assert isinstance(embedder, OnnxLocalEmbedder)
    assert (embedder.model_id, embedder.dimension) == ("e5-small-v2-onnx-int8", 384)
    assert embedder.spec.query_prefix == "query: " and embedder.spec.document_prefix == "passage: "
    # its file is looked for when it loads, and its absence names the command that pulls it
    with pytest.raises(ConfigurationError, match=r"neural-memory models pull e5-small-v2 --data-dir"):
        embedder.spec.model_file()
    with pytest.raises(ConfigurationError, match="is not pulled"):
        pulled_folder(tmp_path, HUB_MODELS["gte-small"])


def test_names_that_are_not_models_are_refused_with_the_choices() -> None:
    with pytest.raises(ConfigurationError, match=r"bundled\) or \['bge-small-en-v1.5'"):
        model_spec("no-such-model")
    with pytest.raises(ConfigurationError, match="ms-marco-minilm-l6-v2"):
        hub_model("bge-small-en-v1.5", role="rerank")  # an embedding model cannot rerank
    with pytest.raises(ConfigurationError):
        model_spec("ms-marco-minilm-l6-v2")  # nor a cross-encoder embed
