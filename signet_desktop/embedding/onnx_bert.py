"""The BERT encoder with mean pooling as an ONNX graph run by onnxruntime (no torch).

The graph is built in memory at load time from the same `BertWeights` the numpy forward pass
uses (`embedding/bert.py`), with standard opset-18 operators only, so nothing is downloaded or
converted offline. onnxruntime fuses it (LayerNormalization, Gelu, MatMul+bias) and its MLAS
kernels run a short query in about half the time of numpy's per-operation dispatch; see
docs/BENCHMARKS.md, "Embedder". One intra-op thread, no spinning: parallelism comes from the
embedder's batch workers, and spinning threads stall a busy two-core machine.

Memory: the session is created from a temporary file, not from bytes, because onnxruntime's
Python session keeps the bytes it was given (86 MB here) for its lifetime; and freed heap is
handed back to the OS after loading (`embedding/heap.py`); no memory arena, so a large batch's
scratch space is returned too. Together about 180 MB less RSS.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnxruntime as ort  # type: ignore[import-untyped]

from signet_desktop.embedding.bert import BertWeights
from signet_desktop.embedding.heap import release_free_heap
from signet_desktop.embedding.onnx_proto import FLOAT, INT64, GraphWriter, value_info

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]
OPSET = 18
# The numpy path's constants (embedding/bert.py), so both engines compute the same function.
_MASK_BIAS = -1e9
_POOL_EPS = 1e-9
_NORM_EPS = 1e-12


def _f32(value: float) -> npt.NDArray[np.float32]:
    return np.array(value, dtype=np.float32)


def _i64(*values: int) -> npt.NDArray[np.int64]:
    return np.array(values, dtype=np.int64)


# Writes one dense layer `x @ w + b` into the graph and returns its output's name; `name` is
# unique per layer (e.g. `up_w3`). The default is plain float32 MatMul + Add; a benchmark may
# pass another (bench/quantized_embedding.py writes int8 variants to measure them).
Dense = Callable[[GraphWriter, str, str, F32, F32], str]


def float_dense(g: GraphWriter, x: str, name: str, w: F32, b: F32) -> str:
    """`x @ w + b` in float32 (onnxruntime fuses the pair)."""
    return g.node("Add", [g.node("MatMul", [x, g.constant(name, w)]), g.constant(f"{name}_b", b)])


# Writes the word-embedding lookup (`table` [vocab, hidden] gathered at `ids`) into the graph
# and returns its output's name; the default gathers float32 rows (embedding/graphs.py has an
# int8 table).
Lookup = Callable[[GraphWriter, str, F32], str]


def float_lookup(g: GraphWriter, ids: str, table: F32) -> str:
    """The rows of the float32 `table` at `ids`."""
    return g.node("Gather", [g.constant("word", table), ids])


def build_model(
    weights: BertWeights, dense: Dense = float_dense, lookup: Lookup = float_lookup
) -> bytes:
    """Serialized ONNX model: (ids int64 [B,S], mask int64 [B,S]) -> unit-norm means [B,H]."""
    cfg = weights.config
    hidden, heads = cfg.hidden_size, cfg.num_heads
    head_dim = hidden // heads
    eps = float(cfg.layer_norm_eps)
    g = GraphWriter("minilm")
    c = g.constant
    one, half = c("one", _f32(1.0)), c("half", _f32(0.5))
    heads_shape = c("heads_shape", _i64(0, 0, heads, head_dim))
    hidden_shape = c("hidden_shape", _i64(0, 0, hidden))
    scale = c("scale", _f32(1.0 / math.sqrt(head_dim)))
    sqrt2 = c("sqrt2", _f32(math.sqrt(2.0)))

    def layer_norm(t: str, gamma: str, beta: str) -> str:
        """LayerNormalization of `t` over the hidden axis (`gamma`, `beta`: constants)."""
        return g.node("LayerNormalization", [t, gamma, beta], axis=-1, epsilon=eps)

    seq = g.node("Shape", ["ids"], start=1, end=2)
    positions = g.node("Slice", [c("position", weights.position), c("zero", _i64(0)), seq])
    x = g.node("Add", [lookup(g, "ids", weights.word), positions])
    x = g.node("Add", [x, c("token_type0", weights.token_type0)])
    x = layer_norm(x, c("emb_g", weights.emb_ln_g), c("emb_b", weights.emb_ln_b))
    mask = g.node("Cast", ["mask"], to=FLOAT)
    keys = g.node("Unsqueeze", [mask, c("axes_1_2", _i64(1, 2))])  # [B,1,1,S]
    bias = g.node("Mul", [g.node("Sub", [one, keys]), c("mask_bias", _f32(_MASK_BIAS))])

    def split_heads(t: str, perm: list[int]) -> str:
        return g.node("Transpose", [g.node("Reshape", [t, heads_shape])], perm=perm)

    for i, layer in enumerate(weights.layers):
        qkv = dense(g, x, f"qkv_w{i}", layer.qkv_w, layer.qkv_b)
        q, k, v = (f"q{i}", f"k{i}", f"v{i}")
        g.node(
            "Split", [qkv, c(f"split{i}", _i64(hidden, hidden, hidden))], outputs=[q, k, v], axis=-1
        )
        scores = g.node("MatMul", [split_heads(q, [0, 2, 1, 3]), split_heads(k, [0, 2, 3, 1])])
        scores = g.node("Add", [g.node("Mul", [scores, scale]), bias])
        probs = g.node("Softmax", [scores], axis=-1)
        context = g.node("MatMul", [probs, split_heads(v, [0, 2, 1, 3])])
        context = g.node(
            "Reshape", [g.node("Transpose", [context], perm=[0, 2, 1, 3]), hidden_shape]
        )
        attn = dense(g, context, f"out_w{i}", layer.out_w, layer.out_b)
        x = layer_norm(
            g.node("Add", [attn, x]), c(f"ln1_g{i}", layer.ln1_g), c(f"ln1_b{i}", layer.ln1_b)
        )
        up = dense(g, x, f"up_w{i}", layer.up_w, layer.up_b)
        erf = g.node("Erf", [g.node("Div", [up, sqrt2])])
        gelu = g.node("Mul", [g.node("Mul", [up, g.node("Add", [erf, one])]), half])
        down = dense(g, gelu, f"down_w{i}", layer.down_w, layer.down_b)
        x = layer_norm(
            g.node("Add", [down, x]), c(f"ln2_g{i}", layer.ln2_g), c(f"ln2_b{i}", layer.ln2_b)
        )

    weight = g.node("Unsqueeze", [mask, c("axes_2", _i64(2))])  # [B,S,1]
    seq_axis = c("axes_1", _i64(1))
    total = g.node("ReduceSum", [g.node("Mul", [x, weight]), seq_axis], keepdims=0)
    count = g.node(
        "Max", [g.node("ReduceSum", [weight, seq_axis], keepdims=0), c("pool_eps", _f32(_POOL_EPS))]
    )
    pooled = g.node("Div", [total, count])
    norm = g.node("ReduceL2", [pooled, c("axes_last", _i64(-1))], keepdims=1)
    norm = g.node("Max", [norm, c("norm_eps", _f32(_NORM_EPS))])
    g.node("Div", [pooled, norm], outputs=["vectors"])
    inputs = [
        value_info("ids", INT64, ["batch", "seq"]),
        value_info("mask", INT64, ["batch", "seq"]),
    ]
    return g.model(inputs, [value_info("vectors", FLOAT, ["batch", hidden])], OPSET)


class OnnxBert:
    """An onnxruntime session over `build_model(weights, dense, lookup)`; `encode` is
    thread-safe."""

    def __init__(
        self, weights: BertWeights, dense: Dense = float_dense, lookup: Lookup = float_lookup
    ) -> None:
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # No arena: it keeps the peak of the largest batch (~50 MB) mapped for good, and
        # measured no slower here (docs/BENCHMARKS.md, "Memory").
        options.enable_cpu_mem_arena = False
        options.log_severity_level = 3  # errors only: no per-initializer optimizer chatter
        with tempfile.TemporaryDirectory(prefix="signet-minilm-") as tmp:
            path = Path(tmp) / "minilm.onnx"
            path.write_bytes(build_model(weights, dense, lookup))
            self._session = ort.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
        release_free_heap()

    def encode(self, ids: I64, mask: I64) -> F32:
        """Unit-norm mean-pooled vectors for padded `ids`/`mask` of shape (batch, seq)."""
        (out,) = self._session.run(None, {"ids": ids, "mask": mask})
        result: F32 = np.asarray(out, dtype=np.float32)
        return result
