"""Embedders behind HTTP: Ollama, any OpenAI-compatible server, and llama.cpp's server.

Each speaks its server's real wire format over `transport.JsonEndpoint` (bounded retries,
backoff, safe errors), sends texts in batches, and checks every batch with
`validate_vectors` before anything is returned. Whitespace-only texts are sent as a single
space: several servers reject an empty string, and for these tokenizers the two are the same.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal, Self
from urllib.parse import urlsplit

import numpy as np

from signet_desktop.embedding.provider import (
    EmbeddingError,
    Vectors,
    check_texts,
    empty_vectors,
    validate_vectors,
)
from signet_desktop.embedding.transport import JsonEndpoint, RetryPolicy
from signet_desktop.inference.transport import redact_url
from signet_desktop.storage.guard import assert_provider_call_allowed

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_RETRIES = 2


class _HttpEmbedder:
    """Shared batching and validation; subclasses define the payload and the response shape."""

    name = "remote"

    def __init__(
        self, endpoint: JsonEndpoint, model: str, dimensions: int, batch_size: int
    ) -> None:
        if dimensions < 1:
            raise ValueError("dimensions must be >= 1")
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.model = model
        self.dimensions = dimensions
        self._endpoint = endpoint
        self._batch_size = batch_size

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(url={self._endpoint.safe_url!r}, model={self.model!r}, "
            f"dimensions={self.dimensions})"
        )

    @property
    def url(self) -> str:
        """The endpoint URL without credentials or query string."""
        return self._endpoint.safe_url

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed `texts` in batches; any invalid batch fails the whole call."""
        assert_provider_call_allowed(f"embedding:{self.name}")
        items = check_texts(texts)
        if not items:
            return empty_vectors(self.dimensions)
        parts = []
        for start in range(0, len(items), self._batch_size):
            chunk = [_wire_text(t) for t in items[start : start + self._batch_size]]
            body = self._endpoint.post(self._payload(chunk))
            raw = self._vectors(body, len(chunk))
            parts.append(
                validate_vectors(raw, self.dimensions, self._where(), expected_rows=len(chunk))
            )
        return parts[0] if len(parts) == 1 else np.vstack(parts)

    def close(self) -> None:
        """Release the HTTP connection pool (a later embed() opens a new one)."""
        self._endpoint.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _where(self) -> str:
        return f"{self.name} embedder at {self._endpoint.safe_url}"

    def _payload(self, texts: list[str]) -> dict[str, Any]:
        raise NotImplementedError

    def _vectors(self, body: Any, count: int) -> object:
        raise NotImplementedError


class OllamaEmbedder(_HttpEmbedder):
    """Ollama's `POST /api/embed` (`{"model", "input": [...]}` -> `{"embeddings": [...]}`)."""

    name = "ollama"

    def __init__(
        self,
        base_url: str,
        model: str,
        dimensions: int,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retries: int = DEFAULT_RETRIES,
        *,
        batch_size: int = 32,
        backoff_s: float = 0.25,
    ) -> None:
        endpoint = JsonEndpoint(
            self.name,
            _join(base_url, "/api/embed"),
            timeout_s=timeout_s,
            retry=RetryPolicy(retries=retries, backoff_s=backoff_s),
        )
        super().__init__(endpoint, model, dimensions, batch_size)

    def _payload(self, texts: list[str]) -> dict[str, Any]:
        return {"model": self.model, "input": texts, "truncate": True}

    def _vectors(self, body: Any, count: int) -> object:
        if isinstance(body, dict) and isinstance(body.get("embeddings"), list):
            return body["embeddings"]
        raise EmbeddingError(f"{self._where()}: response has no 'embeddings' list")


class OpenAICompatibleEmbedder(_HttpEmbedder):
    """Any OpenAI-compatible `POST {base_url}/embeddings` (OpenAI, LM Studio, vLLM, ...).

    `base_url` is the API root including its version, as in Signet's config
    (`https://api.openai.com/v1`); a bare host such as `http://localhost:1234` gets `/v1`.
    """

    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        dimensions: int,
        api_key: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retries: int = DEFAULT_RETRIES,
        *,
        batch_size: int = 64,
        backoff_s: float = 0.25,
        request_dimensions: bool = False,
    ) -> None:
        endpoint = JsonEndpoint(
            self.name,
            _join(_with_version(base_url), "/embeddings"),
            timeout_s=timeout_s,
            retry=RetryPolicy(retries=retries, backoff_s=backoff_s),
            api_key=api_key,
        )
        super().__init__(endpoint, model, dimensions, batch_size)
        self._request_dimensions = request_dimensions

    def _payload(self, texts: list[str]) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self._request_dimensions:
            payload["dimensions"] = self.dimensions
        return payload

    def _vectors(self, body: Any, count: int) -> object:
        return openai_vectors(body, count, self._where())


class LlamaCppEmbedder(_HttpEmbedder):
    """llama.cpp's `llama-server --embeddings`: `/v1/embeddings`, or native `/embedding`.

    Texts are cut to `max_input_chars` first (Signet's llamaCppMaxInputTokens is 1400; three
    characters a token keeps under it), because the server fails inputs longer than its batch.
    """

    name = "llama-cpp"

    def __init__(
        self,
        base_url: str,
        model: str,
        dimensions: int,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retries: int = DEFAULT_RETRIES,
        *,
        api_key: str | None = None,
        wire: Literal["openai", "native"] = "openai",
        max_input_chars: int = 1400 * 3,
        batch_size: int = 16,
        backoff_s: float = 0.25,
    ) -> None:
        root = base_url.rstrip("/").removesuffix("/v1")
        path = "/v1/embeddings" if wire == "openai" else "/embedding"
        endpoint = JsonEndpoint(
            self.name,
            _join(root, path),
            timeout_s=timeout_s,
            retry=RetryPolicy(retries=retries, backoff_s=backoff_s),
            api_key=api_key,
        )
        super().__init__(endpoint, model, dimensions, batch_size)
        self._wire = wire
        self._max_chars = max_input_chars

    def _payload(self, texts: list[str]) -> dict[str, Any]:
        cut = [t[: self._max_chars] for t in texts]
        if self._wire == "native":
            return {"content": cut}
        return {"model": self.model, "input": cut, "encoding_format": "float"}

    def _vectors(self, body: Any, count: int) -> object:
        if self._wire == "openai":
            return openai_vectors(body, count, self._where())
        return llamacpp_native_vectors(body, self._where())


def openai_vectors(body: Any, count: int, where: str) -> list[object]:
    """Vectors from an OpenAI `{"data": [{"index", "embedding"}]}` body, in index order."""
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        raise EmbeddingError(f"{where}: response has no 'data' list")
    by_index: dict[int, object] = {}
    for pos, item in enumerate(data):
        if not isinstance(item, dict) or "embedding" not in item:
            raise EmbeddingError(f"{where}: data[{pos}] has no 'embedding'")
        index = item.get("index", pos)
        if not isinstance(index, int) or index in by_index:
            raise EmbeddingError(f"{where}: data[{pos}] has a bad or repeated index")
        by_index[index] = item["embedding"]
    if sorted(by_index) != list(range(count)):
        raise EmbeddingError(f"{where}: expected {count} vectors, got indices {sorted(by_index)}")
    return [by_index[i] for i in range(count)]


def llamacpp_native_vectors(body: Any, where: str) -> list[object]:
    """Vectors from llama.cpp's `/embedding`: `[{"index", "embedding": [[...]]}]` or legacy
    `{"embedding": [...]}`; per-token output (`--pooling none`) is refused."""
    if isinstance(body, dict) and "embedding" in body:
        body = [{"index": 0, "embedding": body["embedding"]}]
    if not isinstance(body, list):
        raise EmbeddingError(f"{where}: response is not a list of embeddings")
    rows: list[object] = []
    for item in sorted(body, key=lambda i: i.get("index", 0) if isinstance(i, dict) else 0):
        vec = item.get("embedding") if isinstance(item, dict) else None
        if isinstance(vec, list) and vec and isinstance(vec[0], list):
            if len(vec) != 1:
                raise EmbeddingError(
                    f"{where}: server returned per-token embeddings; start llama-server "
                    "with --pooling mean (or cls/last)"
                )
            vec = vec[0]
        rows.append(vec)
    return rows


def _wire_text(text: str) -> str:
    return text if text.strip() else " "


def _join(base_url: str, path: str) -> str:
    if not base_url.startswith(("http://", "https://")):
        shown = redact_url(base_url)
        raise ValueError(f"base_url must start with http:// or https://, got {shown!r}")
    return base_url.rstrip("/") + path


def _with_version(base_url: str) -> str:
    """Append /v1 unless the path already ends in a version segment such as /v1 or /api/v1."""
    trimmed = base_url.rstrip("/")
    last = urlsplit(trimmed).path.rsplit("/", 1)[-1]
    if re.fullmatch(r"v\d+", last):
        return trimmed
    return trimmed + "/v1"
