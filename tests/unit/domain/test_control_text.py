"""The control-character rule: which characters are refused and where the first is found."""

from __future__ import annotations

import pytest

from signet_desktop.domain.control_text import find_control, first_control


@pytest.mark.parametrize("char", ["\x00", "\x07", "\x0b", "\x0c", "\x1b", "\x7f", "\x85", "\x9f"])
def test_c0_c1_and_del_are_refused_in_text(char: str) -> None:
    assert first_control(f"a{char}b") == char


def test_tab_and_newlines_are_text_but_not_identifiers() -> None:
    assert first_control("a\tb\r\nc") is None
    assert first_control("a\tb", identifier=True) == "\t"
    assert first_control("plain ü 日本 \u200b") is None  # format characters are not controls


def test_the_path_names_lists_keys_and_skipped_raw_fields() -> None:
    data = {"content": "raw\x0c", "meta": {"a": ["ok", {"b\x01": 1}]}}
    found = find_control(data, skip=("content",))
    assert found is not None and found.loc == ("meta", "a", 1, "b\x01") and found.char == "\x01"
    assert find_control({"content": "raw\x0c"}, skip=("content",)) is None
    assert find_control({"content": "raw\x0c"}) is not None
    assert "U+000C" in find_control("\x0c").message  # type: ignore[union-attr]
