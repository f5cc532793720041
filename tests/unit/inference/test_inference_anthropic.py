"""The Anthropic Messages provider against the scripted server."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from signet_desktop.inference.accounting import ModelPrice, Pricing
from signet_desktop.inference.anthropic import AnthropicProvider, messages_url
from signet_desktop.inference.errors import (
    ProviderBadResponse,
    ProviderRejected,
    ProviderTimeout,
)
from signet_desktop.inference.retry import RetryPolicy
from signet_desktop.inference.types import ChatMessage, ChatRequest, ToolSpec
from tests.support.fake_llm import (
    FakeLLM,
    call,
    garbage,
    http_error,
    raw,
    reply,
    slow,
    sse_stream,
    tool_reply,
)

FAST = RetryPolicy(attempts=3, base_s=0.01, max_s=0.05)
KEY = SecretStr("sk-ant-api03-SECRETVALUE")
TOOL = ToolSpec("get_entity", "Get one entity", {"type": "object", "properties": {"id": {}}})


def provider(fake: FakeLLM, **kw: object) -> AnthropicProvider:
    return AnthropicProvider(
        base_url=fake.root_url,
        model="claude-haiku",
        api_key=KEY,
        retry=FAST,
        **kw,  # type: ignore[arg-type]
    )


def conversation() -> tuple[ChatMessage, ...]:
    return (ChatMessage.system("You consolidate memory."), ChatMessage.user("go"))


def test_messages_url_with_or_without_v1() -> None:
    assert messages_url("https://api.anthropic.com") == "https://api.anthropic.com/v1/messages"
    assert messages_url("http://h:1/v1/") == "http://h:1/v1/messages"


def test_tool_use_round_trip_and_wire_format(fake_llm: FakeLLM) -> None:
    fake_llm.script(
        tool_reply(
            call("get_entity", {"id": "e1"}, id="toolu_1"),
            call("get_entity", {"id": "e2"}, id="toolu_2"),
            text="Let me look.",
            input_tokens=50,
            cache_read=1000,
            cache_write=200,
            output_tokens=30,
        ),
        reply("Done."),
    )
    llm = provider(fake_llm)
    first = llm.complete(ChatRequest(messages=conversation(), tools=(TOOL,), temperature=1.5))
    assert first.text == "Let me look." and first.finish_reason == "tool_calls"
    assert [c.arguments() for c in first.tool_calls] == [{"id": "e1"}, {"id": "e2"}]
    assert first.usage.input_tokens == 1250  # 50 fresh + 1000 read + 200 written
    assert (first.usage.cache_read, first.usage.cache_write, first.usage.output_tokens) == (
        1000,
        200,
        30,
    )
    history = (
        *conversation(),
        first.as_message(),
        ChatMessage.tool_result(first.tool_calls[0], "entity one"),
        ChatMessage.tool_result(first.tool_calls[1], "entity two"),
    )
    second = llm.complete(ChatRequest(messages=history, tools=(TOOL,)))
    assert second.text == "Done." and second.finish_reason == "stop"

    opening, follow_up = (r.body for r in fake_llm.requests)
    headers = fake_llm.requests[0].headers
    assert headers["x-api-key"] == KEY.get_secret_value()
    assert headers["anthropic-version"] == "2023-06-01"
    assert fake_llm.requests[0].path == "/v1/messages"
    assert opening["system"] == "You consolidate memory."
    assert opening["temperature"] == 1.0  # clamped to Anthropic's range
    assert opening["tools"] == [
        {"name": "get_entity", "description": "Get one entity", "input_schema": TOOL.parameters}
    ]
    assert opening["messages"] == [{"role": "user", "content": [{"type": "text", "text": "go"}]}]
    assert follow_up["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_entity", "input": {"id": "e1"}},
            {"type": "tool_use", "id": "toolu_2", "name": "get_entity", "input": {"id": "e2"}},
        ],
    }
    # Both results in one user turn, as the API requires.
    assert follow_up["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "entity one"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "entity two"},
        ],
    }


def test_cost_from_configured_prices(fake_llm: FakeLLM) -> None:
    fake_llm.script(reply("x", input_tokens=1_000_000, output_tokens=100_000, cache_read=0))
    price = ModelPrice(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
    answer = provider(fake_llm, pricing=Pricing(price=price)).complete(
        ChatRequest(messages=conversation())
    )
    assert answer.cost_usd == pytest.approx(3.0 + 1.5)


def test_malformed_tool_input_reaches_the_caller(fake_llm: FakeLLM) -> None:
    fake_llm.script(tool_reply(call("apply", "{not json")))
    [bad] = provider(fake_llm).complete(ChatRequest(messages=conversation())).tool_calls
    assert bad.arguments_json == "{not json"
    with pytest.raises(ValueError):
        bad.arguments()


def test_json_mode_adds_an_instruction(fake_llm: FakeLLM) -> None:
    fake_llm.script(reply("{}"))
    provider(fake_llm).complete(ChatRequest(messages=conversation(), response_format="json"))
    assert fake_llm.requests[0].body["system"].endswith("single JSON object and nothing else.")


def test_overloaded_529_is_retried_and_401_is_not(fake_llm: FakeLLM) -> None:
    fake_llm.script(http_error(529), reply("ok"))
    assert provider(fake_llm).complete(ChatRequest(messages=conversation())).text == "ok"
    fake_llm.script(http_error(401, message="invalid x-api-key"), reply("unused"))
    with pytest.raises(ProviderRejected, match="invalid x-api-key"):
        provider(fake_llm).complete(ChatRequest(messages=conversation()))
    assert len(fake_llm.requests) == 3


@pytest.mark.parametrize(
    "step",
    [
        garbage(),
        sse_stream(),
        raw(200, {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}),
        raw(200, {"content": "text"}),
        raw(200, {"content": [{"type": "tool_use", "name": "x"}]}),
    ],
)
def test_bad_bodies(fake_llm: FakeLLM, step: object) -> None:
    fake_llm.script(step)  # type: ignore[arg-type]
    with pytest.raises(ProviderBadResponse):
        provider(fake_llm).complete(ChatRequest(messages=conversation()))


def test_timeout(fake_llm: FakeLLM) -> None:
    fake_llm.script(slow(5))
    with pytest.raises(ProviderTimeout):
        provider(fake_llm).complete(ChatRequest(messages=conversation(), timeout_s=0.3))
