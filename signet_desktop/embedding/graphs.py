"""The ways the encoder's dense layers can be written into its ONNX graph (`onnx_bert.Dense`).

Every graph is built at load time from the same shipped float32 weights (no download, no
offline conversion, no torch); only the 24 dense layers (`x @ w + b`) differ:

- `float32`: plain MatMul + Add, the reference (vectors match sentence-transformers);
- `int8-dynamic`: onnxruntime's DynamicQuantizeMatMul (W8A8): int8 weights per output
  column, activations quantised per tensor at run time, int8 x uint8 products (VNNI where the
  CPU has it);
- `int8-dynamic-out`: the same for the attention output projection only;
- `int8-dynamic-attn`: the same for the attention layers (qkv, out), the feed-forward in float;
- `int8-token`: W8A8 with one activation scale per token (MatMulIntegerToFloat), so a text's
  vector does not depend on its batch;
- `int8-token-vocab`, `int8-dynamic-vocab`: the same with the word-embedding table in int8
  (one scale per row; 35 MB less memory);
- `int8-block-compute`: MatMulNBits, 8-bit weights in blocks of 32, int8 compute (level 4)
  (`int8-block128-compute`: blocks of 128);
- `int8-block-weights`: MatMulNBits with float compute (level 0).

Vectors of different graphs are different vector spaces: each graph is its own embedding
model name (`graph_model_name`), so its vectors form their own generation and never mix with
another graph's. docs/BENCHMARKS.md, "Embedder graphs by retrieval", has the measurements;
`embedding.precision` picks one of two (`PRECISIONS`), the others are for the benchmarks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from signet_desktop.embedding.onnx_proto import FLOAT, UINT8, GraphWriter

if TYPE_CHECKING:  # onnx_bert imports onnxruntime, which loads with the model, not before
    from signet_desktop.embedding.onnx_bert import Dense, Lookup

F32 = npt.NDArray[np.float32]

CONTRIB = "com.microsoft"
BLOCK = 32
FLOAT32 = "float32"
VOCAB = "-vocab"  # a graph name's suffix: the word-embedding table in int8 too


def float32_dense() -> Dense:
    """Plain float32 MatMul + Add (`onnx_bert.float_dense`)."""
    from signet_desktop.embedding.onnx_bert import float_dense

    return float_dense


def int8_dynamic(only: tuple[str, ...] = ()) -> Dense:
    """DynamicQuantizeMatMul layers (all, or those whose name starts with one of `only`)."""

    plain = float32_dense()

    def dense(g: GraphWriter, x: str, name: str, w: F32, b: F32) -> str:
        if only and not name.startswith(only):
            return plain(g, x, name, w, b)
        q, scale = _per_column(w)
        inputs = [x, g.constant(f"{name}_q", q), g.constant(f"{name}_s", scale)]
        inputs += ["", g.constant(f"{name}_b", b)]  # no zero point (symmetric), then the bias
        return g.node("DynamicQuantizeMatMul", inputs, domain=CONTRIB)

    return dense


def _per_column(w: F32) -> tuple[npt.NDArray[np.int8], F32]:
    """Symmetric int8 weights per output column, and each column's scale."""
    scale = np.abs(w).max(axis=0) / 127.0
    scale[scale == 0] = 1.0
    q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
    return q, scale.astype(np.float32)


def int8_per_token() -> Dense:
    """W8A8 with one activation scale per token (row) instead of one per call: QuantizeLinear
    per row to uint8 around 128, MatMulIntegerToFloat with int8 weights per column, then the
    row's scale. A text's vector then does not depend on the other texts of its batch
    (DynamicQuantizeMatMul's one activation scale per call makes it depend on them)."""

    def dense(g: GraphWriter, x: str, name: str, w: F32, b: F32) -> str:
        k, n = w.shape
        q, scale = _per_column(w)
        c = g.constant
        rows = g.node("Reshape", [x, c(f"{name}_rows", np.array([-1, k], dtype=np.int64))])
        amax = g.node("ReduceMax", [g.node("Abs", [rows]), c(f"{name}_axis", _LAST)], keepdims=0)
        step = g.node(
            "Max", [g.node("Div", [amax, c(f"{name}_127", _127)]), c(f"{name}_tiny", _TINY)]
        )
        # per-row zero points of 128 (QuantizeLinear wants one per scale): uint8 around 128 runs
        # onnxruntime's u8 x s8 kernels (VNNI)
        zero = g.node("Mul", [step, c(f"{name}_0", _ZERO)])
        points = g.node("Cast", [g.node("Add", [zero, c(f"{name}_128", _128)])], to=UINT8)
        xq = g.node("QuantizeLinear", [rows, step, points], axis=0)
        inputs = [xq, c(f"{name}_q", q), c(f"{name}_1", _ONE), c(f"{name}_s", scale)]
        acc = g.node("MatMulIntegerToFloat", [*inputs, c(f"{name}_zp", _ZP)], domain=CONTRIB)
        row_scale = g.node("Unsqueeze", [step, c(f"{name}_axis1", _COLUMN)])
        out = g.node("Add", [g.node("Mul", [acc, row_scale]), c(f"{name}_b", b)])
        lead = g.node("Shape", [x], end=-1)
        shape = g.node("Concat", [lead, c(f"{name}_n", np.array([n], dtype=np.int64))], axis=0)
        return g.node("Reshape", [out, shape])

    return dense


_LAST = np.array([-1], dtype=np.int64)
_COLUMN = np.array([1], dtype=np.int64)
_127 = np.array(127.0, dtype=np.float32)
_128 = np.array(128.0, dtype=np.float32)
_ZERO = np.array(0.0, dtype=np.float32)
_ONE = np.array(1.0, dtype=np.float32)
_TINY = np.array(1e-12, dtype=np.float32)
_ZP = np.array(128, dtype=np.uint8)


def int8_blocks(accuracy_level: int, block: int = BLOCK) -> Dense:
    """MatMulNBits with 8-bit weights in blocks of `block` along the input dimension."""

    def dense(g: GraphWriter, x: str, name: str, w: F32, b: F32) -> str:
        k, n = w.shape
        blocks = w.T.reshape(n, k // block, block)
        scale = np.abs(blocks).max(axis=2) / 127.0
        scale[scale == 0] = 1.0
        q = (np.clip(np.round(blocks / scale[:, :, None]), -127, 127) + 128).astype(np.uint8)
        out = g.node(
            "MatMulNBits",
            [x, g.constant(f"{name}_q", q), g.constant(f"{name}_s", scale.reshape(-1))],
            domain=CONTRIB,
            K=k,
            N=n,
            bits=8,
            block_size=block,
            accuracy_level=accuracy_level,
        )
        return g.node("Add", [out, g.constant(f"{name}_b", b)])

    return dense


GRAPHS: dict[str, Callable[[], Dense]] = {
    FLOAT32: float32_dense,
    "int8-dynamic": lambda: int8_dynamic(),
    "int8-dynamic-out": lambda: int8_dynamic(("out_w",)),
    "int8-dynamic-attn": lambda: int8_dynamic(("qkv_w", "out_w")),
    "int8-token": int8_per_token,
    f"int8-token{VOCAB}": int8_per_token,
    f"int8-dynamic{VOCAB}": lambda: int8_dynamic(),
    "int8-block-compute": lambda: int8_blocks(4),
    "int8-block128-compute": lambda: int8_blocks(4, 128),
    "int8-block-weights": lambda: int8_blocks(0),
}


# `embedding.precision` (native provider): the graph each setting runs. int8 (the default) is
# the per-token graph with the int8 word table: LoCoMo dev recall@10 / MRR within 0.005 of
# float32's, a query in about a third of the time, ~60 MiB less memory, ~240 MiB less peak at
# load, and a text's vector independent of its batch (docs/BENCHMARKS.md, "Embedder graphs").
PRECISIONS: dict[str, str] = {FLOAT32: FLOAT32, "int8": "int8-token-vocab"}


def dense_for(graph: str) -> Dense:
    """The dense-layer writer of `graph` (ValueError for an unknown name)."""
    graph_model_name("", graph)  # refuses an unknown name
    return GRAPHS[graph]()


def lookup_for(graph: str) -> Lookup:
    """The word-embedding lookup of `graph`: an int8 table for the `*-vocab` graphs."""
    if graph.endswith(VOCAB):
        return int8_lookup
    from signet_desktop.embedding.onnx_bert import float_lookup

    return float_lookup


def int8_lookup(g: GraphWriter, ids: str, table: F32) -> str:
    """The word embeddings as int8 rows with one scale each (47 MB of float32 -> 12 MB), the
    gathered rows scaled back to float32."""
    scale = np.abs(table).max(axis=1) / 127.0
    scale[scale == 0] = 1.0
    q = np.clip(np.round(table / scale[:, None]), -127, 127).astype(np.int8)
    rows = g.node("Cast", [g.node("Gather", [g.constant("word_q", q), ids])], to=FLOAT)
    scales = g.node("Gather", [g.constant("word_s", scale.astype(np.float32)[:, None]), ids])
    return g.node("Mul", [rows, scales])


def graph_model_name(model: str, graph: str) -> str:
    """The embedding model name of `model` run as `graph`: the float32 graph keeps the plain
    name (the vectors of every database so far), any other is `<model>+<graph>`."""
    if graph not in GRAPHS:
        raise ValueError(f"unknown embedder graph {graph!r}; expected one of: {', '.join(GRAPHS)}")
    return model if graph == FLOAT32 else f"{model}+{graph}"


def base_model_name(model: str) -> str:
    """`graph_model_name`'s model part: `all-MiniLM-L6-v2+int8-dynamic` -> `all-MiniLM-L6-v2`."""
    return model.split("+", 1)[0]
