"""The OpenAI-compatible provider against the scripted server: wire format, faults, retries."""

from __future__ import annotations

import json
import time

import pytest
from pydantic import SecretStr

from signet_desktop.inference.errors import (
    ProviderBadResponse,
    ProviderRateLimited,
    ProviderRejected,
    ProviderTimeout,
    ProviderUnavailable,
)
from signet_desktop.inference.openai_compat import OpenAICompatProvider
from signet_desktop.inference.retry import RetryPolicy
from signet_desktop.inference.types import ChatMessage, ChatRequest, ToolSpec
from tests.support.fake_llm import (
    FakeLLM,
    Raw,
    call,
    drip,
    garbage,
    http_error,
    raw,
    reply,
    slow,
    sse_stream,
    tool_reply,
)

FAST = RetryPolicy(attempts=4, base_s=0.01, max_s=0.05)
SEARCH = ToolSpec("search_evidence", "Search evidence", {"type": "object", "properties": {}})


def provider(fake: FakeLLM, **kw: object) -> OpenAICompatProvider:
    return OpenAICompatProvider(base_url=fake.base_url, model="qwen3:4b", retry=FAST, **kw)  # type: ignore[arg-type]


def ask(text: str = "hello", **kw: object) -> ChatRequest:
    return ChatRequest(messages=(ChatMessage.system("be brief"), ChatMessage.user(text)), **kw)  # type: ignore[arg-type]


def test_tool_calls_round_trip(fake_llm: FakeLLM) -> None:
    fake_llm.script(
        tool_reply(call("search_evidence", {"query": "tea"}, id="c1"), input_tokens=120),
        reply("found it", input_tokens=200, output_tokens=7, cache_read=100),
    )
    llm = provider(fake_llm)
    first = llm.complete(ask(tools=(SEARCH,)))
    assert first.finish_reason == "tool_calls"
    [tool_call] = first.tool_calls
    assert (tool_call.id, tool_call.name, tool_call.arguments()) == (
        "c1",
        "search_evidence",
        {"query": "tea"},
    )
    follow_up = (
        *ask().messages,
        first.as_message(),
        ChatMessage.tool_result(tool_call, "one result"),
    )
    second = llm.complete(ChatRequest(messages=follow_up, tools=(SEARCH,)))
    assert second.text == "found it" and second.finish_reason == "stop"
    assert (second.usage.input_tokens, second.usage.output_tokens, second.usage.cache_read) == (
        200,
        7,
        100,
    )
    assert second.provider == "openai-compatible" and second.model == "qwen3:4b"
    assert second.cost_usd == 0.0  # a loopback server is free
    sent = fake_llm.requests[1].body
    assert sent["stream"] is False and sent["tool_choice"] == "auto"
    assert sent["tools"][0]["function"]["name"] == "search_evidence"
    assert sent["messages"][2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "search_evidence", "arguments": '{"query": "tea"}'},
            }
        ],
    }
    assert sent["messages"][3] == {"role": "tool", "tool_call_id": "c1", "content": "one result"}


def test_malformed_arguments_reach_the_caller_verbatim(fake_llm: FakeLLM) -> None:
    fake_llm.script(tool_reply(call("apply", '{"operations": [')))
    [tool_call] = provider(fake_llm).complete(ask(tools=(SEARCH,))).tool_calls
    assert tool_call.arguments_json == '{"operations": ['
    with pytest.raises(ValueError):
        tool_call.arguments()


def test_request_options_on_the_wire(fake_llm: FakeLLM) -> None:
    fake_llm.script(reply("{}"))
    key = SecretStr("sk-test-abc")
    provider(fake_llm, api_key=key).complete(
        ask(max_output_tokens=77, temperature=0.2, response_format="json")
    )
    [sent] = fake_llm.requests
    assert sent.headers["authorization"] == "Bearer sk-test-abc"
    assert sent.body["max_tokens"] == 77 and sent.body["temperature"] == 0.2
    assert sent.body["response_format"] == {"type": "json_object"}
    assert "tools" not in sent.body


def test_429_is_retried_honouring_retry_after(fake_llm: FakeLLM) -> None:
    fake_llm.script(http_error(429, retry_after=0.3), reply("ok"))
    started = time.monotonic()
    assert provider(fake_llm).complete(ask()).text == "ok"
    assert time.monotonic() - started >= 0.3
    assert len(fake_llm.requests) == 2


def test_a_retry_after_beyond_the_deadline_is_not_waited_for(fake_llm: FakeLLM) -> None:
    fake_llm.script(http_error(429, retry_after=30), reply("never"))
    started = time.monotonic()
    with pytest.raises(ProviderRateLimited) as caught:
        provider(fake_llm).complete(ask(timeout_s=2))
    assert caught.value.retry_after == 30
    assert time.monotonic() - started < 15 and fake_llm.pending == 1  # far from the 30 s


def test_5xx_is_retried_then_gives_up(fake_llm: FakeLLM) -> None:
    fake_llm.script(http_error(500), http_error(503), reply("ok"))
    assert provider(fake_llm).complete(ask()).text == "ok"
    fake_llm.script(*[http_error(502)] * 4)
    with pytest.raises(ProviderUnavailable, match="HTTP 502"):
        provider(fake_llm).complete(ask())
    assert len(fake_llm.requests) == 3 + 4


def test_4xx_is_not_retried(fake_llm: FakeLLM) -> None:
    fake_llm.script(http_error(400, message="model 'x' not found"), reply("unused"))
    with pytest.raises(ProviderRejected, match="model 'x' not found") as caught:
        provider(fake_llm).complete(ask())
    assert caught.value.status == 400 and len(fake_llm.requests) == 1


def test_timeout_within_the_deadline(fake_llm: FakeLLM) -> None:
    fake_llm.script(slow(10, "too late"))
    started = time.monotonic()
    with pytest.raises(ProviderTimeout):
        provider(fake_llm).complete(ask(timeout_s=0.5))
    # Cut off by the deadline, not by the reply (a bound on a hang, not a speed check: at
    # load 16 the 0.5 s deadline was met 1.2 s after the call began).
    assert time.monotonic() - started < 10


def test_connection_refused_is_unavailable() -> None:
    llm = OpenAICompatProvider(
        base_url="http://127.0.0.1:9/v1", model="m", retry=RetryPolicy(attempts=2, base_s=0.01)
    )
    with pytest.raises(ProviderUnavailable, match="could not be reached"):
        llm.complete(ask())


@pytest.mark.parametrize(
    "step",
    [
        garbage(),
        sse_stream(),
        raw(200, b"[1, 2]"),
        raw(200, {"choices": []}),
        raw(200, {"choices": [{"message": {"content": 5}}]}),
        raw(200, {"choices": [{"message": {"tool_calls": [{"function": {}}]}}]}),
        raw(200, {"error": {"message": "upstream overloaded"}}),
        raw(200, {"choices": [{"message": {"content": "", "tool_calls": 7}}]}),
        raw(200, b"\x1f\x8b not really gzip", "application/json"),
        raw(200, b'data: {"x": 1}\n\n', "application/json"),
    ],
)
def test_bad_bodies_are_bad_responses(fake_llm: FakeLLM, step: object) -> None:
    fake_llm.script(step)  # type: ignore[arg-type]
    with pytest.raises(ProviderBadResponse):
        provider(fake_llm).complete(ask())
    assert len(fake_llm.requests) == 1  # not retried


def test_sse_message_says_what_happened(fake_llm: FakeLLM) -> None:
    fake_llm.script(sse_stream())
    with pytest.raises(ProviderBadResponse, match="event stream"):
        provider(fake_llm).complete(ask())


def test_missing_usage_is_zero_and_content_parts_are_joined(fake_llm: FakeLLM) -> None:
    body = {
        "choices": [
            {
                "message": {"content": [{"type": "text", "text": "a"}, {"text": "b"}]},
                "finish_reason": "length",
            }
        ]
    }
    fake_llm.script(raw(200, json.dumps(body)))
    answer = provider(fake_llm).complete(ask())
    assert (answer.text, answer.finish_reason, answer.usage.total_tokens) == ("ab", "length", 0)


def test_a_redirect_is_refused_with_the_reason(fake_llm: FakeLLM) -> None:
    fake_llm.script(raw(301, b"", "text/plain"))
    with pytest.raises(ProviderRejected, match="redirects"):
        provider(fake_llm).complete(ask())


def test_an_undecodable_body_is_a_bad_response(fake_llm: FakeLLM) -> None:
    fake_llm.script(Raw(200, b"\x00garbage", "application/json", {"Content-Encoding": "gzip"}))
    with pytest.raises(ProviderBadResponse, match="unreadable"):
        provider(fake_llm).complete(ask())


def test_a_trickling_body_cannot_outlast_the_deadline(fake_llm: FakeLLM) -> None:
    fake_llm.script(drip(seconds=10, interval=0.02))  # every read well under the timeout
    started = time.monotonic()
    with pytest.raises(ProviderTimeout, match="did not finish its answer"):
        provider(fake_llm).complete(ask(timeout_s=0.6))
    assert time.monotonic() - started < 8  # cut at the deadline, long before the body ends
