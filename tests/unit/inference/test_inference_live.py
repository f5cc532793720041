"""Opt-in: a real OpenAI-compatible server (llama.cpp, Ollama …). Never in CI.

    SIGNET_LIVE_LLM_URL=http://127.0.0.1:8080/v1 SIGNET_LIVE_LLM_MODEL=gemma3-270m \
        uv run pytest tests/unit/inference/test_inference_live.py -m live
"""

from __future__ import annotations

import os

import pytest

from signet_desktop.inference.errors import ProviderBadResponse, ProviderRejected
from signet_desktop.inference.openai_compat import OpenAICompatProvider
from signet_desktop.inference.types import ChatMessage, ChatRequest, ToolSpec

URL = os.environ.get("SIGNET_LIVE_LLM_URL", "")
MODEL = os.environ.get("SIGNET_LIVE_LLM_MODEL", "")
pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not (URL and MODEL), reason="set SIGNET_LIVE_LLM_URL and _MODEL"),
]


def test_a_real_server_answers_with_text_and_usage() -> None:
    llm = OpenAICompatProvider(base_url=URL, model=MODEL)
    answer = llm.complete(
        ChatRequest(messages=(ChatMessage.user("Say hello in one word."),), max_output_tokens=16)
    )
    assert answer.usage.input_tokens > 0 and answer.usage.output_tokens > 0
    assert answer.latency_ms > 0 and answer.cost_usd == (0.0 if "127.0.0.1" in URL else None)
    llm.close()


def test_a_real_server_accepts_tools() -> None:
    tool = ToolSpec(
        "get_weather",
        "Weather for a city",
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    )
    llm = OpenAICompatProvider(base_url=URL, model=MODEL)
    request = ChatRequest(
        messages=(ChatMessage.user("What is the weather in Lisbon? Use the tool."),),
        tools=(tool,),
        max_output_tokens=128,
    )
    try:
        answer = llm.complete(request)
    except (ProviderRejected, ProviderBadResponse) as exc:  # a server without tool support
        pytest.skip(str(exc))
    for call in answer.tool_calls:  # a small model may answer in text instead
        assert call.name and isinstance(call.arguments_json, str)
    llm.close()
