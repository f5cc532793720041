"""agent.yaml text for Dreaming tests: the memory_extraction workload on a fake_llm server."""

from __future__ import annotations

from signet_desktop.config.loader import parse_config_text
from signet_desktop.config.models import SignetConfig


def dreaming_yaml(base_url: str | None, *, enabled: bool = False, extra: str = "") -> str:
    """YAML with Dreaming on or off and, given `base_url`, an OpenAI-compatible target."""
    text = f"memory:\n  dreaming:\n    enabled: {str(enabled).lower()}\n{extra}"
    if base_url is not None:
        text += (
            "inference:\n"
            "  targets:\n"
            "    fake:\n"
            "      executor: openai-compatible\n"
            f"      endpoint: {base_url}\n"
            "      models: {m: {}}\n"
            "  workloads:\n"
            "    memoryExtraction: {target: fake, model: m}\n"
        )
    return text


def dreaming_config(base_url: str | None, **kwargs: object) -> SignetConfig:
    return parse_config_text(dreaming_yaml(base_url, **kwargs)).config  # type: ignore[arg-type]
