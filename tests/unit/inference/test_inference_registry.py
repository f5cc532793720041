"""Workload → policy → target → account resolution from agent.yaml text."""

from __future__ import annotations

from pathlib import Path

import pytest

from signet_desktop.config.inference import InferenceConfig
from signet_desktop.config.loader import ConfigError, parse_config_text
from signet_desktop.inference.anthropic import AnthropicProvider
from signet_desktop.inference.errors import ProviderNotConfigured, ProviderRejected
from signet_desktop.inference.fallback import FallbackProvider
from signet_desktop.inference.openai_compat import OpenAICompatProvider
from signet_desktop.inference.registry import provider_for, resolve_chain, resolve_workload
from signet_desktop.inference.retry import RetryPolicy
from signet_desktop.inference.status import inference_status
from signet_desktop.inference.types import ChatMessage, ChatProvider, ChatRequest
from signet_desktop.inference.workloads import WorkloadProviders
from tests.support.fake_llm import FakeLLM, http_error, reply

FULL = """
inference:
  defaultPolicy: local-first
  accounts:
    claude: {provider: anthropic, apiKey: $secret:ANTHROPIC_API_KEY}
    router: {provider: openrouter, apiKey: "${OPENROUTER_API_KEY}"}
  targets:
    local:
      executor: ollama
      models:
        "qwen3:4b": {}
    cloud:
      executor: anthropic
      account: claude
      models:
        claude-haiku-4-5: {pricing: {input: 1, output: 5, cacheRead: 0.1}}
        claude-sonnet-4-5: {default: true}
    router:
      executor: openai-compatible
      account: router
      endpoint: https://openrouter.ai/api/v1
      models:
        anthropic/claude-haiku-4.5: {}
  policies:
    local-first: {targets: [local, cloud]}
    careful: {target: cloud, model: claude-haiku-4-5}
  workloads:
    memoryExtraction: careful
    sessionSynthesis: {target: router}
"""
ENV = {"SIGNET_SECRET_ANTHROPIC_API_KEY": "sk-ant-xyz", "OPENROUTER_API_KEY": "sk-or-123"}


def inference(text: str) -> InferenceConfig:
    return parse_config_text(text).config.inference


def test_each_workload_resolves_through_its_binding() -> None:
    config = inference(FULL)
    extraction = resolve_workload(config, "memory_extraction", env=ENV)
    assert (extraction.policy, extraction.target, extraction.wire) == (
        "careful",
        "cloud",
        "anthropic",
    )
    assert extraction.model == "claude-haiku-4-5"
    assert extraction.base_url == "https://api.anthropic.com"
    assert extraction.api_key is not None and extraction.api_key.get_secret_value() == "sk-ant-xyz"
    assert extraction.pricing.price is not None and extraction.pricing.price.cache_read == 0.1

    synthesis = resolve_workload(config, "session_synthesis", env=ENV)
    assert (synthesis.label, synthesis.model, synthesis.host) == (
        "openrouter",
        "anthropic/claude-haiku-4.5",
        "openrouter.ai",
    )
    assert synthesis.pricing.free is False and synthesis.pricing.price is None  # unknown

    interactive = resolve_workload(config, "interactive", env=ENV)  # the default policy
    assert (interactive.policy, interactive.target, interactive.label) == (
        "local-first",
        "local",
        "ollama",
    )
    assert interactive.base_url == "http://localhost:11434/v1" and interactive.model == "qwen3:4b"
    assert interactive.api_key is None and interactive.pricing.free


def test_providers_are_built_for_the_wire_format() -> None:
    config = inference(FULL)
    assert isinstance(provider_for(config, "memory_extraction", env=ENV), AnthropicProvider)
    built = provider_for(config, "session_synthesis", env=ENV)
    assert isinstance(built, OpenAICompatProvider) and isinstance(built, ChatProvider)
    assert (built.name, built.model) == ("openrouter", "anthropic/claude-haiku-4.5")
    chain = provider_for(config, "interactive", env=ENV)  # local-first: [local, cloud]
    assert isinstance(chain, FallbackProvider) and isinstance(chain, ChatProvider)
    assert (chain.name, chain.model) == ("ollama", "qwen3:4b")
    assert [p.name for p in chain.providers] == ["ollama", "anthropic"]


def test_target_ref_with_model_and_endpoint_without_v1(fake_llm: FakeLLM) -> None:
    config = inference(
        "inference:\n"
        "  targets:\n"
        f"    box: {{executor: llama-cpp, endpoint: '{fake_llm.root_url}'}}\n"
        "  workloads:\n"
        "    memoryExtraction: {target: box/gemma3-270m}\n"
    )
    llm = provider_for(config, "memory_extraction", env={})
    fake_llm.script(reply("hi"))
    answer = llm.complete(ChatRequest(messages=(ChatMessage.user("x"),)))
    assert answer.text == "hi" and answer.cost_usd == 0.0
    assert fake_llm.requests[0].path == "/v1/chat/completions"
    assert fake_llm.requests[0].body["model"] == "gemma3-270m"


def test_secret_from_a_file_in_the_secrets_dir(tmp_path: Path) -> None:
    (tmp_path / "ANTHROPIC_API_KEY").write_text("sk-ant-from-file\n")
    resolved = resolve_workload(inference(FULL), "memory_extraction", env={}, secrets_dir=tmp_path)
    assert resolved.api_key is not None
    assert resolved.api_key.get_secret_value() == "sk-ant-from-file"


@pytest.mark.parametrize(
    ("yaml", "workload", "says"),
    [
        ("", "memory_extraction", "set inference.workloads.memoryExtraction"),
        ("inference: {enabled: false}", "interactive", "inference.enabled: false"),
        (
            "inference: {workloads: {memoryExtraction: nope}}",
            "memory_extraction",
            "policy 'nope', which inference.policies does not define",
        ),
        (
            "inference: {policies: {p: {mode: auto}}, workloads: {interactive: p}}",
            "interactive",
            "inference.policies.p names no target",
        ),
        (
            "inference: {workloads: {interactive: {target: ghost}}}",
            "interactive",
            "target 'ghost', which inference.targets does not define",
        ),
        (
            "inference: {targets: {t: {executor: ollama, models: {a: {}, b: {}}}},"
            " workloads: {interactive: {target: t}}}",
            "interactive",
            "set inference.workloads.interactive.model",
        ),
        (
            "inference: {targets: {t: {executor: openai-compatible, models: {a: {}}}},"
            " workloads: {interactive: {target: t}}}",
            "interactive",
            "set inference.targets.t.endpoint",
        ),
        (
            "inference: {targets: {t: {executor: anthropic, models: {a: {}}}},"
            " workloads: {interactive: {target: t}}}",
            "interactive",
            "anthropic needs an API key",
        ),
        (
            "inference: {targets: {t: {executor: acpx, acpx: {agent: gemini}}},"
            " workloads: {interactive: {target: t}}}",
            "interactive",
            "Gemini CLI does not run Dreaming passes yet",
        ),
        (
            "inference: {targets: {t: {executor: anthropic, account: gone, models: {a: {}}}},"
            " workloads: {interactive: {target: t}}}",
            "interactive",
            "inference.targets.t.account names 'gone'",
        ),
        (
            "inference: {targets: {t: {executor: ollama, endpoint: 'file:///x', models: {a: {}}}},"
            " workloads: {interactive: {target: t}}}",
            "interactive",
            "must be an http(s) URL",
        ),
    ],
)
def test_not_configured_says_which_key_to_set(yaml: str, workload: str, says: str) -> None:
    with pytest.raises(ProviderNotConfigured) as caught:
        resolve_workload(inference(yaml), workload, env={})
    assert says in caught.value.reason


def test_unset_secret_reference_names_the_variable() -> None:
    with pytest.raises(ProviderNotConfigured) as caught:
        resolve_workload(inference(FULL), "memory_extraction", env={})
    assert "$secret:ANTHROPIC_API_KEY" in str(caught.value)
    assert "SIGNET_SECRET_ANTHROPIC_API_KEY" in str(caught.value)
    with pytest.raises(ProviderNotConfigured, match="environment variable OPENROUTER_API_KEY"):
        resolve_workload(inference(FULL), "session_synthesis", env={})


def test_unknown_workload_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown workload"):
        resolve_workload(InferenceConfig(), "dreaming")


def test_removed_executors_and_bad_prices_fail_at_load() -> None:
    with pytest.raises(ConfigError, match="executor 'codex' was removed"):
        parse_config_text("inference:\n  targets:\n    t: {executor: codex}\n")
    with pytest.raises(ConfigError, match=r"m\.pricing\.input"):
        parse_config_text(
            "inference:\n  targets:\n    t:\n      executor: anthropic\n"
            "      models: {m: {pricing: {input: -1, output: 2}}}\n"
        )
    with pytest.raises(ConfigError, match=r"m\.pricing\.in"):
        parse_config_text(
            "inference:\n  targets:\n    t:\n      executor: anthropic\n"
            "      models: {m: {pricing: {in: 3, output: 2}}}\n"
        )


def test_workload_providers_build_once_and_report_status(fake_llm: FakeLLM) -> None:
    config = inference(
        "inference:\n"
        "  targets:\n"
        f"    box: {{executor: vllm, endpoint: '{fake_llm.base_url}', models: {{m: {{}}}}}}\n"
        "  workloads: {memoryExtraction: box}\n"
    )
    providers = WorkloadProviders(config, env={})
    source = providers.source("memory_extraction")
    assert source() is source() is providers.get("memory_extraction")
    with pytest.raises(ProviderNotConfigured, match="sessionSynthesis"):
        providers.source("session_synthesis")()
    fake_llm.script(reply("ok"))
    assert source().complete(ChatRequest(messages=(ChatMessage.user("x"),))).text == "ok"
    assert [w["configured"] for w in providers.status()["workloads"]] == [True, False, False]
    providers.close()


def test_pi_executor_takes_its_accounts_provider_and_openai_gets_its_token_field(
    fake_llm: FakeLLM,
) -> None:
    config = inference(
        "inference:\n"
        f"  accounts: {{oa: {{provider: openai, apiKey: sk-x, baseUrl: '{fake_llm.base_url}'}}}}\n"
        "  targets: {p: {executor: pi, account: oa, models: {gpt-4.1-mini: {}}}}\n"
        "  workloads: {interactive: p}\n"
    )
    llm = provider_for(config, "interactive", env={})
    assert llm.name == "openai"
    fake_llm.script(reply("ok"))
    llm.complete(ChatRequest(messages=(ChatMessage.user("x"),), max_output_tokens=9))
    body = fake_llm.requests[0].body
    assert body["max_completion_tokens"] == 9 and "max_tokens" not in body


def chain_config(fake: FakeLLM, first_endpoint: str) -> InferenceConfig:
    return inference(
        "inference:\n"
        "  accounts: {paid: {provider: anthropic, apiKey: $secret:PAID_KEY}}\n"
        "  targets:\n"
        f"    down: {{executor: llama-cpp, endpoint: '{first_endpoint}', models: {{a: {{}}}}}}\n"
        "    keyless: {executor: anthropic, account: paid, models: {c: {}}}\n"
        f"    up: {{executor: vllm, endpoint: '{fake.base_url}', models: {{b: {{}}}}}}\n"
        "  policies: {chain: {targets: [down, keyless, up]}}\n"
        "  workloads: {memoryExtraction: chain}\n"
    )


def test_policy_falls_back_past_an_unreachable_and_an_unconfigured_target(
    fake_llm: FakeLLM,
) -> None:
    config = chain_config(fake_llm, "http://127.0.0.1:9")
    resolution = resolve_chain(config, "memory_extraction", env={})
    assert [t.target for t in resolution.targets] == ["down", "up"]
    assert "$secret:PAID_KEY" in resolution.skipped[0]
    fake_llm.script(reply("from the second"))
    fast = RetryPolicy(attempts=2, base_s=0.01)
    answer = provider_for(config, "memory_extraction", env={}, retry=fast).complete(
        ChatRequest(messages=(ChatMessage.user("x"),), timeout_s=5)
    )
    assert (answer.text, answer.provider, answer.model) == ("from the second", "vllm", "b")
    [status, *_] = inference_status(config, env={})["workloads"]
    assert status["target"] == "down" and status["fallbacks"] == [
        f"up: vllm b @ 127.0.0.1:{fake_llm.base_url.rsplit(':', 1)[1].split('/')[0]}"
    ]
    assert "$secret:PAID_KEY" in status["skipped"][0]


def test_no_fallback_on_a_rejection(fake_llm: FakeLLM) -> None:
    config = chain_config(fake_llm, fake_llm.base_url)  # "down" is the fake too
    fake_llm.script(http_error(400, message="bad request"), reply("never"))
    with pytest.raises(ProviderRejected):
        provider_for(config, "memory_extraction", env={}).complete(
            ChatRequest(messages=(ChatMessage.user("x"),))
        )
    assert fake_llm.pending == 1
