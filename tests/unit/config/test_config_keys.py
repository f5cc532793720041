"""The retired/ignored/relocated tables agree with the models they guard."""

from __future__ import annotations

import pytest

from signet_desktop.config.keys import (
    IGNORED_KEYS,
    RELOCATED_KEYS,
    RETIRED_KEYS,
    has_retired_below,
    is_ignored,
    retired_reason,
    split,
)
from signet_desktop.config.loader import parse_config_text
from signet_desktop.config.models import SignetConfig

DEFAULTS = SignetConfig().model_dump(by_alias=True)


def _lookup(dotted: str) -> object:
    node: object = DEFAULTS
    for key in dotted.split("."):
        if not isinstance(node, dict) or key not in node:
            return KeyError(dotted)
        node = node[key]
    return node


@pytest.mark.parametrize("path", [entry.pattern for entry in RETIRED_KEYS] + list(IGNORED_KEYS))
def test_no_table_entry_shadows_a_real_setting(path: str) -> None:
    assert isinstance(_lookup(path), KeyError), f"{path} is a modelled setting"


@pytest.mark.parametrize(("old", "new"), RELOCATED_KEYS)
def test_relocated_keys_land_on_real_settings(old: str, new: str) -> None:
    default = _lookup(new)
    assert not isinstance(default, KeyError)
    text = _nested_yaml(old, default)
    loaded = parse_config_text(text)
    assert loaded.warnings == (f"'{old}' is an old key; it is read as '{new}'",)


def _nested_yaml(dotted: str, value: object) -> str:
    import yaml

    data: object = value
    for key in reversed(dotted.split(".")):
        data = {key: data}
    return yaml.safe_dump(data)


def test_matching_rules() -> None:
    assert retired_reason(split("memory.pipelineV2.extraction.provider")) is not None
    assert retired_reason(split("memory.pipelineV2.extraction")) is None
    assert has_retired_below(split("memory.pipelineV2.extraction"))
    assert has_retired_below(split("memory"))
    assert not has_retired_below(split("search"))
    assert is_ignored(split("git"))
    assert not is_ignored(split("git.autoCommit"))
    assert not is_ignored(split("search"))
