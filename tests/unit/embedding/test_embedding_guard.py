"""Every embedder refuses to run inside a SQLite write transaction."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from embedding_fakes import FakeEmbedServer

from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.embedding.native import NativeMiniLM
from signet_desktop.embedding.provider import EmbeddingProvider
from signet_desktop.embedding.remote import (
    LlamaCppEmbedder,
    OllamaEmbedder,
    OpenAICompatibleEmbedder,
)
from signet_desktop.storage.guard import ProviderCallInWriteTransaction, write_transaction_mark

MAKERS: dict[str, Callable[[str], EmbeddingProvider]] = {
    "ollama": lambda url: OllamaEmbedder(url, "m", 8),
    "openai": lambda url: OpenAICompatibleEmbedder(url, "m", 8, api_key="k"),
    "llama-cpp": lambda url: LlamaCppEmbedder(url, "m", 8),
    "hash": lambda url: HashEmbedder(8),
}


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_provider_refuses_inside_write_transaction(name: str, fake_server: FakeEmbedServer) -> None:
    embedder = MAKERS[name](fake_server.url)
    assert embedder.name == name
    with (
        write_transaction_mark(),
        pytest.raises(ProviderCallInWriteTransaction, match=f"embedding:{name}"),
    ):
        embedder.embed(["text"])
    assert fake_server.requests == []
    # Outside the transaction the same call works.
    assert embedder.embed(["text"]).shape == (1, 8)
    close = getattr(embedder, "close", None)
    if close is not None:
        close()


def test_native_refuses_before_loading_anything() -> None:
    embedder = NativeMiniLM()
    with (
        write_transaction_mark(),
        pytest.raises(ProviderCallInWriteTransaction, match="embedding:native"),
    ):
        embedder.embed(["text"])
    assert not embedder.is_loaded


def test_even_an_empty_batch_is_refused() -> None:
    with write_transaction_mark(), pytest.raises(ProviderCallInWriteTransaction):
        HashEmbedder(8).embed([])
