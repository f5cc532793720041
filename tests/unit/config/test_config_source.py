"""YAML parsing: key positions, duplicate keys, and never an unexpected exception."""

from __future__ import annotations

import contextlib

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from signet_desktop.config.loader import ConfigError, parse_config_text
from signet_desktop.config.source import Position, YamlSyntaxError, parse_yaml


def test_positions_are_one_based_and_nested() -> None:
    document = parse_yaml("a: 1\nb:\n  c: 2\n  d:\n    - e: 3\n")
    assert document.data == {"a": 1, "b": {"c": 2, "d": [{"e": 3}]}}
    assert document.positions[("a",)] == Position(1, 1)
    assert document.positions[("b", "c")] == Position(3, 3)
    assert document.positions[("b", "d", "0", "e")] == Position(5, 7)


def test_duplicate_key_in_flow_mapping() -> None:
    with pytest.raises(YamlSyntaxError) as caught:
        parse_yaml("k: {a: 1, a: 2}\n")
    assert caught.value.problem == "duplicate key 'k.a'"
    assert caught.value.position == Position(1, 11)


def test_control_characters_are_located() -> None:
    with pytest.raises(YamlSyntaxError) as caught:
        parse_yaml('a: 1\nb: "\x07"\n')
    assert caught.value.position == Position(2, 5)


def test_recursive_aliases_do_not_hang() -> None:
    assert isinstance(parse_yaml("a: &x [*x]\n").data, dict)


def test_multiple_documents_are_refused() -> None:
    with pytest.raises(YamlSyntaxError) as caught:
        parse_yaml("a: 1\n---\nb: 2\n")
    assert caught.value.position == Position(2, 1)


KEYS = st.sampled_from(
    [
        "search",
        "alpha",
        "top_k",
        "memory",
        "pipelineV2",
        "dreaming",
        "extraction",
        "provider",
        "embedding",
        "inference",
        "targets",
        "executor",
        "worker",
        "pollMs",
        "x",
        "git",
        "hooks",
    ]
)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYS, VALUES, max_size=5))
def test_any_mapping_loads_or_raises_config_error(data: dict[str, object]) -> None:
    with contextlib.suppress(ConfigError):
        parse_config_text(yaml.safe_dump(data))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_text_loads_or_raises_config_error(text: str) -> None:
    with contextlib.suppress(ConfigError):
        parse_config_text(text)
