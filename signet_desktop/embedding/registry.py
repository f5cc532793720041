"""Build the configured embedder: a plain dict from provider name to constructor.

Names follow Signet's `embedding.provider`: native (alias local), ollama, openai (any
OpenAI-compatible server; alias openai-compatible), llama-cpp (alias llamacpp), none, and the
test-only hash, which is refused unless the caller explicitly allows it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from signet_desktop.embedding.graphs import FLOAT32, PRECISIONS, graph_model_name
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.embedding.native import DIMENSIONS as NATIVE_DIMENSIONS
from signet_desktop.embedding.native import MODEL_NAME as NATIVE_MODEL
from signet_desktop.embedding.native import NativeMiniLM
from signet_desktop.embedding.provider import EmbeddingProvider

DEFAULT_BASE_URLS = {
    "ollama": "http://localhost:11434",
    "openai": "https://api.openai.com/v1",
    "llama-cpp": "http://localhost:8080",
}
DEFAULT_MODELS = {"ollama": "nomic-embed-text", "openai": "text-embedding-3-small"}
# Widths of well-known models, so `dimensions` may be left out for them.
KNOWN_DIMENSIONS = {
    "nomic-embed-text": 768,
    "nomic-embed-text-v1.5": 768,
    "mxbai-embed-large": 1024,
    "all-minilm": 384,
    "all-minilm-l6-v2": 384,
    "snowflake-arctic-embed": 1024,
    "bge-m3": 1024,
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
_NATIVE_MODEL_NAMES = {NATIVE_MODEL.lower(), f"sentence-transformers/{NATIVE_MODEL}".lower()}


@dataclass(frozen=True, slots=True)
class EmbedderSettings:
    """The provider-independent part of `embedding.*` config, as one value."""

    model: str | None
    dimensions: int | None
    base_url: str | None
    api_key: str | None
    timeout_s: float
    precision: str = FLOAT32  # native only: a key of embedding/graphs.py PRECISIONS


def _native(s: EmbedderSettings) -> EmbeddingProvider:
    if s.model is not None and s.model.lower() not in _NATIVE_MODEL_NAMES:
        raise ValueError(
            f"the native embedder runs {NATIVE_MODEL} only, not {s.model!r}; "
            "serve other models through ollama, llama-cpp or openai"
        )
    if s.dimensions is not None and s.dimensions != NATIVE_DIMENSIONS:
        raise ValueError(f"{NATIVE_MODEL} has {NATIVE_DIMENSIONS} dimensions, not {s.dimensions}")
    graph = PRECISIONS.get(s.precision)
    if graph is None:
        raise ValueError(f"unknown embedding precision {s.precision!r}; expected int8 or float32")
    return NativeMiniLM(graph=graph)


# Remote clients import httpx (~0.3 s): imported only when configured, to keep start-up fast.


def _ollama(s: EmbedderSettings) -> EmbeddingProvider:
    from signet_desktop.embedding.remote import OllamaEmbedder

    model = s.model or DEFAULT_MODELS["ollama"]
    return OllamaEmbedder(
        s.base_url or DEFAULT_BASE_URLS["ollama"],
        model,
        _dimensions("ollama", model, s.dimensions),
        timeout_s=s.timeout_s,
    )


def _openai(s: EmbedderSettings) -> EmbeddingProvider:
    from signet_desktop.embedding.remote import OpenAICompatibleEmbedder

    model = s.model or DEFAULT_MODELS["openai"]
    dims = _dimensions("openai", model, s.dimensions)
    return OpenAICompatibleEmbedder(
        s.base_url or DEFAULT_BASE_URLS["openai"],
        model,
        dims,
        api_key=s.api_key,
        timeout_s=s.timeout_s,
        # text-embedding-3 models can shorten their output on request.
        request_dimensions=model.startswith("text-embedding-3") and dims != _known(model),
    )


def _llamacpp(s: EmbedderSettings) -> EmbeddingProvider:
    from signet_desktop.embedding.remote import LlamaCppEmbedder

    if not s.model:
        raise ValueError("llama-cpp: set embedding.model to the served model's name")
    return LlamaCppEmbedder(
        s.base_url or DEFAULT_BASE_URLS["llama-cpp"],
        s.model,
        _dimensions("llama-cpp", s.model, s.dimensions),
        timeout_s=s.timeout_s,
        api_key=s.api_key,
    )


def _hash(s: EmbedderSettings) -> EmbeddingProvider:
    return HashEmbedder(s.dimensions or NATIVE_DIMENSIONS)


CONSTRUCTORS: dict[str, Callable[[EmbedderSettings], EmbeddingProvider]] = {
    "native": _native,
    "local": _native,
    "ollama": _ollama,
    "openai": _openai,
    "openai-compatible": _openai,
    "llama-cpp": _llamacpp,
    "llamacpp": _llamacpp,
    "hash": _hash,
}


def build_embedder(
    provider: str,
    *,
    model: str | None,
    dimensions: int | None,
    base_url: str | None,
    api_key: str | None,
    timeout_s: float,
    allow_hash: bool = False,
    precision: str = FLOAT32,
) -> EmbeddingProvider | None:
    """The embedder for `provider` ("none" gives None); ValueError for unknown or bad config."""
    key = provider.strip().lower()
    if key == "none":
        return None
    if key == "hash" and not allow_hash:
        raise ValueError(
            "embedding provider 'hash' is for tests only (it has no semantic meaning); "
            "choose native, ollama, openai or llama-cpp"
        )
    constructor = CONSTRUCTORS.get(key)
    if constructor is None:
        names = ", ".join(sorted({*CONSTRUCTORS, "none"}))
        raise ValueError(f"unknown embedding provider {provider!r}; expected one of: {names}")
    if timeout_s <= 0:
        raise ValueError("embedding timeout must be positive")
    if dimensions is not None and dimensions < 1:
        raise ValueError("embedding dimensions must be positive")
    settings = EmbedderSettings(model, dimensions, base_url, api_key, timeout_s, precision)
    return constructor(settings)


def configured_model(provider: str, model: str, precision: str = FLOAT32) -> str:
    """The model name an embedder built from this config reports (its generation's model):
    the native embedder names its graph (`all-MiniLM-L6-v2+int8-dynamic`), others their model."""
    if provider.strip().lower() not in {"native", "local"}:
        return model
    return graph_model_name(NATIVE_MODEL, PRECISIONS.get(precision, FLOAT32))


def _known(model: str) -> int | None:
    return KNOWN_DIMENSIONS.get(model.lower().split(":", 1)[0].rsplit("/", 1)[-1])


def _dimensions(provider: str, model: str, configured: int | None) -> int:
    dims = configured or _known(model)
    if dims is None:
        raise ValueError(
            f"{provider}: set embedding.dimensions; the width of model {model!r} is not known"
        )
    return dims
