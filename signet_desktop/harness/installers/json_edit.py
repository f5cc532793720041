"""Edit JSON and JSONC files in place: only the bytes of what changes are touched.

A harness's settings file is the user's: its comments, key order, spacing and line breaks
are theirs. `patched(text, value)` parses `text` (JSONC, `config/jsonc.py`) into a tree that
remembers where every value, key and item sits, compares it with the wanted `value`, and
rewrites only the spans that differ: a changed value in place, a new member after the last
one (in the object's own indentation), a removed member or item with its separator. So an
install adds exactly its lines, an uninstall takes exactly those lines back out, and a
reinstall changes nothing.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import Any

from signet_desktop.config.jsonc import JsoncError, Node, loads, parse, skip_blank

__all__ = ["JsoncError", "Node", "loads", "parse", "patched"]


# -- patching ---------------------------------------------------------------------------------

Edit = tuple[int, int, str]  # replace text[start:end] with the string


def indent_unit(text: str) -> str:
    """The file's indentation step: the first indented line's lead (two spaces if none)."""
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return "  "


def _line_indent(text: str, offset: int) -> str:
    start = text.rfind("\n", 0, offset) + 1
    lead = text[start:offset]
    stripped = lead.lstrip(" \t")
    return lead[: len(lead) - len(stripped)]


def _multiline(text: str, node: Node) -> bool:
    """Is the container laid out over lines? (An empty one follows the file.)"""
    if not node.children:
        return "\n" in text.strip()
    return "\n" in text[node.start : node.end]


def _render(value: Any, base: str, unit: str, inline: bool) -> str:
    if inline:
        return json.dumps(value, ensure_ascii=False)
    indent: int | str = len(unit) if unit.strip(" ") == "" else unit
    lines = json.dumps(value, indent=indent, ensure_ascii=False).split("\n")
    return ("\n" + base).join(lines)


def _member_text(key: str | None, value: Any, base: str, unit: str, inline: bool) -> str:
    rendered = _render(value, base, unit, inline)
    return rendered if key is None else f"{json.dumps(key, ensure_ascii=False)}: {rendered}"


def _after_value(text: str, end: int) -> tuple[int, bool]:
    """Where the separator after a value ends, and whether it was a comma."""
    pos = skip_blank(text, end)
    if pos < len(text) and text[pos] == ",":
        return pos + 1, True
    return end, False


class _Patcher:
    def __init__(self, text: str) -> None:
        self.text = text
        self.unit = indent_unit(text)
        self.edits: list[Edit] = []

    def replace(self, node: Node, value: Any) -> None:
        base = _line_indent(self.text, node.start)
        inline = node.kind != "scalar" and not _multiline(self.text, node)
        self.edits.append((node.start, node.end, _render(value, base, self.unit, inline)))

    def patch(self, node: Node, new: Any) -> None:
        if node.value == new and type(node.value) is type(new):
            return
        if node.kind == "object" and isinstance(new, dict):
            self.patch_object(node, new)
        elif node.kind == "array" and isinstance(new, list):
            self.patch_array(node, new)
        else:
            self.replace(node, new)

    def patch_object(self, node: Node, new: dict[str, Any]) -> None:
        keys = [key for key, _ in node.keys]
        if len(set(keys)) != len(keys) or not new:
            self.replace(node, new)
            return
        kept = [i for i, key in enumerate(keys) if key in new]
        added = [(key, value) for key, value in new.items() if key not in node.value]
        if not kept and keys:
            self.replace(node, new)  # nothing of the old object stays
            return
        if added and len(kept) < len(keys) and kept[-1] != len(keys) - 1:
            self.replace(node, new)  # both ends of the object change: one clean rewrite
            return
        self.remove(node, [i for i in range(len(keys)) if i not in kept], [k for _, k in node.keys])
        for i in kept:
            self.patch(node.children[i], new[keys[i]])
        if added:
            last = kept[-1] if kept else None
            self.append(node, last, added)

    def patch_array(self, node: Node, new: list[Any]) -> None:
        old = node.value
        if not new:
            self.replace(node, new)
            return
        if len(new) >= len(old):
            for child, value in zip(node.children, new, strict=False):
                self.patch(child, value)
            if len(new) > len(old):
                extra = [(None, value) for value in new[len(old) :]]
                self.append(node, len(old) - 1 if old else None, extra)
            return
        kept = _subsequence(old, new)
        if kept is None:
            self.replace(node, new)
            return
        starts = [child.start for child in node.children]
        self.remove(node, [i for i in range(len(old)) if i not in kept], starts)

    def remove(self, node: Node, gone: list[int], starts: list[int]) -> None:
        """Take out members/items `gone` (indices) with their separators."""
        if not gone:
            return
        count = len(node.children)
        runs: list[tuple[int, int]] = []
        for index in gone:
            if runs and runs[-1][1] == index - 1:
                runs[-1] = (runs[-1][0], index)
            else:
                runs.append((index, index))
        for first, last in runs:
            if last + 1 < count:
                self.edits.append((starts[first], starts[last + 1], ""))
            else:  # the run reaches the end: from the end of the kept one before it
                self.edits.append((node.children[first - 1].end, node.children[last].end, ""))

    def append(
        self, node: Node, last: int | None, members: Sequence[tuple[str | None, Any]]
    ) -> None:
        """New members/items after child `last` (None: the container is empty)."""
        inline = not _multiline(self.text, node)
        if last is None:
            base = _line_indent(self.text, node.start)
            inner = base + self.unit
            parts = [_member_text(k, v, inner, self.unit, inline) for k, v in members]
            open_, close = self.text[node.start], self.text[node.end - 1]
            if inline:
                body = ", ".join(parts)
            else:
                body = "\n" + inner + (",\n" + inner).join(parts) + "\n" + base
            self.edits.append((node.start, node.end, open_ + body + close))
            return
        child = node.children[last]
        at = node.keys[last][1] if node.kind == "object" else child.start
        base = _line_indent(self.text, at)
        parts = [_member_text(k, v, base, self.unit, inline) for k, v in members]
        separator = ", " if inline else ",\n" + base
        after, trailing = _after_value(self.text, child.end)
        if trailing:  # keep the file's trailing-comma style
            insert = (" " if inline else "\n" + base) + separator.join(parts) + ","
            self.edits.append((after, after, insert))
        else:
            self.edits.append((child.end, child.end, separator + separator.join(parts)))


def _subsequence(old: list[Any], new: list[Any]) -> list[int] | None:
    """Indices of `old` that, in order, equal `new`; None when `new` is not such a subsequence."""
    kept: list[int] = []
    index = 0
    for i, value in enumerate(old):
        if index < len(new) and value == new[index]:
            kept.append(i)
            index += 1
    return kept if index == len(new) else None


def patched(text: str, value: Any) -> str:
    """`text` edited so that it holds `value`, touching only the spans that differ."""
    root = parse(text)
    patcher = _Patcher(text)
    patcher.patch(root, value)
    edits = sorted(patcher.edits)
    for (start_a, end_a, _), (start_b, _, _) in itertools.pairwise(edits):
        if start_b < end_a or (start_b == start_a and end_a > start_a):
            raise AssertionError("overlapping JSON edits")  # a bug here, never a user error
    result = text
    for start, end, replacement in reversed(edits):
        result = result[:start] + replacement + result[end:]
    return result
