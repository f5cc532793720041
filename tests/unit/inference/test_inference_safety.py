"""No provider call inside a write transaction; API keys never in logs, errors, repr or status."""

from __future__ import annotations

import json
import logging

import pytest
from pydantic import SecretStr

from signet_desktop.config.loader import parse_config_text
from signet_desktop.inference.anthropic import AnthropicProvider
from signet_desktop.inference.errors import ProviderError
from signet_desktop.inference.openai_compat import OpenAICompatProvider
from signet_desktop.inference.registry import provider_for, resolve_workload
from signet_desktop.inference.retry import RetryPolicy
from signet_desktop.inference.status import inference_status
from signet_desktop.inference.types import ChatMessage, ChatProvider, ChatRequest
from signet_desktop.storage.database import Database
from signet_desktop.storage.guard import ProviderCallInWriteTransaction
from tests.support.fake_llm import FakeLLM, garbage, http_error, raw, reply

SECRET = "sk-live-TOPSECRET-4242"
FAST = RetryPolicy(attempts=2, base_s=0.01, max_s=0.02)
REQUEST = ChatRequest(messages=(ChatMessage.user("hi"),), timeout_s=2)


def providers(fake: FakeLLM) -> list[ChatProvider]:
    key = SecretStr(SECRET)
    return [
        OpenAICompatProvider(base_url=fake.base_url, model="m", api_key=key, retry=FAST),
        AnthropicProvider(base_url=fake.root_url, model="m", api_key=key, retry=FAST),
    ]


def test_a_call_inside_a_write_transaction_raises_before_any_io(
    fake_llm: FakeLLM, db: Database
) -> None:
    fake_llm.script(reply("a"), reply("b"))
    for llm in providers(fake_llm):
        with pytest.raises(ProviderCallInWriteTransaction), db.write():
            llm.complete(REQUEST)
    assert fake_llm.requests == []  # nothing reached the network
    assert providers(fake_llm)[0].complete(REQUEST).text == "a"  # fine outside it


def test_the_key_never_leaks(fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    echo = {"error": {"message": f"invalid key {SECRET} for this model"}}
    messages: list[str] = []
    for llm in providers(fake_llm):
        fake_llm.script(
            raw(401, echo),
            http_error(500, message=f"boom {SECRET}"),
            http_error(503, message=f"boom {SECRET}"),
            garbage(f"<html>{SECRET}</html>".encode()),
            raw(200, {"choices": [{"message": {"content": 1}}], "error": SECRET}),
        )
        for _ in range(4):
            with pytest.raises(ProviderError) as caught:
                llm.complete(REQUEST)
            messages += [str(caught.value), repr(caught.value)]
        messages += [repr(llm), str(llm)]
    assert len([r for r in fake_llm.requests if SECRET in r.headers.get("authorization", "")]) > 0
    joined = "\n".join(messages)
    assert "invalid key *** for this model" in joined  # the server's echo, masked
    assert SECRET not in joined
    assert SECRET not in caplog.text


def test_registry_and_status_never_show_the_key() -> None:
    config = parse_config_text(
        "inference:\n"
        f"  accounts: {{a: {{provider: anthropic, apiKey: {SECRET}}}}}\n"
        "  targets: {t: {executor: anthropic, account: a, models: {m: {}}}}\n"
        "  workloads: {memoryExtraction: {target: t}}\n"
    ).config.inference
    resolved = resolve_workload(config, "memory_extraction", env={})
    built = provider_for(config, "memory_extraction", env={})
    status = inference_status(config, env={})
    shown = [repr(resolved), str(resolved), repr(built), json.dumps(status), repr(config)]
    assert all(SECRET not in text for text in shown)
    assert status["workloads"][0]["configured"] is True
