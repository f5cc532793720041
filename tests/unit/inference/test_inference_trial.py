"""Settings' "Test": one real call through the workload's provider, told in words."""

from __future__ import annotations

from pathlib import Path

from signet_desktop.config.inference import InferenceConfig
from signet_desktop.config.inference_binding import http_binding
from signet_desktop.config.writer import apply_changes
from signet_desktop.inference.trial import PROMPT, try_workload
from tests.support.fake_llm import FakeLLM, http_error, reply


def bound(url: str, secret: str | None = None) -> InferenceConfig:
    changes = http_binding("openai-compatible", "qwen3:4b", endpoint=url, secret=secret)
    data = apply_changes({}, changes)
    return InferenceConfig.model_validate(data["inference"])


def test_an_answer_is_reported_with_the_model_and_what_it_said(fake_llm: FakeLLM) -> None:
    fake_llm.script(reply("ready", input_tokens=9, output_tokens=1))
    outcome = try_workload(bound(fake_llm.base_url), "memory_extraction", env={})
    assert outcome.ok, outcome.text
    assert "qwen3:4b" in outcome.text and "“ready”" in outcome.text
    [request] = fake_llm.requests
    assert PROMPT in str(request.body)


def test_a_rejected_key_is_a_failure_in_words(fake_llm: FakeLLM, tmp_path: Path) -> None:
    secrets = tmp_path / ".secrets"
    secrets.mkdir()
    (secrets / "LLM_KEY").write_text("sk-wrong\n", encoding="utf-8")
    fake_llm.script(http_error(401, message="invalid api key"))
    config = bound(fake_llm.base_url, secret="LLM_KEY")
    outcome = try_workload(config, "memory_extraction", env={}, secrets_dir=secrets)
    assert not outcome.ok
    assert "failed" in outcome.text and "sk-wrong" not in outcome.text
    assert fake_llm.requests[0].headers.get("authorization") == "Bearer sk-wrong"


def test_nothing_configured_says_what_to_set() -> None:
    outcome = try_workload(InferenceConfig(), "memory_extraction", env={})
    assert not outcome.ok
    assert outcome.text.startswith("Not configured:") and "memoryExtraction" in outcome.text


def test_a_missing_secret_is_named(tmp_path: Path) -> None:
    config = bound("http://127.0.0.1:9/v1", secret="NOT_STORED")
    outcome = try_workload(config, "memory_extraction", env={}, secrets_dir=tmp_path)
    assert not outcome.ok and "NOT_STORED" in outcome.text


def test_a_harness_target_is_started_not_sent_a_completion(tmp_path: Path) -> None:
    binary = tmp_path / "claude"
    binary.write_text("#!/bin/sh\necho 2.0.1\n", encoding="utf-8")
    binary.chmod(0o755)
    config = InferenceConfig.model_validate(
        {
            "targets": {"h": {"executor": "acpx", "acpx": {"agent": str(binary)}}},
            "workloads": {"memoryExtraction": {"target": "h"}},
        }
    )
    outcome = try_workload(config, "memory_extraction", env={"HOME": str(tmp_path)})
    assert outcome.ok, outcome.text
    assert "Claude Code starts (2.0.1" in outcome.text
    broken = try_workload(
        config, "memory_extraction", env={"HOME": str(tmp_path)}, version=lambda _: None
    )
    assert not broken.ok and "did not start" in broken.text
