"""``rerank: local``: a cross-encoder pulled from the hub (``neural-memory models pull``) reads the
query and each candidate together and scores their relevance, on CPU with onnxruntime; no network.

The model (e.g. ms-marco-MiniLM-L-6-v2) reads ``[CLS] query [SEP] passage [SEP]`` (the passage's
tokens typed 1) and answers one logit per pair; ``rerank`` is its sigmoid, in [0, 1]. The files are
found, checked against their pinned sha256 and loaded on first use, once per process; a model
that was not pulled is a ``RerankFailed`` naming the command, so the search degrades to ``fast``.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from neural_memory.errors import ConfigurationError
from neural_memory.providers.embeddings.onnx_local import sha256_of
from neural_memory.providers.hub_models import pulled_folder
from neural_memory.providers.rerank.base import RerankFailed

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from neural_memory.models import Candidate
    from neural_memory.providers.hub_models import HubModel

MAX_DOCUMENT_CHARS = 4000  # the model reads at most max_tokens anyway
BATCH_SIZE = 16


class CrossEncoderReranker:
    """Scores (query, candidate) pairs with a pulled cross-encoder; thread-safe, loaded lazily."""

    def __init__(self, model: HubModel, data_dir: Path) -> None:
        self._model = model
        self._data_dir = data_dir
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._np: Any = None
        self._inputs: set[str] = set()
        # A file that failed its pin, by (path, size, mtime): every search would hash 23 MB again
        self._refused: tuple[tuple[str, int, int], ConfigurationError] | None = None

    def load(self) -> None:
        """Find, verify and load the model and its tokenizer (``ConfigurationError`` naming the
        fix when it is not pulled or its file is not the pinned one)."""
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            import numpy as np
            import onnxruntime as ort
            from tokenizers import Tokenizer

            folder = pulled_folder(self._data_dir, self._model)
            path = folder / self._model.model.name
            stat = path.stat()
            seen = (str(path), stat.st_size, stat.st_mtime_ns)
            if self._refused is not None and self._refused[0] == seen:
                raise self._refused[1]
            actual = sha256_of(path)
            if actual != self._model.model.sha256:
                refused = ConfigurationError(
                    f"the cross-encoder {path} has sha256 {actual}, expected {self._model.model.sha256}: pull it "
                    f"again with `neural-memory models pull {self._model.name} --data-dir {self._data_dir}`"
                )
                self._refused = (seen, refused)
                raise refused
            tokenizer = Tokenizer.from_file(str(folder / self._model.tokenizer.name))
            tokenizer.enable_truncation(max_length=self._model.max_tokens)  # longest side first: the passage
            pad = tokenizer.token_to_id("[PAD]")
            tokenizer.enable_padding(pad_id=pad if pad is not None else 0, pad_token="[PAD]")  # a token, not a password
            options = ort.SessionOptions()
            options.log_severity_level = 3
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # as the embedder: no busy wait
            session = ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
            self._inputs = {i.name for i in session.get_inputs()}
            self._np, self._tokenizer, self._session = np, tokenizer, session

    def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        """The relevance of each passage to ``query``, in [0, 1], in the passages' order."""
        if not passages:
            return []
        self.load()
        np = self._np
        out: list[float] = []
        for start in range(0, len(passages), BATCH_SIZE):
            batch = [(query, p[:MAX_DOCUMENT_CHARS]) for p in passages[start : start + BATCH_SIZE]]
            encodings = self._tokenizer.encode_batch(batch)
            feed = {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            }
            if "token_type_ids" in self._inputs:
                feed["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
            logits = np.asarray(self._session.run(None, feed)[0], dtype=np.float64).reshape(len(batch), -1)[:, 0]
            out.extend((1.0 / (1.0 + np.exp(-logits))).tolist())
        return out

    def rerank(self, query: str, candidates: Sequence[Candidate], top_k: int) -> list[Candidate]:
        """The best ``top_k`` candidates by the cross-encoder, best first (ties keep their order)."""
        if not candidates:
            return []
        texts = [f"{c.observation.title}\n{c.observation.content}" for c in candidates]
        try:
            relevance = self.scores(query, texts)
        except ConfigurationError as exc:
            raise RerankFailed(str(exc)) from exc
        except Exception as exc:  # onnxruntime raises its own types for a broken or foreign graph
            raise RerankFailed(f"the local cross-encoder failed: {type(exc).__name__}: {exc}") from exc
        order = sorted(range(len(candidates)), key=lambda i: -relevance[i])
        return [candidates[i].model_copy(update={"rerank": relevance[i]}) for i in order[:top_k]]
