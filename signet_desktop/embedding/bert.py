"""A numpy float32 forward pass of a BERT encoder with mean pooling (no torch).

Weights come from a Hugging Face `model.safetensors` of a `BertModel` (keys without a `bert.`
prefix, as sentence-transformers saves them). Attention heads are handled with reshapes and
batched matmuls, Q/K/V are one fused matmul, and GELU is the exact erf form.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]

# GELU via Abramowitz & Stegun 7.1.26 for erf (|error| <= 1.5e-7, below float32 resolution
# here). The 1/sqrt(2) of erf's argument and GELU's factor 1/2 are folded into the constants.
_GELU_P = np.float32(0.3275911 / math.sqrt(2.0))
_GELU_A = tuple(
    np.float32(0.5 * a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
)
_GELU_BLOCK = 16384
_ONE = np.float32(1.0)
_HALF = np.float32(0.5)
_MINUS_HALF = np.float32(-0.5)
# Added to attention scores of padding keys; finite so fully padded rows cannot produce NaN.
_MASK_BIAS = np.float32(-1e9)


@dataclass(frozen=True, slots=True)
class BertConfig:
    """The shape of the encoder; read from the model's config.json."""

    hidden_size: int
    num_heads: int
    num_layers: int
    layer_norm_eps: float


@dataclass(frozen=True, slots=True)
class _Layer:
    qkv_w: F32  # (hidden, 3 * hidden), input @ qkv_w
    qkv_b: F32
    out_w: F32
    out_b: F32
    ln1_g: F32
    ln1_b: F32
    up_w: F32
    up_b: F32
    down_w: F32
    down_b: F32
    ln2_g: F32
    ln2_b: F32


@dataclass(frozen=True, slots=True)
class BertWeights:
    """Encoder weights laid out for row-major `x @ w` matmuls."""

    config: BertConfig
    word: F32
    position: F32
    token_type0: F32
    emb_ln_g: F32
    emb_ln_b: F32
    layers: tuple[_Layer, ...]


def load_weights(tensors: Mapping[str, npt.NDArray[np.generic]], config: BertConfig) -> BertWeights:
    """Arrange safetensors tensors into `BertWeights` (transposed, fused, contiguous float32)."""

    def get(key: str) -> F32:
        return np.ascontiguousarray(tensors[key], dtype=np.float32)

    def t(key: str) -> F32:
        return np.ascontiguousarray(get(key).T)

    layers = []
    for i in range(config.num_layers):
        p = f"encoder.layer.{i}."
        a = p + "attention."
        qkv_w = np.concatenate(
            [t(a + f"self.{n}.weight") for n in ("query", "key", "value")], axis=1
        )
        qkv_b = np.concatenate([get(a + f"self.{n}.bias") for n in ("query", "key", "value")])
        layers.append(
            _Layer(
                qkv_w=np.ascontiguousarray(qkv_w),
                qkv_b=qkv_b,
                out_w=t(a + "output.dense.weight"),
                out_b=get(a + "output.dense.bias"),
                ln1_g=get(a + "output.LayerNorm.weight"),
                ln1_b=get(a + "output.LayerNorm.bias"),
                up_w=t(p + "intermediate.dense.weight"),
                up_b=get(p + "intermediate.dense.bias"),
                down_w=t(p + "output.dense.weight"),
                down_b=get(p + "output.dense.bias"),
                ln2_g=get(p + "output.LayerNorm.weight"),
                ln2_b=get(p + "output.LayerNorm.bias"),
            )
        )
    return BertWeights(
        config=config,
        word=get("embeddings.word_embeddings.weight"),
        position=get("embeddings.position_embeddings.weight"),
        token_type0=get("embeddings.token_type_embeddings.weight")[0].copy(),
        emb_ln_g=get("embeddings.LayerNorm.weight"),
        emb_ln_b=get("embeddings.LayerNorm.bias"),
        layers=tuple(layers),
    )


def encode_mean_pooled(weights: BertWeights, ids: I64, mask: I64) -> F32:
    """Run the encoder on padded `ids`/`mask` of shape (batch, seq); return unit-norm means."""
    cfg = weights.config
    batch, seq = ids.shape
    x = weights.word[ids] + weights.position[:seq] + weights.token_type0
    x = _layer_norm(
        x.reshape(batch * seq, cfg.hidden_size), weights.emb_ln_g, weights.emb_ln_b, cfg
    )
    bias = ((1 - mask).astype(np.float32) * _MASK_BIAS)[:, None, None, :]
    for layer in weights.layers:
        x = _encoder_layer(x, layer, bias, batch, seq, cfg)
    hidden = x.reshape(batch, seq, cfg.hidden_size)
    m = mask.astype(np.float32)[:, :, None]
    pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), np.float32(1e-9))
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    out: F32 = (pooled / np.maximum(norms, np.float32(1e-12))).astype(np.float32)
    return out


def _encoder_layer(x: F32, layer: _Layer, bias: F32, batch: int, seq: int, cfg: BertConfig) -> F32:
    hidden, heads = cfg.hidden_size, cfg.num_heads
    head_dim = hidden // heads
    qkv = x @ layer.qkv_w
    qkv += layer.qkv_b
    # (batch, seq, 3, heads, head_dim) -> (3, batch, heads, seq, head_dim)
    qkv4 = qkv.reshape(batch, seq, 3, heads, head_dim).transpose(2, 0, 3, 1, 4)
    q, k, v = qkv4[0], qkv4[1], qkv4[2]
    scores = q @ k.transpose(0, 1, 3, 2)
    scores *= np.float32(1.0 / math.sqrt(head_dim))
    scores += bias
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * seq, hidden)
    attn = context @ layer.out_w
    attn += layer.out_b
    attn += x
    x = _layer_norm(attn, layer.ln1_g, layer.ln1_b, cfg)
    up = x @ layer.up_w
    up += layer.up_b
    down = gelu_inplace(up) @ layer.down_w
    down += layer.down_b
    down += x
    return _layer_norm(down, layer.ln2_g, layer.ln2_b, cfg)


def _layer_norm(x: F32, gamma: F32, beta: F32, cfg: BertConfig) -> F32:
    mean = x.mean(axis=-1, keepdims=True)
    centred: F32 = x - mean
    var = np.mean(np.square(centred), axis=-1, keepdims=True)
    centred *= 1.0 / np.sqrt(var + np.float32(cfg.layer_norm_eps))
    centred *= gamma
    centred += beta
    return centred


def gelu_inplace(x: F32) -> F32:
    """Exact (erf) GELU, x * (1 + erf(x / sqrt 2)) / 2, overwriting `x`.

    Works through row blocks of about 16k values so the dozen temporaries stay in cache; numpy
    runs elementwise work on one core, so this is as costly as a matmul if done naively.
    """
    step = max(1, _GELU_BLOCK // x.shape[1])
    for start in range(0, x.shape[0], step):
        c = x[start : start + step]
        a = np.abs(c)
        t = a * _GELU_P
        t += _ONE
        np.reciprocal(t, out=t)
        poly = t * _GELU_A[4]
        for coeff in _GELU_A[3::-1]:
            poly += coeff
            poly *= t
        np.square(a, out=a)
        a *= _MINUS_HALF
        np.exp(a, out=a)
        poly *= a  # (1 - erf(|c| / sqrt 2)) / 2
        np.subtract(_HALF, poly, out=poly)
        np.copysign(poly, c, out=poly)
        poly += _HALF
        c *= poly
    return x
