"""A past tool call with malformed arguments is sent back as "{}" (llama.cpp's server refuses
the whole request over one unparseable call in the history: seen with gemma3-270m)."""

from __future__ import annotations

from signet_desktop.inference.openai_compat import OpenAICompatProvider
from signet_desktop.inference.types import ChatMessage, ChatRequest
from tests.support.fake_llm import FakeLLM, call, reply, tool_reply


def test_malformed_arguments_are_echoed_as_an_empty_object(fake_llm: FakeLLM) -> None:
    fake_llm.script(
        tool_reply(
            call("list", '{"entityId": "memory:0a', id="c1"), call("get", {"a": 1}, id="c2")
        ),
        reply("done"),
    )
    llm = OpenAICompatProvider(base_url=fake_llm.base_url, model="m")
    asked = (ChatMessage.system("s"), ChatMessage.user("u"))
    first = llm.complete(ChatRequest(messages=asked))
    broken, fine = first.tool_calls
    assert broken.arguments_json == '{"entityId": "memory:0a'  # the caller still sees it verbatim
    history = (
        *asked,
        first.as_message(),
        ChatMessage.tool_result(broken, "arguments are not a JSON object"),
        ChatMessage.tool_result(fine, "ok"),
    )
    assert llm.complete(ChatRequest(messages=history)).text == "done"
    echoed = fake_llm.requests[1].body["messages"][2]["tool_calls"]
    assert [c["function"]["arguments"] for c in echoed] == ["{}", '{"a": 1}']
