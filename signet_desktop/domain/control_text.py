"""Control characters in a caller's text: which ones are refused, and where the first one is.

Every text a caller sends (body fields, their keys, query and path parameters, MCP arguments)
is refused when it holds a C0 or C1 control character or DEL: NUL truncates text in C
libraries and SQLite functions, and escape sequences would reach terminals and prompts. Tab,
newline and carriage return are text and stay allowed, except in identifiers (path
parameters), which allow none.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_IN_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_IN_IDENTIFIER = re.compile("[\x00-\x1f\x7f-\x9f]")

Location = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class ControlCharacter:
    """The first refused character found: where (a JSON path) and which code point."""

    loc: Location
    char: str

    @property
    def message(self) -> str:
        return control_message(self.char)


def control_message(char: str, *, identifier: bool = False) -> str:
    """What a refusal says (names the code point, never the text)."""
    found = f"must not contain control characters (found U+{ord(char):04X})"
    return found if identifier else f"{found}; only tab, newline and carriage return are allowed"


def first_control(text: str, *, identifier: bool = False) -> str | None:
    """The first refused character of `text` (identifiers refuse tab and newlines too)."""
    found = (_IN_IDENTIFIER if identifier else _IN_TEXT).search(text)
    return found.group() if found else None


def drop_controls(value: object) -> object:
    """`value` with refused characters removed from every string in it (keys kept as sent).

    For text an agent harness relays from its conversation (a pasted terminal log carries
    escape sequences): the hook records it rather than refusing the turn.
    """
    if isinstance(value, str):
        return _IN_TEXT.sub("", value)
    if isinstance(value, dict):
        return {key: drop_controls(item) for key, item in value.items()}
    if isinstance(value, list):
        return [drop_controls(item) for item in value]
    return value


def find_control(data: object, skip: Iterable[str] = ()) -> ControlCharacter | None:
    """A refused character in a JSON value's strings or keys, with its path.

    `skip` names top-level keys whose values are raw text the core normalises itself
    (a document's content); their keys are still checked.
    """
    skipped = frozenset(skip)
    stack: list[tuple[object, Location]] = [(data, ())]
    while stack:
        value, loc = stack.pop()
        if isinstance(value, str):
            char = first_control(value)
            if char is not None:
                return ControlCharacter(loc, char)
        elif isinstance(value, dict):
            for key, item in value.items():
                name = str(key)
                char = first_control(name)
                if char is not None:
                    return ControlCharacter((*loc, name), char)
                if not (loc == () and name in skipped):
                    stack.append((item, (*loc, name)))
        elif isinstance(value, list):
            stack.extend((item, (*loc, index)) for index, item in enumerate(value))
    return None
