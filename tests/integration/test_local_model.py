"""The real local model: verified, loaded from package files, and semantically sensible."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest
from neural_memory.errors import ConfigurationError
from neural_memory.providers.embeddings.local_models import (
    DEFAULT_MODEL,
    DIMENSION,
    MAX_TOKENS,
    MODEL_SHA256,
    MODELS,
    default_model_path,
    default_tokenizer_path,
)
from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder, sha256_of

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_model_files_ship_in_packages_and_match_the_pinned_hash() -> None:
    assert default_tokenizer_path().is_file()
    assert sha256_of(default_model_path()) == MODEL_SHA256


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_installed_model_of_the_table_matches_its_pinned_hash(name: str) -> None:
    # The default's package is a dependency; the other candidates are checked where installed
    spec = MODELS[name]
    try:
        path = spec.model_file()
    except ConfigurationError:
        assert name != DEFAULT_MODEL, "the default model must be installed"
        pytest.skip(f"{spec.package} is not installed")
    assert sha256_of(path) == spec.sha256
    if spec.tokenizer_file is not None:
        assert spec.tokenizer_file().is_file()


def test_vectors_are_unit_length_and_meaningful(embedder: OnnxLocalEmbedder) -> None:
    # Given two paraphrases and an unrelated sentence
    cat, feline, stocks = embedder.embed(
        ["the cat sits on the mat", "a feline rests on a rug", "stock markets fell sharply"], "search_document"
    )
    # Then vectors are unit length, and paraphrases are far closer than unrelated text
    assert len(cat) == DIMENSION
    assert math.isclose(_cos(cat, cat), 1.0, abs_tol=1e-4)
    assert _cos(cat, feline) > 0.4
    assert _cos(cat, stocks) < 0.15


def test_order_is_kept_across_length_sorted_batches(embedder: OnnxLocalEmbedder) -> None:
    texts = [("word " * (i % 7 + 1)) + str(i) for i in range(70)]
    batched = embedder.embed(texts, "search_document")
    single = [embedder.embed([t], "search_document")[0] for t in texts[:5]]
    for a, b in zip(batched[:5], single, strict=True):
        assert _cos(a, b) > 0.999


def test_a_tampered_model_file_is_refused(tmp_path: Path) -> None:
    # Given a model file whose hash is not the pinned one
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not a model")
    # When loaded, Then it is refused with the fix in the message
    with pytest.raises(ConfigurationError, match="sha256"):
        OnnxLocalEmbedder(model_path=fake).load()


def test_documents_embedded_in_the_background_equal_those_embedded_inline_at_low_priority(
    embedder: OnnxLocalEmbedder,
) -> None:
    # Given an embedder whose documents yield to queries (as `serve` builds it)
    import os
    import sys
    import threading

    from neural_memory.providers.embeddings.onnx_local import DocumentWorkers
    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder as Embedder

    background = Embedder(documents_yield_to_queries=True)
    seen: list[tuple[str, int]] = []
    original = DocumentWorkers._embed_part

    def spy(self: DocumentWorkers, texts: list[str]) -> list[list[float]]:
        nice = os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) if sys.platform == "linux" else 0
        seen.append((threading.current_thread().name, nice))
        return original(self, texts)

    texts = [f"deploy {i} failed on the {'long ' * (i % 7)}build" for i in range(40)]
    try:
        DocumentWorkers._embed_part = spy  # type: ignore[method-assign]
        vectors = background.embed(texts, "search_document")
    finally:
        DocumentWorkers._embed_part = original  # type: ignore[method-assign]
    # Then the vectors are the inline ones, in order, made on the low-priority workers
    expected = embedder.embed(texts, "search_document")
    assert all(
        max(abs(a - b) for a, b in zip(v, e, strict=True)) < 1e-4 for v, e in zip(vectors, expected, strict=True)
    )
    assert seen and all(name.startswith("nm-embed-documents") for name, _ in seen)
    if sys.platform == "linux":
        assert all(nice >= DocumentWorkers.NICE for _, nice in seen)
    # and a query is still embedded on the calling thread
    assert background.embed(["why did it fail"], "search_query") == embedder.embed(["why did it fail"], "search_query")


def test_every_passage_of_technical_text_fits_the_models_window_whole() -> None:
    from neural_memory.domain.chunking import Chunking, chunk_text, embedding_text
    from tokenizers import Tokenizer

    # Given a long abstract of rare words (WordPiece splits them: several pieces per word)
    # and a title like a paper's
    title = "Immunohistochemical characterisation of IL-6-dependent STAT3 phosphorylation in murine hepatocytes"
    sentence = (
        "Immunohistochemical quantification (n = 48; p < 0.001) showed IL-6/STAT3 hyperphosphorylation, "
        "N-methyl-D-aspartate receptor downregulation and Bcl-2-mediated antiapoptotic signalling in "
        "lipopolysaccharide-challenged C57BL/6 hepatocytes. "
    )
    text = sentence * 12
    tokenizer = Tokenizer.from_file(str(default_tokenizer_path()))
    tokenizer.no_truncation()

    def pieces(chunk: str) -> int:
        return len(tokenizer.encode(embedding_text(title, chunk)).ids)

    chunking = Chunking()
    # Then every passage the model reads fits its 256-token window with the title, so no word of
    # it is cut off, where the longer lexical windows would not have fitted
    assert max(pieces(p) for p in chunk_text(text, chunking.passage_tokens, chunking.overlap)) <= MAX_TOKENS
    assert max(pieces(w) for w in chunk_text(text, chunking.tokens, chunking.overlap)) > MAX_TOKENS
