"""Models a user with a network connection can pull from the public model hub (Hugging Face) into
the data folder: ``neural-memory models pull NAME`` (``providers/model_download.py``).

Each row names a repository at a pinned revision (a commit) and every file it needs with its
pinned sha256 and size; nothing is used unless its bytes match. The default stays the bundled model
(``local_models.MODELS``), which needs no network. Pulled embedding models are chosen like bundled ones
(``NM_LOCAL_MODEL=NAME``, then ``neural-memory reindex``); the cross-encoder serves ``rerank: local``.

Where the pins come from (no file could be downloaded here to hash it): the ONNX exports are the
int8 ones transformers.js publishes (``Xenova/…``), and each sha256, size and revision below is the
one several independent public projects pin for that file (e.g. Dockerfiles' ``ADD --checksum``,
download scripts and model registries). The ``tokenizer.json`` files are BERT's uncased WordPiece
vocabulary; the ``vocab.txt`` that every one of these repositories also ships hashes to the
vocabulary the bundled tokenizer holds (checked here: 07eced37…038a3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from neural_memory.errors import ConfigurationError

DEFAULT_HUB_URL = "https://huggingface.co"
MANIFEST = "pulled.json"  # written last into a pulled model's folder: the pull is complete


@dataclass(frozen=True)
class HubFile:
    """One file of a model: its path in the repository, the name it is saved under, its pins."""

    path: str
    sha256: str
    size: int

    @property
    def name(self) -> str:
        return Path(self.path).name


@dataclass(frozen=True)
class HubModel:
    """One pullable model: where it is, what it is for, and how it reads text."""

    name: str  # what `models pull` and NM_LOCAL_MODEL / NM_LOCAL_RERANKER take
    role: Literal["embedding", "rerank"]
    repo: str
    revision: str  # a commit: the files cannot change under the pin
    model: HubFile
    tokenizer: HubFile
    model_id: str = ""  # an embedding model's vector space (rerankers have none)
    dimension: int = 0
    max_tokens: int = 512
    pooling: Literal["mean", "cls"] = "mean"
    query_prefix: str = ""
    document_prefix: str = ""
    licence: str = ""
    source: str = ""  # the original model the export is of
    files: tuple[HubFile, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "files", (self.model, self.tokenizer))

    def url(self, base: str, file: HubFile) -> str:
        """The hub's download address of ``file`` at the pinned revision."""
        return f"{base.rstrip('/')}/{self.repo}/resolve/{self.revision}/{file.path}"

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)


_BERT_UNCASED_TOKENIZER = HubFile(
    "tokenizer.json", "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66", 711_396
)

HUB_MODELS: dict[str, HubModel] = {
    m.name: m
    for m in (
        HubModel(
            name="bge-small-en-v1.5",
            role="embedding",
            repo="Xenova/bge-small-en-v1.5",
            revision="ea104dacec62c0de699686887e3f920caeb4f3e3",
            model=HubFile(
                "onnx/model_quantized.onnx",
                "6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4",
                34_014_426,
            ),
            tokenizer=_BERT_UNCASED_TOKENIZER,
            model_id="bge-small-en-v1.5-onnx-int8",
            dimension=384,
            pooling="cls",
            query_prefix="Represent this sentence for searching relevant passages: ",
            licence="MIT",
            source="BAAI/bge-small-en-v1.5",
        ),
        HubModel(
            name="e5-small-v2",
            role="embedding",
            repo="Xenova/e5-small-v2",
            revision="02af79985278377e65c724a76275707cb0333c70",
            model=HubFile(
                "onnx/model_quantized.onnx",
                "7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded",
                34_014_367,
            ),
            tokenizer=_BERT_UNCASED_TOKENIZER,
            model_id="e5-small-v2-onnx-int8",
            dimension=384,
            query_prefix="query: ",
            document_prefix="passage: ",
            licence="MIT",
            source="intfloat/e5-small-v2",
        ),
        HubModel(
            name="gte-small",
            role="embedding",
            repo="Xenova/gte-small",
            revision="5927d1727bb12db490052a1b33265ad78058de08",
            model=HubFile(
                "onnx/model_quantized.onnx",
                "18dec105109b6004369799ca4761fb8fb413c64172c02147bcfac186b5c5f6cb",
                34_014_426,
            ),
            tokenizer=HubFile(
                "tokenizer.json", "da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0", 711_661
            ),
            model_id="gte-small-onnx-int8",
            dimension=384,
            licence="MIT",
            source="thenlper/gte-small",
        ),
        HubModel(
            name="ms-marco-minilm-l6-v2",
            role="rerank",
            repo="Xenova/ms-marco-MiniLM-L-6-v2",
            revision="a09144355adeed5f58c8ed011d209bf8ee5a1fec",
            model=HubFile(
                "onnx/model_quantized.onnx",
                "e9d8ebf845c413e981c175bfe49a3bfa9b3dcce2a3ba54875ee5df5a58639fbe",
                23_143_499,
            ),
            tokenizer=_BERT_UNCASED_TOKENIZER,
            licence="Apache-2.0",
            source="cross-encoder/ms-marco-MiniLM-L-6-v2",
        ),
    )
}
DEFAULT_RERANKER = "ms-marco-minilm-l6-v2"


def hub_model(name: str, role: Literal["embedding", "rerank"] | None = None) -> HubModel:
    """The row named ``name`` (of ``role``, when given), or a ConfigurationError naming the choices."""
    model = HUB_MODELS.get(name)
    if model is None or (role is not None and model.role != role):
        choices = sorted(n for n, m in HUB_MODELS.items() if role is None or m.role == role)
        raise ConfigurationError(f"unknown model {name!r}; `neural-memory models pull` takes one of {choices}")
    return model


def models_dir(data_dir: Path) -> Path:
    """Where pulled models live: a folder each under the data folder's ``models/``."""
    return data_dir / "models"


def pulled_folder(data_dir: Path, model: HubModel) -> Path:
    """The folder of a pulled ``model``, or a ConfigurationError naming the command that pulls it.
    Complete only once its manifest is written (the last step of a pull); the files' hashes are
    checked where they are loaded."""
    folder = models_dir(data_dir) / model.name
    if not (folder / MANIFEST).is_file() or not all((folder / f.name).is_file() for f in model.files):
        raise ConfigurationError(
            f"the model {model.name} is not pulled into {models_dir(data_dir)}: run "
            f"`neural-memory models pull {model.name} --data-dir {data_dir}` (it downloads "
            f"{model.size / 1e6:.0f} MB from the model hub)"
        )
    return folder
