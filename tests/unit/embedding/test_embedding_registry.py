"""build_embedder: provider names, defaults, and refusals."""

from __future__ import annotations

from typing import Any

import pytest
from embedding_fakes import FakeEmbedServer

from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.embedding.native import NativeMiniLM
from signet_desktop.embedding.registry import build_embedder
from signet_desktop.embedding.remote import (
    LlamaCppEmbedder,
    OllamaEmbedder,
    OpenAICompatibleEmbedder,
)


def build(provider: str, **kw: Any) -> Any:
    args: dict[str, Any] = {
        "model": None,
        "dimensions": None,
        "base_url": None,
        "api_key": None,
        "timeout_s": 5.0,
        **kw,
    }
    return build_embedder(provider, **args)


def test_none_means_no_embedder() -> None:
    assert build("none") is None


@pytest.mark.parametrize("name", ["native", "local", " Native "])
def test_native_and_its_alias_build_without_loading(name: str) -> None:
    embedder = build(name)
    assert isinstance(embedder, NativeMiniLM) and not embedder.is_loaded
    assert (embedder.model, embedder.dimensions) == ("all-MiniLM-L6-v2", 384)


def test_native_refuses_other_models_and_widths() -> None:
    assert isinstance(build("native", model="sentence-transformers/all-MiniLM-L6-v2"), NativeMiniLM)
    with pytest.raises(ValueError, match="runs all-MiniLM-L6-v2 only"):
        build("native", model="nomic-embed-text-v1.5")
    with pytest.raises(ValueError, match="384 dimensions, not 768"):
        build("native", dimensions=768)


def test_hash_is_refused_unless_allowed() -> None:
    with pytest.raises(ValueError, match="tests only"):
        build("hash")
    embedder = build("hash", allow_hash=True, dimensions=16)
    assert isinstance(embedder, HashEmbedder) and embedder.dimensions == 16


def test_unknown_provider_lists_the_choices() -> None:
    with pytest.raises(ValueError, match=r"unknown embedding provider 'bert'.*ollama"):
        build("bert")


def test_remote_defaults() -> None:
    o = build("ollama")
    assert isinstance(o, OllamaEmbedder)
    assert (o.model, o.dimensions, o.url) == (
        "nomic-embed-text",
        768,
        "http://localhost:11434/api/embed",
    )
    oa = build("openai", api_key="k")
    assert isinstance(oa, OpenAICompatibleEmbedder)
    assert (oa.model, oa.dimensions, oa.url) == (
        "text-embedding-3-small",
        1536,
        "https://api.openai.com/v1/embeddings",
    )
    assert isinstance(
        build("openai-compatible", base_url="http://localhost:1234"), OpenAICompatibleEmbedder
    )
    lc = build("llama-cpp", model="nomic-embed-text-v1.5")
    assert isinstance(lc, LlamaCppEmbedder)
    assert (lc.dimensions, lc.url) == (768, "http://localhost:8080/v1/embeddings")
    assert build("ollama", model="mxbai-embed-large:latest").dimensions == 1024


def test_unknown_remote_model_needs_dimensions() -> None:
    with pytest.raises(ValueError, match=r"set embedding\.dimensions"):
        build("ollama", model="my-custom-embedder")
    assert build("ollama", model="my-custom-embedder", dimensions=512).dimensions == 512
    with pytest.raises(ValueError, match=r"set embedding\.model"):
        build("llama-cpp")


def test_bad_numbers_are_refused() -> None:
    with pytest.raises(ValueError, match="timeout"):
        build("ollama", timeout_s=0)
    with pytest.raises(ValueError, match="dimensions"):
        build("ollama", dimensions=-1)


def test_openai_shortened_width_is_requested(fake_server: FakeEmbedServer) -> None:
    embedder = build(
        "openai", base_url=fake_server.url + "/v1", dimensions=8, model="text-embedding-3-small"
    )
    with embedder:
        assert embedder.embed(["x"]).shape == (1, 8)
    assert fake_server.requests[0].body["dimensions"] == 8
