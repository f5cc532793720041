"""`memory.pipelineV2.hints`: off by default, bounded, and a bad value is a clear error."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from signet_desktop.config.models import SignetConfig


def hints(**values: object) -> object:
    config = SignetConfig.model_validate({"memory": {"pipelineV2": {"hints": values}}})
    return config.memory.pipeline_v2.hints


def test_defaults_and_keys() -> None:
    default = SignetConfig().memory.pipeline_v2.hints
    assert (default.enabled, default.max, default.timeout_ms) == (False, 5, 60_000)
    assert default.min_content_chars == 40
    chosen = hints(enabled=True, max=3, timeoutMs=30_000, minContentChars=12)
    assert chosen.model_dump() == {  # type: ignore[attr-defined]
        **default.model_dump(),
        "enabled": True,
        "max": 3,
        "timeout_ms": 30_000,
        "min_content_chars": 12,
    }
    assert hints(timeout=7000).timeout_ms == 7000  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("key", "value"),
    [("max", 0), ("max", 11), ("timeoutMs", 100), ("minContentChars", 0), ("enabled", "maybe")],
)
def test_invalid_values_are_refused_with_the_key(key: str, value: object) -> None:
    with pytest.raises(ValidationError, match=key):
        hints(**{key: value})
