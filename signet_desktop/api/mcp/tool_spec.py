"""What an MCP tool is: its arguments, its answer's schema, what it runs, and shared checks.

A tool turns its arguments into the body of the matching HTTP route and lets the backend
validate it with that route's rules, so a bad argument is refused with the message and code
HTTP gives (`invalid request: limit: Input should be a valid integer` / `invalid_request`,
`reason_required`, ...) before anything is written. Only what a route takes from its path or
query string (a memory `id`, `memory_list`'s paging) is checked here, where JSON types are
still known. Scope never comes from arguments: an `agentId` argument is ignored like any
unknown one.

What search-like tools put in front of the model is HTTP's body as data (`as_data`): a
`note` (`safety/defang.py: DATA_NOTE`) and every recalled text defanged — links and images
unmade, URLs inert, tags and command lines defused — so a recalled note cannot act as markup
or a live link. HTTP's own body is unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from signet_desktop.api.mcp.backend import MemoryBackend, ToolFailure
from signet_desktop.domain.control_text import control_message, first_control
from signet_desktop.safety.defang import DATA_NOTE, defang

MAX_ID_CHARS = 256  # as the HTTP path parameter
MAX_SESSION_KEY_CHARS = 512  # as the session routes' path parameter
MAX_QUERY_ARG_CHARS = 8192  # a query-string argument (a URL stays far below httpx's 64 KiB)
Arguments = Mapping[str, Any]
Runner = Callable[[Arguments, MemoryBackend], Awaitable[str]]
# A recalled text's place in an answer: keys down to a list of objects, then the text field.
TextPath = tuple[str, ...]

STRING = {"type": "string"}
INTEGER = {"type": "integer"}
NUMBER = {"type": "number"}
BOOLEAN = {"type": "boolean"}
TAGS = {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]}
TIMESTAMP = {"type": "string", "format": "date-time"}


@dataclass(frozen=True, slots=True)
class Arg:
    """One tool argument: its JSON schema, and the body field it becomes."""

    name: str
    schema: Mapping[str, Any]
    description: str
    required: bool = False
    field: str | None = None  # the route's field name, when it differs

    def json_schema(self) -> dict[str, Any]:
        return {**self.schema, "description": self.description}


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: name, description, arguments, answer schema, hints, and what it runs."""

    name: str
    description: str
    args: tuple[Arg, ...]
    run: Runner
    output: Mapping[str, Any]
    read_only: bool = False
    destructive: bool = False

    def definition(self) -> types.Tool:
        """The `tools/list` entry."""
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {arg.name: arg.json_schema() for arg in self.args},
        }
        required = [arg.name for arg in self.args if arg.required]
        if required:
            schema["required"] = required
        return types.Tool(
            name=self.name,
            description=self.description,
            input_schema=schema,
            output_schema=dict(self.output),
            annotations=types.ToolAnnotations(
                read_only_hint=self.read_only,
                destructive_hint=self.destructive,
                idempotent_hint=self.read_only,
                open_world_hint=False,
            ),
        )

    def body(self, arguments: Arguments, skip: frozenset[str] = frozenset()) -> dict[str, Any]:
        """The route body: every known argument that was given, under its field name."""
        body: dict[str, Any] = {}
        for arg in self.args:
            if arg.name in arguments and arg.name not in skip:
                body.setdefault(arg.field or arg.name, arguments[arg.name])
        return body


def invalid(name: str, message: str) -> ToolFailure:
    """The refusal HTTP gives for a schema error of one field (its 422 `invalid_request`)."""
    return ToolFailure(f"invalid request: {name}: {message}", "invalid_request")


def path_id(arguments: Arguments, name: str = "id", max_chars: int = MAX_ID_CHARS) -> str:
    """An argument that becomes a path parameter, checked as the route checks it."""
    if name not in arguments:
        raise invalid(name, "Field required")
    value = arguments[name]
    if not isinstance(value, str):
        raise invalid(name, "Input should be a valid string")
    if not value:
        raise invalid(name, "String should have at least 1 character")
    if len(value) > max_chars:
        raise invalid(name, f"String should have at most {max_chars} characters")
    if "/" in value or value in (".", ".."):
        raise invalid(name, "must not contain '/' or be '.' or '..'")  # it would change the route
    char = first_control(value, identifier=True)
    if char is not None:
        raise invalid(name, control_message(char, identifier=True))
    return value


def memory_id(arguments: Arguments) -> str:
    """The `id` argument, checked as the HTTP path parameter would be."""
    return path_id(arguments)


def check_integer(arguments: Arguments, name: str) -> None:
    value = arguments.get(name)
    if name in arguments and (not isinstance(value, int) or isinstance(value, bool)):
        raise invalid(name, "Input should be a valid integer")


def check_string(arguments: Arguments, name: str) -> None:
    """A string argument that travels in the query string, so bounded as a URL is."""
    if name not in arguments:
        return
    value = arguments[name]
    if not isinstance(value, str):
        raise invalid(name, "Input should be a valid string")
    if len(value) > MAX_QUERY_ARG_CHARS:
        raise invalid(name, f"String should have at most {MAX_QUERY_ARG_CHARS} characters")


RECALLED: tuple[TextPath, ...] = (
    ("results", "content"),
    ("supplementary", "excerpt"),
    ("hits", "excerpt"),
)


def _defang_at(node: Any, path: Sequence[str]) -> None:
    """Defang the text at `path` under `node` (lists are walked, other shapes left alone)."""
    if isinstance(node, list):
        for item in node:
            _defang_at(item, path)
        return
    if not isinstance(node, dict) or not path:
        return
    key, rest = path[0], path[1:]
    if not rest:
        if isinstance(node.get(key), str):
            node[key] = defang(node[key])
        return
    _defang_at(node.get(key), rest)


def as_data(text: str, paths: Sequence[TextPath] = RECALLED) -> str:
    """A JSON answer with its recalled texts (at `paths`) defanged and the data note added."""
    try:
        body = json.loads(text)
    except ValueError:
        return text
    if not isinstance(body, dict):
        return text
    for path in paths:
        _defang_at(body, path)
    return json.dumps({"note": DATA_NOTE, **body}, ensure_ascii=False)
