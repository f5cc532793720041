"""In-place JSON(C) edits: only what changes is rewritten; comments and layout stay."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from signet_desktop.harness.installers.json_edit import JsoncError, loads, patched

USER_FILE = """{
  // my theme, keep it
  "theme": "tokyonight",
  "plugin": ["opencode-wakatime"],   /* mine */
  "mcp": {
    "fs": {"type": "local", "command": ["fs-mcp"]},
  },
}
"""


def test_comments_and_trailing_commas_parse() -> None:
    assert loads(USER_FILE) == {
        "theme": "tokyonight",
        "plugin": ["opencode-wakatime"],
        "mcp": {"fs": {"type": "local", "command": ["fs-mcp"]}},
    }
    assert loads('{"a": "http://x//y /* no */"}') == {"a": "http://x//y /* no */"}


def test_adding_touches_no_byte_of_the_users_text_and_removing_restores_it() -> None:
    value = loads(USER_FILE)
    value["plugin"].append("./plugins/signet.mjs")
    value["mcp"]["signet"] = {"type": "local", "command": ["/x/signet-mcp"], "enabled": True}
    added = patched(USER_FILE, value)
    assert loads(added) == value
    ours = (
        '\n    "signet": {\n      "type": "local",\n      "command": [\n'
        '        "/x/signet-mcp"\n      ],\n      "enabled": true\n    },'
    )
    assert added.replace(', "./plugins/signet.mjs"', "").replace(ours, "") == USER_FILE
    assert patched(added, loads(USER_FILE)) == USER_FILE
    assert patched(added, value) == added  # nothing to change: the same bytes


def test_new_members_take_the_objects_own_indentation() -> None:
    text = '{\n    "a": 1,\n    "b": {\n        "c": true\n    }\n}\n'
    out = patched(text, {"a": 1, "b": {"c": True, "d": [1, 2]}, "e": "x"})
    assert out == (
        '{\n    "a": 1,\n    "b": {\n        "c": true,\n        "d": [\n            1,\n'
        '            2\n        ]\n    },\n    "e": "x"\n}\n'
    )


def test_an_empty_object_and_an_inline_array_grow_in_their_style() -> None:
    assert patched('{"hooks": {}}', {"hooks": {"A": 1}}) == '{"hooks": {"A": 1}}'
    text = '{\n  "hooks": {}\n}'
    assert patched(text, {"hooks": {"A": 1}}) == '{\n  "hooks": {\n    "A": 1\n  }\n}'
    assert patched('{"p": ["a", "b"]}', {"p": ["a", "b", "c"]}) == '{"p": ["a", "b", "c"]}'


def test_removing_an_item_from_the_middle_keeps_the_others_as_they_were() -> None:
    text = "[\n  1, // one\n  2,\n  3\n]"
    assert patched(text, [1, 3]) == "[\n  1, // one\n  3\n]"
    assert patched(text, [1, 2]) == "[\n  1, // one\n  2\n]"


@pytest.mark.parametrize("text", ["{", '{"a" 1}', '{"a": 1,,}', "[1 2]", '{"a": tru}', "/* x"])
def test_invalid_text_names_line_and_column(text: str) -> None:
    with pytest.raises(JsoncError) as caught:
        loads(text)
    assert caught.value.line >= 1 and caught.value.column >= 1


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(before=JSON_VALUES, after=JSON_VALUES, indent=st.sampled_from([None, 2, 4, "\t"]))
def test_any_edit_yields_exactly_the_wanted_value(before: Any, after: Any, indent: Any) -> None:
    text = json.dumps(before, indent=indent)
    out = patched(text, after)
    assert json.loads(out) == after
    assert patched(out, after) == out
