"""The agent.yaml models: defaults from the spec, ranges, aliases, frozenness, secrets."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import SecretStr, ValidationError

from signet_desktop.config.models import (
    AuthConfig,
    DreamingConfig,
    EmbeddingConfig,
    InferenceConfig,
    SearchConfig,
    SignetConfig,
)
from signet_desktop.config.pipeline import DocumentsConfig, PipelineV2Config, WorkerConfig


def test_dreaming_defaults_are_the_spec_defaults() -> None:
    dreaming = SignetConfig().memory.dreaming
    assert dreaming.enabled is False
    assert dreaming.token_threshold == 100_000
    assert dreaming.max_interval_ms == 6 * 60 * 60 * 1000
    assert dreaming.timeout_ms == 20 * 60 * 1000
    assert dreaming.max_input_tokens == 128_000
    assert dreaming.max_output_tokens == 16_000
    assert dreaming.backfill_on_first_run is True


def test_pipeline_defaults_follow_signet() -> None:
    pipeline = SignetConfig().memory.pipeline_v2
    assert pipeline.documents.worker_interval_ms == 10_000
    assert pipeline.documents.chunk_size == 2000
    assert (pipeline.documents.chunk_tokens, pipeline.documents.chunk_overlap_tokens) == (256, 32)
    assert pipeline.documents.chunk_overlap == 200
    assert pipeline.documents.max_content_bytes == 10_485_760
    assert pipeline.worker.poll_ms == 2000
    assert pipeline.worker.max_retries == 3
    assert pipeline.worker.lease_timeout_ms == 300_000
    assert pipeline.embedding_tracker.poll_ms == 5000
    assert pipeline.embedding_tracker.batch_size == 8
    assert pipeline.hints.max == 5
    assert pipeline.guardrails.recall_truncate_chars == 500


def test_pipeline_has_no_extraction_runtime() -> None:
    enabled = PipelineV2Config(enabled=True)
    assert "extraction" not in PipelineV2Config.model_fields
    assert not any("extraction" in name.lower() for name in PipelineV2Config.model_fields)
    assert "extraction" not in enabled.model_dump(by_alias=True)


def test_search_and_embedding_defaults() -> None:
    config = SignetConfig()
    assert config.search.alpha == 0.5
    assert config.search.top_k == 50
    assert config.search.min_score == 0.01  # only no-evidence candidates; weak hits are marked
    assert config.search.vector_fallback_window == 10_000
    assert (config.search.who_boost, config.search.session_weight) == (0.15, 0.25)
    assert config.embedding.provider == "native"
    assert config.embedding.model == "all-MiniLM-L6-v2"
    assert config.embedding.dimensions == 384
    assert config.embedding.precision == "int8"  # the native graph; float32 stays selectable
    assert config.embedding.timeout_ms == 10_000
    assert config.embedding.batch_size == 32
    assert config.auth.mode == "local"
    assert config.inference.targets == {}


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (SearchConfig, {"alpha": -0.1}),
        (SearchConfig, {"alpha": 1.01}),
        (SearchConfig, {"vector_fallback_window": 99}),
        (SearchConfig, {"top_k": 0}),
        (DreamingConfig, {"tokenThreshold": 9_999}),
        (DreamingConfig, {"tokenThreshold": 1_000_001}),
        (DreamingConfig, {"timeoutMs": 1000}),
        (DocumentsConfig, {"chunkSize": 199}),
        (DocumentsConfig, {"chunkSize": 50_001}),
        (DocumentsConfig, {"chunkOverlap": 10_001, "chunkSize": 50_000}),
        (DocumentsConfig, {"chunkOverlap": -1}),
        (DocumentsConfig, {"chunkOverlap": 2000, "chunkSize": 2000}),
        (DocumentsConfig, {"chunkTokens": 257}),  # beyond the embedder's window
        (DocumentsConfig, {"chunkTokens": 31}),
        (DocumentsConfig, {"chunkOverlapTokens": -1}),
        (DocumentsConfig, {"chunkTokens": 64, "chunkOverlapTokens": 62}),
        (WorkerConfig, {"leaseTimeoutMs": 9_999}),
        (WorkerConfig, {"leaseTimeoutMs": 600_001}),
        (EmbeddingConfig, {"dimensions": 0}),
        (EmbeddingConfig, {"provider": "sentence-transformers"}),
    ],
)
def test_out_of_range_values_are_rejected(model: Any, data: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        model.model_validate(data)


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (SearchConfig, {"alpha": 0.0, "vector_fallback_window": 100}),
        (SearchConfig, {"alpha": 1.0}),
        (DreamingConfig, {"tokenThreshold": 10_000}),
        (DreamingConfig, {"tokenThreshold": 1_000_000}),
        (DocumentsConfig, {"chunkSize": 200, "chunkOverlap": 0}),
        (DocumentsConfig, {"chunkSize": 50_000, "chunkOverlap": 10_000}),
        (DocumentsConfig, {"chunkTokens": 256, "chunkOverlapTokens": 253}),
        (DocumentsConfig, {"chunkTokens": 32, "chunkOverlapTokens": 0}),
        (WorkerConfig, {"leaseTimeoutMs": 10_000}),
        (WorkerConfig, {"leaseTimeoutMs": 600_000}),
    ],
)
def test_range_bounds_are_inclusive(model: Any, data: dict[str, object]) -> None:
    model.model_validate(data)


@pytest.mark.parametrize("value", ["local", "LOCAL", " native ", "native"])
def test_local_is_an_alias_for_native(value: str) -> None:
    assert EmbeddingConfig.model_validate({"provider": value}).provider == "native"


def test_embedding_endpoint_alias_and_default_urls() -> None:
    assert EmbeddingConfig.model_validate({"endpoint": "http://h:1"}).base_url == "http://h:1"
    ollama = EmbeddingConfig.model_validate({"provider": "ollama"})
    assert ollama.effective_base_url() == "http://localhost:11434"
    assert EmbeddingConfig().effective_base_url() is None


def test_camel_case_yaml_keys_and_snake_case_attributes() -> None:
    pipeline = PipelineV2Config.model_validate(
        {"embeddingTracker": {"pollMs": 1500}, "worker": {"leaseTimeoutMs": 20_000}}
    )
    assert pipeline.embedding_tracker.poll_ms == 1500
    assert pipeline.worker.lease_timeout_ms == 20_000
    dumped = SignetConfig().model_dump(by_alias=True)
    assert "pipelineV2" in dumped["memory"]
    assert "top_k" in dumped["search"]
    assert "promptSubmitTimeoutMs" in dumped["embedding"]


def test_dreaming_accepts_signets_timeout_key() -> None:
    assert DreamingConfig.model_validate({"timeout": 60_000}).timeout_ms == 60_000


def test_models_are_frozen() -> None:
    config = SignetConfig()
    with pytest.raises(ValidationError):
        config.search.alpha = 0.5


def test_secrets_never_appear_in_repr_or_str() -> None:
    embedding = EmbeddingConfig(api_key=SecretStr("sk-very-secret"))
    auth = AuthConfig(token=SecretStr("tok-very-secret"))
    inference = InferenceConfig.model_validate(
        {"accounts": {"a": {"provider": "openai", "apiKey": "sk-account-secret"}}}
    )
    config = SignetConfig(embedding=embedding, auth=auth, inference=inference)
    for text in (repr(config), str(config), repr(embedding), str(auth), repr(inference)):
        assert "very-secret" not in text
        assert "account-secret" not in text
    assert embedding.api_key is not None
    assert embedding.api_key.get_secret_value() == "sk-very-secret"


def test_removed_executors_name_their_replacement() -> None:
    with pytest.raises(ValidationError, match="acpx"):
        InferenceConfig.model_validate({"targets": {"t": {"executor": "codex"}}})
    target = InferenceConfig.model_validate(
        {"targets": {"t": {"executor": "openai-compatible", "extraKnob": 3}}}
    ).targets["t"]
    assert target.executor == "openai-compatible"


def test_auth_rate_limits_merge_with_defaults() -> None:
    auth = AuthConfig.model_validate({"rateLimits": {"forceDelete": {"max": 1}}})
    assert auth.rate_limits.by_name()["forceDelete"].max == 1
    assert auth.rate_limits.forget.max == 30
    assert AuthConfig().rate_limits.modify.window_ms == 60_000
