"""Tiny real models, built here with the ``onnx`` package, that read text the way the hub's BERT
exports do: a WordPiece ``tokenizer.json`` (made with ``tokenizers``) over a vocabulary of a few
dozen words, and ONNX graphs with the exports' inputs and outputs.

- The embedder answers ``last_hidden_state`` [batch, tokens, dim]: each word's one-hot vector, so
  mean pooling makes a bag of words and the cosine of two texts is their shared words.
- The cross-encoder answers ``logits`` [batch, 1]: the number of words the query (type 0) and the
  passage (type 1) share, minus ``BIAS``; so a passage sharing two or more of the query's words
  scores above 0.5 after the sigmoid, one sharing none about 0.18.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import TYPE_CHECKING

from neural_memory.providers.hub_models import HubFile, HubModel

if TYPE_CHECKING:
    from pathlib import Path

    from onnx import GraphProto, TensorProto

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = (
    "the a of on to and why did deploy deploys failed fail friday fridays rollback database migration "
    "cache cold slow latency cat mat dog sat sits stock market fell what broke release"
).split()
VOCAB = SPECIAL + WORDS
BIAS = 1.5
REPO_EMBEDDER = "tiny-org/tiny-embedder"
REPO_CROSS_ENCODER = "tiny-org/tiny-cross-encoder"
REVISION = "0123456789abcdef0123456789abcdef01234567"


def tokenizer_json() -> bytes:
    """A BERT-style uncased WordPiece tokenizer over ``VOCAB``, saved as ``tokenizer.json``."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    tokenizer = Tokenizer(models.WordPiece({w: i for i, w in enumerate(VOCAB)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    cls, sep = VOCAB.index("[CLS]"), VOCAB.index("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    return tokenizer.to_str().encode()


def _one_hot_table() -> TensorProto:
    import numpy as np
    from onnx import numpy_helper

    table = np.eye(len(VOCAB), dtype=np.float32)
    table[: len(SPECIAL)] = 0.0  # special tokens carry no meaning
    return numpy_helper.from_array(table, name="embeddings")


def embedder_onnx() -> bytes:
    """``input_ids``, ``attention_mask`` -> ``last_hidden_state``: a one-hot row per token."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Gather", ["embeddings", "input_ids"], ["last_hidden_state"])],
        "tiny-embedder",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", len(VOCAB)])],
        initializer=[_one_hot_table()],
    )
    return _serialized(graph)


def cross_encoder_onnx() -> bytes:
    """``input_ids``, ``attention_mask``, ``token_type_ids`` -> ``logits`` [batch, 1]: the words
    the two segments share, minus ``BIAS``."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    constants = [
        numpy_helper.from_array(np.array([2], dtype=np.int64), name="axis2"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), name="axis1"),
        numpy_helper.from_array(np.array([BIAS], dtype=np.float32), name="bias"),
    ]
    nodes = [
        helper.make_node("Gather", ["embeddings", "input_ids"], ["tokens"]),
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["token_type_ids"], ["types"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["mask", "types"], ["weight_b"]),
        helper.make_node("Sub", ["mask", "weight_b"], ["weight_a"]),
        helper.make_node("Unsqueeze", ["weight_a", "axis2"], ["weight_a3"]),
        helper.make_node("Unsqueeze", ["weight_b", "axis2"], ["weight_b3"]),
        helper.make_node("Mul", ["tokens", "weight_a3"], ["tokens_a"]),
        helper.make_node("Mul", ["tokens", "weight_b3"], ["tokens_b"]),
        helper.make_node("ReduceSum", ["tokens_a", "axis1"], ["bag_a"], keepdims=0),
        helper.make_node("ReduceSum", ["tokens_b", "axis1"], ["bag_b"], keepdims=0),
        helper.make_node("Mul", ["bag_a", "bag_b"], ["shared"]),
        helper.make_node("ReduceSum", ["shared", "axis1"], ["overlap"], keepdims=1),
        helper.make_node("Sub", ["overlap", "bias"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny-cross-encoder",
        [
            helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])
            for name in ("input_ids", "attention_mask", "token_type_ids")
        ],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
        initializer=[_one_hot_table(), *constants],
    )
    return _serialized(graph)


def _serialized(graph: GraphProto) -> bytes:
    import onnx
    from onnx import helper

    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # what every onnxruntime of the last years reads
    onnx.checker.check_model(model)
    return bytes(model.SerializeToString())


def pinned(path: str, content: bytes) -> HubFile:
    return HubFile(path, hashlib.sha256(content).hexdigest(), len(content))


def hub_files() -> dict[str, dict[str, bytes]]:
    """What the stand-in hub serves: repository -> path -> bytes."""
    tokenizer = tokenizer_json()
    return {
        REPO_EMBEDDER: {"onnx/model_quantized.onnx": embedder_onnx(), "tokenizer.json": tokenizer},
        REPO_CROSS_ENCODER: {"onnx/model_quantized.onnx": cross_encoder_onnx(), "tokenizer.json": tokenizer},
    }


def hub_rows(files: dict[str, dict[str, bytes]]) -> dict[str, HubModel]:
    """Catalogue rows for the tiny models, pinned to the bytes in ``files`` (as the real rows are
    pinned to the hub's)."""

    def row(repo: str) -> tuple[HubFile, HubFile]:
        served = files[repo]
        path = "onnx/model_quantized.onnx"
        return pinned(path, served[path]), pinned("tokenizer.json", served["tokenizer.json"])

    model, tokenizer = row(REPO_EMBEDDER)
    embedder = HubModel(
        name="tiny-embedder",
        role="embedding",
        repo=REPO_EMBEDDER,
        revision=REVISION,
        model=model,
        tokenizer=tokenizer,
        model_id="tiny-embedder-onnx",
        dimension=len(VOCAB),
        max_tokens=64,
        licence="test",
    )
    model, tokenizer = row(REPO_CROSS_ENCODER)
    cross = HubModel(
        name="tiny-cross-encoder",
        role="rerank",
        repo=REPO_CROSS_ENCODER,
        revision=REVISION,
        model=model,
        tokenizer=tokenizer,
        max_tokens=64,
        licence="test",
    )
    return {embedder.name: embedder, cross.name: cross}


def with_file(model: HubModel, path: str) -> HubModel:
    """``model`` with its ONNX file at another path (one the hub does not have)."""
    return replace(model, model=replace(model.model, path=path))


def model_dir_files(folder: Path) -> list[str]:
    """Every file under ``folder``, relative, sorted (to see what a pull left behind)."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
