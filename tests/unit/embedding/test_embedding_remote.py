"""Remote embedders against a real loopback server speaking each wire format."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from embedding_fakes import FakeEmbedServer, Reply, Seen

from signet_desktop.embedding.provider import (
    EmbeddingDimensionMismatch,
    EmbeddingError,
    EmbeddingUnavailable,
)
from signet_desktop.embedding.remote import (
    LlamaCppEmbedder,
    OllamaEmbedder,
    OpenAICompatibleEmbedder,
    _HttpEmbedder,
)

SECRET = "sk-test-SECRET-value-1234567890"

Factory = Callable[..., _HttpEmbedder]
_OPEN: list[_HttpEmbedder] = []


@pytest.fixture(autouse=True)
def _close_embedders() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def _track(embedder: _HttpEmbedder) -> _HttpEmbedder:
    _OPEN.append(embedder)
    return embedder


def ollama(url: str, dims: int = 8, **kw: Any) -> _HttpEmbedder:
    args = {"backoff_s": 0.01, **kw}
    return _track(OllamaEmbedder(url, "nomic-embed-text", dims, **args))


def openai(url: str, dims: int = 8, **kw: Any) -> _HttpEmbedder:
    args = {"api_key": SECRET, "backoff_s": 0.01, **kw}
    return _track(OpenAICompatibleEmbedder(url + "/v1", "text-embedding-3-small", dims, **args))


def llamacpp(url: str, dims: int = 8, **kw: Any) -> _HttpEmbedder:
    args = {"backoff_s": 0.01, **kw}
    return _track(LlamaCppEmbedder(url, "nomic-embed-text-v1.5", dims, **args))


def llamacpp_native(url: str, dims: int = 8, **kw: object) -> _HttpEmbedder:
    return llamacpp(url, dims, wire="native", **kw)


ALL = pytest.mark.parametrize(
    "make",
    [ollama, openai, llamacpp, llamacpp_native],
    ids=["ollama", "openai", "llamacpp", "llamacpp-native"],
)
EXPECTED_PATH = {
    "ollama": "/api/embed",
    "openai": "/v1/embeddings",
    "llamacpp": "/v1/embeddings",
    "llamacpp-native": "/embedding",
}


def texts_of(seen: Seen) -> list[str]:
    body = seen.body
    assert isinstance(body, dict)
    return list(body.get("input") or body.get("content") or [])


def bad_vectors(
    server: FakeEmbedServer, rows: Callable[[list[str]], list[list[float]]]
) -> Callable[[Seen], Reply]:
    """A reply in the request's own wire format whose vectors come from `rows`."""

    def reply(seen: Seen) -> Reply:
        good = server.real_reply(seen).body
        vectors = rows(texts_of(seen))
        if seen.path == "/api/embed":
            good["embeddings"] = vectors
        elif seen.path == "/embedding":
            good = [{"index": i, "embedding": [v]} for i, v in enumerate(vectors)]
        else:
            good["data"] = [
                {"index": i, "embedding": v, "object": "embedding"} for i, v in enumerate(vectors)
            ]
        return Reply(body=good)

    return reply


@ALL
def test_embeds_in_the_real_wire_format(
    make: Factory, fake_server: FakeEmbedServer, request: pytest.FixtureRequest
) -> None:
    embedder = make(fake_server.url)
    texts = ["user likes dark mode", "the build uses uv", "dark mode everywhere"]
    out = embedder.embed(texts)
    assert out.shape == (3, 8) and out.dtype == np.float32
    np.testing.assert_allclose(out, np.array(fake_server.vectors(texts)), atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)
    (seen,) = fake_server.requests
    assert seen.path == EXPECTED_PATH[request.node.callspec.id]
    assert texts_of(seen) == texts


def test_request_bodies_carry_model_and_auth(fake_server: FakeEmbedServer) -> None:
    ollama(fake_server.url).embed(["a"])
    openai(fake_server.url).embed(["b"])
    llamacpp(fake_server.url).embed(["c"])
    o, oa, lc = fake_server.requests
    assert o.body == {"model": "nomic-embed-text", "input": ["a"], "truncate": True}
    assert oa.body == {
        "model": "text-embedding-3-small",
        "input": ["b"],
        "encoding_format": "float",
    }
    assert oa.headers["authorization"] == f"Bearer {SECRET}"
    assert "authorization" not in o.headers
    assert lc.body["input"] == ["c"]


def test_openai_can_request_shortened_dimensions(fake_server: FakeEmbedServer) -> None:
    openai(fake_server.url, request_dimensions=True).embed(["x"])
    assert fake_server.requests[0].body["dimensions"] == 8


@ALL
def test_batches_preserve_order(make: Factory, fake_server: FakeEmbedServer) -> None:
    texts = [f"text number {i}" for i in range(7)]
    out = make(fake_server.url, batch_size=3).embed(texts)
    assert len(fake_server.requests) == 3
    assert [len(texts_of(s)) for s in fake_server.requests] == [3, 3, 1]
    np.testing.assert_allclose(out, np.array(fake_server.vectors(texts)), atol=1e-6)


def test_openai_data_is_put_back_in_index_order(fake_server: FakeEmbedServer) -> None:
    def shuffled(seen: Seen) -> Reply:
        body = fake_server.real_reply(seen).body
        body["data"] = list(reversed(body["data"]))
        return Reply(body=body)

    fake_server.script.append(shuffled)
    texts = ["first", "second", "third"]
    out = openai(fake_server.url).embed(texts)
    np.testing.assert_allclose(out, np.array(fake_server.vectors(texts)), atol=1e-6)


@ALL
def test_empty_inputs(make: Factory, fake_server: FakeEmbedServer) -> None:
    embedder = make(fake_server.url)
    assert embedder.embed([]).shape == (0, 8)
    assert fake_server.requests == []
    out = embedder.embed(["", "   ", "real text"])
    assert out.shape == (3, 8)
    assert texts_of(fake_server.requests[0]) == [" ", " ", "real text"]


@ALL
def test_wrong_dimension_is_rejected(make: Factory, fake_server: FakeEmbedServer) -> None:
    fake_server.script.append(bad_vectors(fake_server, lambda t: [[0.5] * 12 for _ in t]))
    with pytest.raises(EmbeddingDimensionMismatch, match="12 dimensions, expected 8"):
        make(fake_server.url).embed(["a", "b"])


@ALL
def test_one_short_vector_fails_the_whole_batch(
    make: Factory, fake_server: FakeEmbedServer
) -> None:
    fake_server.script.append(bad_vectors(fake_server, lambda t: [[0.5] * 8, [0.5] * 7]))
    with pytest.raises(EmbeddingDimensionMismatch):
        make(fake_server.url).embed(["a", "b"])


@ALL
def test_nan_vectors_are_rejected(make: Factory, fake_server: FakeEmbedServer) -> None:
    fake_server.script.append(
        bad_vectors(fake_server, lambda t: [[float("nan")] + [0.1] * 7 for _ in t])
    )
    with pytest.raises(EmbeddingError, match="NaN"):
        make(fake_server.url).embed(["a"])


@ALL
def test_empty_vectors_are_rejected(make: Factory, fake_server: FakeEmbedServer) -> None:
    fake_server.script.append(bad_vectors(fake_server, lambda t: [[] for _ in t]))
    with pytest.raises(EmbeddingError, match="empty"):
        make(fake_server.url).embed(["a"])


@ALL
def test_wrong_vector_count_is_rejected(make: Factory, fake_server: FakeEmbedServer) -> None:
    fake_server.script.append(bad_vectors(fake_server, lambda t: [[0.5] * 8]))
    with pytest.raises(EmbeddingError, match="expected 2 vectors"):
        make(fake_server.url).embed(["a", "b"])


@ALL
def test_server_error_is_retried_then_succeeds(make: Factory, fake_server: FakeEmbedServer) -> None:
    fake_server.script.append(Reply(status=500, body={"error": "model is loading"}))
    out = make(fake_server.url).embed(["a"])
    assert out.shape == (1, 8)
    assert len(fake_server.requests) == 2


def test_rate_limit_is_retried_honouring_retry_after(fake_server: FakeEmbedServer) -> None:
    fake_server.script.append(
        Reply(status=429, body={"error": {"message": "slow down"}}, headers={"Retry-After": "0"})
    )
    assert openai(fake_server.url).embed(["a"]).shape == (1, 8)
    assert len(fake_server.requests) == 2


@ALL
def test_persistent_outage_gives_unavailable_after_bounded_retries(
    make: Factory, fake_server: FakeEmbedServer
) -> None:
    fake_server.script.extend(Reply(status=503, body={"error": "busy"}) for _ in range(10))
    with pytest.raises(EmbeddingUnavailable, match=r"after 3 attempts: HTTP 503: busy"):
        make(fake_server.url, retries=2).embed(["a"])
    assert len(fake_server.requests) == 3


@ALL
def test_client_errors_are_not_retried(make: Factory, fake_server: FakeEmbedServer) -> None:
    fake_server.script.append(
        Reply(status=404, body={"error": 'model "x" not found, try pulling it first'})
    )
    with pytest.raises(EmbeddingError, match="not found") as info:
        make(fake_server.url).embed(["a"])
    assert not isinstance(info.value, EmbeddingUnavailable)
    assert len(fake_server.requests) == 1


def test_llamacpp_without_embeddings_flag_is_not_retried(fake_server: FakeEmbedServer) -> None:
    fake_server.script.append(
        Reply(
            status=501,
            body={
                "error": {
                    "code": 501,
                    "message": (
                        "This server does not support embeddings. Start it with `--embeddings`"
                    ),
                    "type": "not_supported_error",
                }
            },
        )
    )
    with pytest.raises(EmbeddingError, match="--embeddings"):
        llamacpp(fake_server.url).embed(["a"])
    assert len(fake_server.requests) == 1


@ALL
def test_slow_server_times_out_as_unavailable(make: Factory, fake_server: FakeEmbedServer) -> None:
    slow_s = 4.0
    fake_server.script.extend(Reply(delay_s=slow_s, body={}) for _ in range(2))
    started = time.monotonic()
    with pytest.raises(EmbeddingUnavailable, match="timed out"):
        make(fake_server.url, timeout_s=0.2, retries=1).embed(["a"])
    # Both attempts gave up at 0.2 s: together less than one slow reply (1.7 s at load 30).
    assert time.monotonic() - started < slow_s
    assert len(fake_server.requests) == 2


@ALL
def test_down_server_is_unavailable(make: Factory, closed_port_url: str) -> None:
    started = time.monotonic()
    with pytest.raises(EmbeddingUnavailable, match="connection failed") as info:
        make(closed_port_url, retries=1).embed(["a"])
    assert time.monotonic() - started < 5
    assert closed_port_url in str(info.value)


def test_body_that_is_not_json_is_an_error(fake_server: FakeEmbedServer) -> None:
    fake_server.script.append(Reply(body=b"<html>proxy error</html>"))
    with pytest.raises(EmbeddingError, match="not JSON"):
        ollama(fake_server.url).embed(["a"])


def test_llamacpp_native_legacy_and_per_token_shapes(fake_server: FakeEmbedServer) -> None:
    vec = fake_server.vectors(["a"])[0]
    fake_server.script.append(Reply(body={"embedding": vec}))
    out = llamacpp_native(fake_server.url).embed(["a"])
    np.testing.assert_allclose(out[0], vec, atol=1e-6)
    fake_server.script.append(Reply(body=[{"index": 0, "embedding": [vec, vec]}]))
    with pytest.raises(EmbeddingError, match="--pooling"):
        llamacpp_native(fake_server.url).embed(["a"])


def test_llamacpp_cuts_overlong_inputs(fake_server: FakeEmbedServer) -> None:
    llamacpp(fake_server.url, max_input_chars=10).embed(["x" * 50])
    assert texts_of(fake_server.requests[0]) == ["x" * 10]


def test_api_key_never_appears_in_errors_logs_or_repr(
    fake_server: FakeEmbedServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake_server.script.append(
        Reply(status=401, body={"error": {"message": f"Incorrect API key provided: {SECRET}"}})
    )
    fake_server.script.extend(Reply(status=500, body={"error": f"echo {SECRET}"}) for _ in range(3))
    embedder = openai(fake_server.url, retries=2)
    messages = [repr(embedder)]
    for _ in range(2):
        with pytest.raises(EmbeddingError) as info:
            embedder.embed(["a"])
        messages.append(str(info.value))
    assert "***" in messages[1]
    assert all(SECRET not in m for m in messages)
    assert "retry 1" in caplog.text  # the retries were logged ...
    assert SECRET not in caplog.text  # ... without the key
    assert fake_server.requests[0].headers["authorization"] == f"Bearer {SECRET}"


def test_credentials_in_base_url_are_not_shown(closed_port_url: str) -> None:
    url = closed_port_url.replace("http://", "http://user:hunter2@") + "/v1"
    embedder = _track(OpenAICompatibleEmbedder(url, "m", 8, retries=0))
    with pytest.raises(EmbeddingUnavailable) as info:
        embedder.embed(["a"])
    assert "hunter2" not in str(info.value) and "hunter2" not in repr(embedder)


@pytest.mark.parametrize(
    ("base", "path"),
    [
        ("http://h:1/v1", "http://h:1/v1/embeddings"),
        ("http://h:1/v1/", "http://h:1/v1/embeddings"),
        ("http://h:1", "http://h:1/v1/embeddings"),
        ("https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1/embeddings"),
    ],
)
def test_openai_url_building(base: str, path: str) -> None:
    assert OpenAICompatibleEmbedder(base, "m", 8).url == path


def test_llamacpp_url_building() -> None:
    assert LlamaCppEmbedder("http://h:8080/v1", "m", 8).url == "http://h:8080/v1/embeddings"
    assert (
        LlamaCppEmbedder("http://h:8080/", "m", 8, wire="native").url == "http://h:8080/embedding"
    )


def test_bad_constructor_arguments() -> None:
    with pytest.raises(ValueError, match="http"):
        OllamaEmbedder("localhost:11434", "m", 8)
    with pytest.raises(ValueError, match="dimensions"):
        OllamaEmbedder("http://h", "m", 0)
    with pytest.raises(ValueError, match="timeout"):
        OllamaEmbedder("http://h", "m", 8, timeout_s=0)
