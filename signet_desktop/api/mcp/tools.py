"""The MCP tools, defined once: Signet's names and arguments, over a MemoryBackend.

A tool turns its arguments into the body of the matching HTTP route and lets the backend
validate it with that route's rules, so a bad argument is refused with the message and code
HTTP gives (`invalid request: limit: Input should be a valid integer` / `invalid_request`,
`reason_required`, ...) before anything is written. Only what a route takes from its path or
query string (a memory `id`, `memory_list`'s paging) is checked here, where JSON types are
still known. Scope never comes from arguments: an `agentId` argument is ignored like any
unknown one. Every refusal or failure is a tool error (`isError`) whose text is HTTP's error
body `{"error", "code"}`; nothing here raises into the SDK.

What `memory_search` and `session_search` put in front of the model is HTTP's body as data:
a `note` (`safety/defang.py: DATA_NOTE`) and every recalled text (`results[].content`,
`supplementary[].excerpt`, `hits[].excerpt`) defanged — links and images unmade, URLs inert,
tags and command lines defused — so a recalled note cannot act as markup or a live link.
HTTP's own body is unchanged.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from signet_desktop.api.mcp.backend import Body, MemoryBackend, ToolFailure
from signet_desktop.domain.control_text import control_message, first_control
from signet_desktop.safety.defang import DATA_NOTE, defang

logger = logging.getLogger("signet_desktop.api.mcp")

MAX_ID_CHARS = 256  # as the HTTP path parameter
MAX_QUERY_ARG_CHARS = 8192  # a query-string argument (a URL stays far below httpx's 64 KiB)
Arguments = Mapping[str, Any]
Runner = Callable[[Arguments, MemoryBackend], Awaitable[str]]

_STRING = {"type": "string"}
_INTEGER = {"type": "integer"}
_NUMBER = {"type": "number"}
_BOOLEAN = {"type": "boolean"}
_TAGS = {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]}
_TIMESTAMP = {"type": "string", "format": "date-time"}


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
    """One tool: name, description, arguments, hints, and what it runs."""

    name: str
    description: str
    args: tuple[Arg, ...]
    run: Runner
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


def memory_id(arguments: Arguments) -> str:
    """The `id` argument, checked as the HTTP path parameter would be."""
    if "id" not in arguments:
        raise invalid("id", "Field required")
    value = arguments["id"]
    if not isinstance(value, str):
        raise invalid("id", "Input should be a valid string")
    if not value:
        raise invalid("id", "String should have at least 1 character")
    if len(value) > MAX_ID_CHARS:
        raise invalid("id", f"String should have at most {MAX_ID_CHARS} characters")
    if "/" in value or value in (".", ".."):
        raise invalid("id", "must not contain '/' or be '.' or '..'")  # it would change the route
    char = first_control(value, identifier=True)
    if char is not None:
        raise invalid("id", control_message(char, identifier=True))
    return value


def _check_integer(arguments: Arguments, name: str) -> None:
    value = arguments.get(name)
    if name in arguments and (not isinstance(value, int) or isinstance(value, bool)):
        raise invalid(name, "Input should be a valid integer")


def _check_string(arguments: Arguments, name: str) -> None:
    """A string argument that travels in the query string, so bounded as a URL is."""
    if name not in arguments:
        return
    value = arguments[name]
    if not isinstance(value, str):
        raise invalid(name, "Input should be a valid string")
    if len(value) > MAX_QUERY_ARG_CHARS:
        raise invalid(name, f"String should have at most {MAX_QUERY_ARG_CHARS} characters")


_RECALLED = (("results", "content"), ("supplementary", "excerpt"), ("hits", "excerpt"))


def as_data(text: str) -> str:
    """A search body with its recalled texts defanged and the data note added."""
    try:
        body = json.loads(text)
    except ValueError:
        return text
    if not isinstance(body, dict):
        return text
    for key, field in _RECALLED:
        for item in body.get(key) or ():
            if isinstance(item, dict) and isinstance(item.get(field), str):
                item[field] = defang(item[field])
    return json.dumps({"note": DATA_NOTE, **body}, ensure_ascii=False)


async def _search(arguments: Arguments, backend: MemoryBackend) -> str:
    return as_data(await backend.search(SEARCH.body(arguments)))  # score_min wins over min_score


async def _store(arguments: Arguments, backend: MemoryBackend) -> str:
    return await backend.store(STORE.body(arguments))


async def _get(arguments: Arguments, backend: MemoryBackend) -> str:
    return await backend.get(memory_id(arguments))


async def _list(arguments: Arguments, backend: MemoryBackend) -> str:
    _check_integer(arguments, "limit")
    _check_integer(arguments, "offset")
    _check_string(arguments, "type")
    return await backend.list(LIST.body(arguments))


async def _modify(arguments: Arguments, backend: MemoryBackend) -> str:
    target = memory_id(arguments)
    return await backend.modify(target, MODIFY.body(arguments, skip=frozenset({"id"})))


async def _forget(arguments: Arguments, backend: MemoryBackend) -> str:
    target = memory_id(arguments)
    return await backend.forget(target, FORGET.body(arguments, skip=frozenset({"id"})))


async def _session_search(arguments: Arguments, backend: MemoryBackend) -> str:
    return as_data(await backend.session_search(SESSION_SEARCH.body(arguments)))


async def _knowledge_list(arguments: Arguments, backend: MemoryBackend) -> str:
    for name in ("limit", "offset"):
        _check_integer(arguments, name)
    for name in ("query", "type", "status"):
        _check_string(arguments, name)
    return await backend.knowledge_entities(KNOWLEDGE_LIST.body(arguments))


async def _knowledge_get(arguments: Arguments, backend: MemoryBackend) -> str:
    _check_integer(arguments, "mention_limit")
    target = memory_id(arguments)  # the same path-parameter rules
    return await backend.knowledge_entity(target, KNOWLEDGE_GET.body(arguments, frozenset({"id"})))


_ID = Arg("id", _STRING, "the memory id (from memory_search, memory_store or memory_list)", True)
_REASON = Arg("reason", _STRING, "why; recorded in the memory's history", True)
_TYPE = Arg("type", _STRING, "memory type, e.g. fact, preference, decision")
_IMPORTANCE = Arg("importance", _NUMBER, "0..1")
_TAGS_ARG = Arg("tags", _TAGS, "tags, as a list or a comma-separated string")

SEARCH = ToolSpec(
    "memory_search",
    "Search memories by meaning and keywords (hybrid recall), then what past sessions said: "
    "ranked results with id, content, score, type, tags and the evidence of each channel, "
    "memories first, then session turns (kind: transcript, with transcript.sessionKey, "
    "turnIndex, role and timestamp) in the slots left, as JSON; a result with weak: true is "
    "among the best but not shown to be relevant (treat it as a guess).",
    (
        Arg("query", _STRING, "what to look for", True),
        Arg("limit", _INTEGER, "results to return, 1..100 (default 10)"),
        Arg("project", _STRING, "only memories and sessions of this project"),
        Arg(
            "expand",
            _BOOLEAN,
            "also return transcript excerpts around each result (supplementary; a session "
            "turn's neighbouring turns in transcript.context)",
        ),
        Arg("type", _STRING, "only this memory type"),
        Arg("tags", _TAGS, "only memories with all of these tags"),
        Arg("who", _STRING, "only memories about or from this person or agent"),
        Arg("since", _TIMESTAMP, "only memories created at or after (ISO-8601)"),
        Arg("until", _TIMESTAMP, "only memories created before (ISO-8601)"),
        Arg("keyword_query", _STRING, "different text for the keyword channel"),
        Arg("pinned", _BOOLEAN, "only pinned (true) or unpinned (false) memories"),
        Arg("importance_min", _NUMBER, "minimum importance, 0..1"),
        Arg("score_min", _NUMBER, "minimum score, 0..1", field="min_score"),
        Arg("min_score", _NUMBER, "deprecated alias of score_min"),
    ),
    _search,
    read_only=True,
)
STORE = ToolSpec(
    "memory_store",
    "Save a memory for later sessions. `critical:` at the start pins it; `[a,b]:` adds "
    "tags. A duplicate returns the existing memory with deduped: true.",
    (Arg("content", _STRING, "the memory text", True), _TYPE, _IMPORTANCE, _TAGS_ARG),
    _store,
)
GET = ToolSpec("memory_get", "One memory by id, with all its fields.", (_ID,), _get, read_only=True)
LIST = ToolSpec(
    "memory_list",
    "Memories newest first, a page at a time, with the store's counts.",
    (
        Arg("limit", _INTEGER, "page size, 1..1000 (default 100)"),
        Arg("offset", _INTEGER, "memories to skip (default 0)"),
        Arg("type", _STRING, "only this memory type"),
    ),
    _list,
    read_only=True,
)
MODIFY = ToolSpec(
    "memory_modify",
    "Change a memory's tags or importance (stored memories keep their content and type: "
    "asking to change them is refused with episodic_content_immutable).",
    (
        _ID,
        _REASON,
        Arg("content", _STRING, "new content (refused for episodic memories)"),
        _TYPE,
        _IMPORTANCE,
        _TAGS_ARG,
    ),
    _modify,
)
FORGET = ToolSpec(
    "memory_forget",
    "Forget a memory (a soft delete, recoverable for 30 days; pinned memories are refused).",
    (_ID, _REASON),
    _forget,
    destructive=True,
)

SESSION_SEARCH = ToolSpec(
    "session_search",
    "Search the transcripts of past sessions (keywords, BM25). Returns hits with sessionKey, "
    "project, updatedAt, a highlighted excerpt and rank, as JSON.",
    (
        Arg("query", _STRING, "what to look for", True),
        Arg("session_key", _STRING, "only this session", field="sessionKey"),
        Arg("project", _STRING, "only sessions of this project"),
        Arg("limit", _INTEGER, "hits to return, 1..20 (default 10)"),
    ),
    _session_search,
    read_only=True,
)

KNOWLEDGE_LIST = ToolSpec(
    "knowledge_list_entities",
    "The knowledge graph's entities (people, projects, systems, tools...), pinned then most "
    "mentioned first, with type, status and mention count, as JSON.",
    (
        Arg("query", _STRING, "only entities whose name or alias contains this", field="q"),
        Arg("type", _STRING, "only this entity type, e.g. person, project, system, tool"),
        Arg("status", _STRING, "active (default), archived, merged, unsupported or all"),
        Arg("limit", _INTEGER, "entities to return, 1..500 (default 50)"),
        Arg("offset", _INTEGER, "entities to skip (default 0)"),
    ),
    _knowledge_list,
    read_only=True,
)
KNOWLEDGE_GET = ToolSpec(
    "knowledge_get_entity",
    "One entity in full: aliases, aspects with their claims (active and superseded "
    "versions), dependencies both ways and the memories that mention it, as JSON.",
    (
        Arg("id", _STRING, "the entity id (from knowledge_list_entities)", True),
        Arg(
            "mention_limit",
            _INTEGER,
            "mentions to return, 1..500 (default 50)",
            field="mentionLimit",
        ),
    ),
    _knowledge_get,
    read_only=True,
)

TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        SEARCH, STORE, GET, LIST, MODIFY, FORGET, SESSION_SEARCH, KNOWLEDGE_LIST, KNOWLEDGE_GET,
    )
}  # fmt: skip


def tool_definitions() -> list[types.Tool]:
    """Every tool, for `tools/list`."""
    return [spec.definition() for spec in TOOLS.values()]


def error_result(message: str, code: str) -> types.CallToolResult:
    """A tool error whose text is HTTP's error body."""
    text = json.dumps({"error": message, "code": code}, ensure_ascii=False)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


async def call_tool(
    name: str, arguments: Arguments | None, backend: MemoryBackend
) -> types.CallToolResult:
    """Run one tool; every refusal or failure comes back as a tool error."""
    spec = TOOLS.get(name)
    if spec is None:
        return error_result(f"unknown tool: {name}", "unknown_tool")
    try:
        text = await spec.run(arguments or {}, backend)
    except ToolFailure as failure:
        return error_result(failure.message, failure.code)
    except Exception:
        logger.exception("MCP tool %s failed", name)
        return error_result("internal error", "internal_error")
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


__all__ = ["TOOLS", "Body", "ToolSpec", "call_tool", "error_result", "tool_definitions"]
