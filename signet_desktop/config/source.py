"""YAML text -> Python data plus the line and column of every key (for error messages).

PyYAML's safe loader, with two additions: duplicate keys are an error instead of a silent
last-one-wins, and each key path is indexed to its 1-based position in the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from signet_desktop.config.keys import KeyPath, dotted

_MAX_DEPTH = 64


@dataclass(frozen=True, slots=True, order=True)
class Position:
    """A 1-based line and column in the source text."""

    line: int
    column: int


@dataclass(frozen=True, slots=True)
class YamlDocument:
    """Parsed data and where each key path sits in the text."""

    data: object
    positions: dict[KeyPath, Position] = field(default_factory=dict)


class YamlSyntaxError(Exception):
    """The text is not valid YAML (or repeats a key); carries the 1-based position."""

    def __init__(self, problem: str, position: Position | None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.position = position


def _position(mark: yaml.Mark | None) -> Position | None:
    return None if mark is None else Position(mark.line + 1, mark.column + 1)


def _offset_position(text: str, offset: int) -> Position:
    before = text[:offset]
    return Position(before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1)


def _key_text(node: Node) -> str:
    return str(node.value) if isinstance(node, ScalarNode) else f"<{node.tag}>"


def _index(
    node: Node, path: KeyPath, out: dict[KeyPath, Position], depth: int, seen_nodes: set[int]
) -> None:
    if depth > _MAX_DEPTH:
        raise YamlSyntaxError("the document is nested too deeply", _position(node.start_mark))
    if id(node) in seen_nodes:  # an alias: indexed where its anchor was (and no blow-up)
        return
    seen_nodes.add(id(node))
    if isinstance(node, MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = _key_text(key_node)
            if key == "<<":  # a merge key, not a setting
                continue
            child = (*path, key)
            if key in seen:
                raise YamlSyntaxError(
                    f"duplicate key '{dotted(child)}'", _position(key_node.start_mark)
                )
            seen.add(key)
            position = _position(key_node.start_mark)
            if position is not None:
                out[child] = position
            _index(value_node, child, out, depth + 1, seen_nodes)
    elif isinstance(node, SequenceNode):
        for number, item in enumerate(node.value):
            _index(item, (*path, str(number)), out, depth + 1, seen_nodes)


def parse_yaml(text: str) -> YamlDocument:
    """Parse one YAML document; raise YamlSyntaxError with the position of the first problem."""
    try:
        loader = yaml.SafeLoader(text)
    except yaml.reader.ReaderError as exc:  # a control character PyYAML refuses to read
        raise _reader_error(text, exc) from exc
    try:
        node = loader.get_single_node()
        if node is None:
            return YamlDocument(data=None)
        positions: dict[KeyPath, Position] = {}
        _index(node, (), positions, 0, set())
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        problem = ": ".join(part for part in (exc.context, exc.problem) if part) or str(exc)
        raise YamlSyntaxError(problem, _position(exc.problem_mark)) from exc
    except yaml.reader.ReaderError as exc:
        raise _reader_error(text, exc) from exc
    finally:
        loader.dispose()
    return YamlDocument(data=data, positions=positions)


def _reader_error(text: str, exc: yaml.reader.ReaderError) -> YamlSyntaxError:
    return YamlSyntaxError(
        f"unacceptable character #x{exc.character:04x}", _offset_position(text, exc.position)
    )
