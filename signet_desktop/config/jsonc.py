"""The JSONC parser: JSON with `//` and `/* */` comments and trailing commas.

OpenCode and VS Code read their settings this way. `loads(text)` gives the value; `parse(text)`
gives a tree (`Node`) that remembers where every value, key and item sits, which the harness
installers' in-place editor (`harness/installers/json_edit.py`) needs and the OpenCode
launch (`inference/harness_opencode.py`) reads through `loads`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


class JsoncError(ValueError):
    """Text that is not JSON(C); `line` and `column` are 1-based."""

    def __init__(self, message: str, text: str, offset: int) -> None:
        self.line = text.count("\n", 0, offset) + 1
        self.column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        self.msg = message
        super().__init__(f"{message} (line {self.line}, column {self.column})")


@dataclass
class Node:
    """One value: its span `[start, end)`, its Python value, and its children's nodes."""

    start: int
    end: int
    value: Any
    kind: str  # "object" | "array" | "scalar"
    keys: list[tuple[str, int]] = field(default_factory=list)  # (key, key offset) per member
    children: list[Node] = field(default_factory=list)  # member values / items, in order


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, message: str) -> JsoncError:
        return JsoncError(message, self.text, self.pos)

    def skip(self) -> None:
        """Whitespace and comments."""
        text, n = self.text, len(self.text)
        while self.pos < n:
            char = text[self.pos]
            if char in " \t\r\n\ufeff":
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end + 1
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("unterminated comment")
                self.pos = end + 2
            else:
                return

    def value(self) -> Node:
        self.skip()
        if self.pos >= len(self.text):
            raise self.fail("unexpected end of text")
        char = self.text[self.pos]
        if char == "{":
            return self.container("}", object_=True)
        if char == "[":
            return self.container("]", object_=False)
        start = self.pos
        if char == '"':
            return Node(start, self.string_end(), self.decode(start, self.pos), "scalar")
        while self.pos < len(self.text) and self.text[self.pos] not in ",]}/ \t\r\n":
            self.pos += 1
        return Node(start, self.pos, self.decode(start, self.pos), "scalar")

    def string_end(self) -> int:
        text, pos = self.text, self.pos + 1
        while pos < len(text):
            if text[pos] == "\\":
                pos += 2
            elif text[pos] == '"':
                self.pos = pos + 1
                return self.pos
            elif text[pos] == "\n":
                break
            else:
                pos += 1
        raise self.fail("unterminated string")

    def decode(self, start: int, end: int) -> Any:
        try:
            return json.loads(self.text[start:end])
        except ValueError:
            self.pos = start
            raise self.fail(f"not a JSON value: {self.text[start:end][:20]!r}") from None

    def container(self, close: str, *, object_: bool) -> Node:
        node = Node(self.pos, -1, {} if object_ else [], "object" if object_ else "array")
        self.pos += 1
        while True:
            self.skip()
            if self.pos >= len(self.text):
                raise self.fail(f"expected {close!r}")
            if self.text[self.pos] == close:
                self.pos += 1
                node.end = self.pos
                return node
            if node.children:
                if self.text[self.pos] != ",":
                    raise self.fail(f"expected ',' or {close!r}")
                self.pos += 1
                self.skip()
                if self.pos < len(self.text) and self.text[self.pos] == close:
                    continue  # a trailing comma
            if object_:
                if self.pos >= len(self.text) or self.text[self.pos] != '"':
                    raise self.fail("expected a key in double quotes")
                key_at = self.pos
                key = self.decode(key_at, self.string_end())
                self.skip()
                if self.pos >= len(self.text) or self.text[self.pos] != ":":
                    raise self.fail("expected ':' after the key")
                self.pos += 1
                child = self.value()
                node.keys.append((key, key_at))
                node.value[key] = child.value
            else:
                child = self.value()
                node.value.append(child.value)
            node.children.append(child)


def parse(text: str) -> Node:
    """The tree of a JSON(C) document; JsoncError when it is not one."""
    parser = _Parser(text)
    root = parser.value()
    parser.skip()
    if parser.pos != len(text):
        raise parser.fail("unexpected text after the value")
    return root


def loads(text: str) -> Any:
    """The value of a JSON(C) document."""
    return parse(text).value


def skip_blank(text: str, pos: int) -> int:
    """Where the whitespace and comments from `pos` end."""
    parser = _Parser(text)
    parser.pos = pos
    parser.skip()
    return parser.pos
