"""The scripted LLM server itself: wire formats, faults, recording."""

from __future__ import annotations

import httpx

from tests.support.fake_llm import (
    FakeLLM,
    call,
    garbage,
    http_error,
    reply,
    sse_stream,
    tool_reply,
)


def test_openai_and_anthropic_shapes_from_one_queue(fake_llm: FakeLLM) -> None:
    fake_llm.script(
        tool_reply(call("search", '{"q": "x"'), text="looking", cache_read=3), reply("done")
    )
    first = httpx.post(f"{fake_llm.base_url}/chat/completions", json={"model": "m"}).json()
    choice = first["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["tool_calls"][0]["function"]["arguments"] == '{"q": "x"'
    assert first["usage"]["prompt_tokens_details"] == {"cached_tokens": 3}
    second = httpx.post(f"{fake_llm.root_url}/v1/messages", json={"model": "claude"}).json()
    assert second["content"] == [{"type": "text", "text": "done"}]
    assert second["model"] == "claude"
    assert [r.api for r in fake_llm.requests] == ["openai", "anthropic"]
    assert fake_llm.pending == 0


def test_faults_and_an_empty_queue(fake_llm: FakeLLM) -> None:
    fake_llm.script(http_error(429, retry_after=2), garbage(), sse_stream())
    url = f"{fake_llm.base_url}/chat/completions"
    limited = httpx.post(url, json={})
    assert (limited.status_code, limited.headers["retry-after"]) == (429, "2")
    assert httpx.post(url, json={}).content.startswith(b"<html>")
    assert httpx.post(url, json={}).headers["content-type"] == "text/event-stream"
    empty = httpx.post(url, json={})
    assert empty.status_code == 418
    assert "no scripted response" in empty.json()["error"]["message"]
