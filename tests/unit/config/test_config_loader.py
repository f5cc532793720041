"""Loading agent.yaml: defaults, bad YAML, retired/ignored/unknown keys, located messages."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from signet_desktop.config.loader import ConfigError, load_config, parse_config_text
from signet_desktop.config.workspace import WorkspacePaths

EXTRACTION_REASON = (
    "is retired: semantic extraction was replaced by Dreaming; configure the model under "
    "inference.workloads (memoryExtraction)"
)


def _error(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        parse_config_text(text)
    return caught.value


# --- files -------------------------------------------------------------------------------


def test_missing_file_gives_defaults(tmp_path: Path) -> None:
    loaded = load_config(WorkspacePaths.for_root(tmp_path))
    assert loaded.path is None
    assert loaded.config.search.alpha == 0.5
    assert loaded.ignored_keys == () and loaded.warnings == ()


@pytest.mark.parametrize("text", ["", "\n\n", "# just a comment\n", "---\n", "~\n"])
def test_empty_file_gives_defaults(tmp_path: Path, text: str) -> None:
    (tmp_path / "agent.yaml").write_text(text)
    loaded = load_config(WorkspacePaths.for_root(tmp_path))
    assert loaded.path == tmp_path / "agent.yaml"
    assert loaded.config.memory.dreaming.token_threshold == 100_000


def test_values_from_file_are_applied(tmp_path: Path) -> None:
    (tmp_path / "AGENT.yaml").write_text("search:\n  alpha: 0.4\n  top_k: 7\n")
    loaded = load_config(WorkspacePaths.for_root(tmp_path))
    assert loaded.path == tmp_path / "AGENT.yaml"
    assert (loaded.config.search.alpha, loaded.config.search.top_k) == (0.4, 7)


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_bytes("\ufeffsearch:\n  top_k: 5\n".encode())
    assert load_config(WorkspacePaths.for_root(tmp_path)).config.search.top_k == 5


def test_non_utf8_file_is_an_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_bytes(b"search:\n  alpha: \xff\xfe\n")
    with pytest.raises(ConfigError, match=r"agent\.yaml: the config file is not UTF-8"):
        load_config(WorkspacePaths.for_root(tmp_path))


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read unreadable files")
def test_unreadable_file_is_an_error(tmp_path: Path) -> None:
    file = tmp_path / "agent.yaml"
    file.write_text("search: {}\n")
    file.chmod(0)
    try:
        with pytest.raises(ConfigError, match="cannot read the config file"):
            load_config(WorkspacePaths.for_root(tmp_path))
    finally:
        file.chmod(0o600)


def test_file_errors_name_the_full_path(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text("search:\n  alpha: [\n")
    with pytest.raises(ConfigError) as caught:
        load_config(WorkspacePaths.for_root(tmp_path))
    assert str(caught.value).startswith(f"{tmp_path / 'agent.yaml'}:")


# --- malformed YAML and wrong shapes ------------------------------------------------------


def test_corrupt_yaml_names_line_and_column() -> None:
    error = _error("search:\n  alpha: 0.7\n  top_k: : 3\n")
    assert str(error).startswith("agent.yaml:3:")
    assert "invalid YAML" in str(error)


def test_bad_indentation_names_the_line() -> None:
    assert str(_error("search:\n    alpha: 0.7\n  top_k: 3\n")).startswith("agent.yaml:3:3:")


def test_unclosed_flow_and_tabs_are_errors() -> None:
    assert "invalid YAML" in str(_error("search: {alpha: 0.7\n"))
    assert str(_error("search:\n\talpha: 0.7\n")).startswith("agent.yaml:2:1:")


def test_duplicate_keys_are_an_error_not_last_one_wins() -> None:
    error = _error("search:\n  alpha: 0.2\n  alpha: 0.9\n")
    assert str(error) == "agent.yaml:3:3: invalid YAML: duplicate key 'search.alpha'"


def test_python_tags_are_refused() -> None:
    assert "invalid YAML" in str(_error("search: !!python/object/apply:os.system [ls]\n"))


@pytest.mark.parametrize(
    ("text", "found"), [("- a\n- b\n", "list"), ("just words\n", "str"), ("42\n", "int")]
)
def test_non_mapping_top_level_is_an_error(text: str, found: str) -> None:
    error = _error(text)
    assert "top level must be a mapping" in str(error)
    assert found in str(error)


def test_section_that_is_not_a_mapping_names_its_path() -> None:
    assert str(_error("memory:\n  pipelineV2: 5\n")) == (
        "agent.yaml:2:3: memory.pipelineV2 must be a mapping (found int)"
    )


def test_wrong_type_names_key_path_line_and_value() -> None:
    error = _error("search:\n  top_k: lots\n")
    assert str(error).startswith("agent.yaml:2:3: search.top_k: should be a valid integer")
    assert "(got 'lots')" in str(error)
    assert error.key_paths == ("search.top_k",)


def test_range_error_in_camel_case_section() -> None:
    error = _error("memory:\n  pipelineV2:\n    worker:\n      leaseTimeoutMs: 5\n")
    assert "agent.yaml:4:7: memory.pipelineV2.worker.leaseTimeoutMs" in str(error)
    assert "greater than or equal to 10000" in str(error)


def test_several_problems_are_reported_together_in_file_order() -> None:
    error = _error("search:\n  top_k: x\nembedding:\n  dimensions: -1\n")
    message = str(error)
    assert message.startswith("2 problems: ")
    assert message.index("search.top_k") < message.index("embedding.dimensions")


def test_secret_values_are_not_echoed_in_errors() -> None:
    error = _error("embedding:\n  api_key: [sk-123456]\nauth:\n  token: {x: tok-98765}\n")
    assert "123456" not in str(error) and "98765" not in str(error)
    assert "embedding.api_key" in str(error) and "auth.token" in str(error)


def test_empty_sections_mean_defaults() -> None:
    loaded = parse_config_text("search:\nmemory:\n  pipelineV2:\n  dreaming:\n")
    assert loaded.config.search.top_k == 50
    assert loaded.config.memory.dreaming.enabled is False


# --- retired keys ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "leaf", ["provider", "model", "command", "endpoint", "base_url", "fallbackProvider"]
)
def test_legacy_extraction_settings_are_retired(leaf: str) -> None:
    text = f"memory:\n  pipelineV2:\n    enabled: true\n    extraction:\n      {leaf}: x\n"
    error = _error(text)
    assert str(error) == f"agent.yaml:5:7: memory.pipelineV2.extraction.{leaf} {EXTRACTION_REASON}"
    assert error.key_paths == (f"memory.pipelineV2.extraction.{leaf}",)


@pytest.mark.parametrize(
    "key", ["extractionProvider", "extractionModel", "extractionStrength", "extractionEndpoint"]
)
def test_flat_extraction_settings_are_retired(key: str) -> None:
    error = _error(f"memory:\n  pipelineV2:\n    {key}: ollama\n")
    assert f"memory.pipelineV2.{key} {EXTRACTION_REASON}" in str(error)


@pytest.mark.parametrize("leaf", ["provider", "model", "endpoint", "command"])
def test_legacy_synthesis_provider_settings_are_retired(leaf: str) -> None:
    error = _error(f"memory:\n  pipelineV2:\n    synthesis:\n      {leaf}: ollama\n")
    assert f"memory.pipelineV2.synthesis.{leaf} is retired" in str(error)
    assert "inference.workloads (sessionSynthesis)" in str(error)


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("    writeGate:\n      threshold: 0.4\n", "memory.pipelineV2.writeGate"),
        ("    writeGate: {}\n", "memory.pipelineV2.writeGate"),
        ("    writeGateThreshold: 0.4\n", "memory.pipelineV2.writeGateThreshold"),
        ("    writeGateEnabled: false\n", "memory.pipelineV2.writeGateEnabled"),
    ],
)
def test_write_gate_settings_are_retired(text: str, path: str) -> None:
    error = _error("memory:\n  pipelineV2:\n" + text)
    assert str(error).startswith(f"agent.yaml:3:5: {path} is retired: there is no write gate")


def test_durability_settings_are_retired() -> None:
    error = _error("memory:\n  pipelineV2:\n    durability:\n      enabled: true\n")
    assert "memory.pipelineV2.durability is retired: there are no durability modes" in str(error)


def test_signets_documented_example_is_rejected_for_its_extraction_block() -> None:
    text = (
        "embedding:\n  provider: ollama\n  model: nomic-embed-text\n  dimensions: 768\n"
        "memory:\n  pipelineV2:\n    enabled: true\n    shadowMode: false\n"
        "    extraction:\n      provider: ollama\n      model: qwen3:4b\n"
        "    synthesis:\n      enabled: true\n      provider: ollama\n      model: qwen3:4b\n"
    )
    error = _error(text)
    assert str(error).startswith("4 problems: agent.yaml:10:7: memory.pipelineV2.extraction")
    assert error.key_paths == (
        "memory.pipelineV2.extraction.provider",
        "memory.pipelineV2.extraction.model",
        "memory.pipelineV2.synthesis.provider",
        "memory.pipelineV2.synthesis.model",
    )


# --- ignored, unknown and relocated keys --------------------------------------------------------


def test_enabling_pipeline_with_leftover_extraction_keys_restores_nothing() -> None:
    text = (
        "memory:\n  pipelineV2:\n    enabled: true\n"
        "    extraction:\n      strength: high\n      minConfidence: 0.5\n"
    )
    loaded = parse_config_text(text)
    assert loaded.config.memory.pipeline_v2.enabled is True
    assert loaded.ignored_keys == (
        "memory.pipelineV2.extraction.strength",
        "memory.pipelineV2.extraction.minConfidence",
    )
    assert not hasattr(loaded.config.memory.pipeline_v2, "extraction")


def test_known_signet_keys_we_do_not_implement_are_listed_as_ignored() -> None:
    text = (
        "version: 1\nschema: signet/v1\nagent:\n  name: Rose\n  description: helper\n"
        "harnesses: [claude-code]\ngit:\n  autoCommit: true\nskills: []\n"
        "memory:\n  database: memory/memories.db\n  pipelineV2:\n"
        "    autonomous:\n      enabled: true\n    continuity: {enabled: true}\n"
        "    graph:\n      extractionWritesEnabled: true\n"
    )
    loaded = parse_config_text(text)
    assert loaded.ignored_keys == (
        "version",
        "schema",
        "agent",
        "harnesses",
        "git",
        "skills",
        "memory.database",
        "memory.pipelineV2.autonomous",
        "memory.pipelineV2.continuity",
        "memory.pipelineV2.graph.extractionWritesEnabled",
    )
    assert loaded.warnings == ()


def test_signets_recall_boosts_we_do_not_apply_are_listed_not_silently_taken() -> None:
    text = "search:\n  alpha: 0.6\n  rehearsal_enabled: true\n  temporal_prior_weight: 0.2\n"
    loaded = parse_config_text(text)
    assert loaded.config.search.alpha == 0.6
    assert loaded.ignored_keys == ("search.rehearsal_enabled", "search.temporal_prior_weight")
    assert not hasattr(loaded.config.search, "rehearsal_enabled")


@pytest.mark.parametrize(
    ("text", "warning"),
    [
        ("search:\n  alpah: 0.3\n", "unknown key 'search.alpah' (did you mean 'search.alpha'?)"),
        ("serch:\n  alpha: 0.3\n", "unknown key 'serch' (did you mean 'search'?)"),
        (
            "memory:\n  pipelineV2:\n    workr: {}\n",
            "unknown key 'memory.pipelineV2.workr' (did you mean 'memory.pipelineV2.worker'?)",
        ),
        (
            "memory:\n  pipelineV2:\n    worker:\n      poll_ms: 100\n",
            "unknown key 'memory.pipelineV2.worker.poll_ms' "
            "(did you mean 'memory.pipelineV2.worker.pollMs'?)",
        ),
        ("harneses: []\n", "unknown key 'harneses' (did you mean 'harnesses'?)"),
        ("zzz: 1\n", "unknown key 'zzz' (ignored)"),
    ],
)
def test_unknown_keys_warn_with_did_you_mean(text: str, warning: str) -> None:
    loaded = parse_config_text(text)
    assert loaded.warnings == (warning,)
    assert loaded.config.search.alpha == 0.5  # the misspelt value was not applied


def test_unknown_keys_do_not_block_the_rest() -> None:
    loaded = parse_config_text("search:\n  alpah: 0.3\n  top_k: 9\n")
    assert loaded.config.search.top_k == 9


def test_old_flat_pipeline_keys_are_read_into_nested_ones() -> None:
    loaded = parse_config_text("memory:\n  pipelineV2:\n    workerPollMs: 700\n")
    assert loaded.config.memory.pipeline_v2.worker.poll_ms == 700
    assert loaded.warnings == (
        "'memory.pipelineV2.workerPollMs' is an old key; "
        "it is read as 'memory.pipelineV2.worker.pollMs'",
    )


def test_nested_key_wins_over_old_flat_key() -> None:
    text = (
        "memory:\n  pipelineV2:\n    documentChunkSize: 900\n    documents:\n      chunkSize: 800\n"
    )
    loaded = parse_config_text(text)
    assert loaded.config.memory.pipeline_v2.documents.chunk_size == 800
    assert "'memory.pipelineV2.documentChunkSize' is ignored because" in loaded.warnings[0]


def test_relocated_keys_keep_their_line_in_errors() -> None:
    error = _error("memory:\n  pipelineV2:\n    leaseTimeoutMs: 1\n")
    assert str(error).startswith("agent.yaml:3:5: memory.pipelineV2.worker.leaseTimeoutMs")


def test_embeddings_section_is_read_as_embedding() -> None:
    loaded = parse_config_text("embeddings:\n  provider: local\n  model: m\n")
    assert (loaded.config.embedding.provider, loaded.config.embedding.model) == ("native", "m")


def test_inference_entries_keep_unknown_keys_and_reject_removed_executors() -> None:
    text = (
        "inference:\n  targets:\n    big:\n      executor: anthropic\n      pricing: {in: 3}\n"
        "  workloads:\n    memoryExtraction: background\n"
    )
    loaded = parse_config_text(text)
    assert loaded.warnings == ()
    assert loaded.config.inference.targets["big"].executor == "anthropic"
    binding = loaded.config.inference.workloads.memory_extraction
    assert binding is not None and binding.policy == "background"
    error = _error("inference:\n  targets:\n    h:\n      executor: claude-code\n")
    assert str(error).startswith("agent.yaml:4:7: inference.targets.h.executor: executor")
    assert "acpx" in str(error)


def test_inference_workloads_misspelling_warns() -> None:
    loaded = parse_config_text("inference:\n  workloads:\n    memoryExtration: p\n")
    assert loaded.warnings == (
        "unknown key 'inference.workloads.memoryExtration' "
        "(did you mean 'inference.workloads.memoryExtraction'?)",
    )


def test_read_failure_is_a_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "agent.yaml").write_text("search: {}\n")

    def refuse(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_bytes", refuse)
    with pytest.raises(ConfigError, match="cannot read the config file: Permission denied"):
        load_config(WorkspacePaths.for_root(tmp_path))


def test_missing_required_key_is_named() -> None:
    error = _error("inference:\n  targets:\n    x: {account: main}\n")
    assert str(error) == "agent.yaml:3:5: inference.targets.x.executor is required"


@pytest.mark.parametrize("provider", ["native", "local"])
def test_signets_native_default_model_runs_ours_with_a_warning(provider: str) -> None:
    text = (
        f"embedding:\n  provider: {provider}\n  model: nomic-embed-text-v1.5\n  dimensions: 768\n"
    )
    loaded = parse_config_text(text)
    embedding = loaded.config.embedding
    assert (embedding.provider, embedding.model, embedding.dimensions) == (
        "native",
        "all-MiniLM-L6-v2",
        384,
    )
    assert len(loaded.warnings) == 1 and "nomic-embed-text-v1.5" in loaded.warnings[0]


def test_other_models_are_left_as_written() -> None:
    loaded = parse_config_text("embedding:\n  provider: ollama\n  model: nomic-embed-text-v1.5\n")
    assert loaded.config.embedding.model == "nomic-embed-text-v1.5" and loaded.warnings == ()
    loaded = parse_config_text("embedding:\n  provider: native\n  model: bge-small-en\n")
    assert loaded.config.embedding.model == "bge-small-en"  # refused later, by the registry
