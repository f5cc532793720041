"""The memory tools: Signet's `memory_*` names and arguments, each over its HTTP route."""

from __future__ import annotations

from signet_desktop.api.mcp import output_schemas as out
from signet_desktop.api.mcp.backend import MemoryBackend
from signet_desktop.api.mcp.tool_spec import (
    BOOLEAN,
    INTEGER,
    NUMBER,
    STRING,
    TAGS,
    TIMESTAMP,
    Arg,
    Arguments,
    ToolSpec,
    as_data,
    check_integer,
    check_string,
    memory_id,
)
from signet_desktop.domain.recall import AS_OF_HELP


async def _search(arguments: Arguments, backend: MemoryBackend) -> str:
    return as_data(await backend.search(SEARCH.body(arguments)))  # score_min wins over min_score


async def _store(arguments: Arguments, backend: MemoryBackend) -> str:
    return await backend.store(STORE.body(arguments))


async def _get(arguments: Arguments, backend: MemoryBackend) -> str:
    return await backend.get(memory_id(arguments))


async def _list(arguments: Arguments, backend: MemoryBackend) -> str:
    check_integer(arguments, "limit")
    check_integer(arguments, "offset")
    check_string(arguments, "type")
    return await backend.list(LIST.body(arguments))


async def _modify(arguments: Arguments, backend: MemoryBackend) -> str:
    target = memory_id(arguments)
    return await backend.modify(target, MODIFY.body(arguments, skip=frozenset({"id"})))


async def _forget(arguments: Arguments, backend: MemoryBackend) -> str:
    target = memory_id(arguments)
    return await backend.forget(target, FORGET.body(arguments, skip=frozenset({"id"})))


async def _feedback(arguments: Arguments, backend: MemoryBackend) -> str:
    return await backend.feedback(FEEDBACK.body(arguments))


_ID = Arg("id", STRING, "the memory id (from memory_search, memory_store or memory_list)", True)
_REASON = Arg("reason", STRING, "why; recorded in the memory's history", True)
_TYPE = Arg("type", STRING, "memory type, e.g. fact, preference, decision")
_IMPORTANCE = Arg("importance", NUMBER, "0..1")
_TAGS_ARG = Arg("tags", TAGS, "tags, as a list or a comma-separated string")

SEARCH = ToolSpec(
    "memory_search",
    "Search memories by meaning and keywords (hybrid recall), then what past sessions said: "
    "ranked results with id, content, score, type, tags and the evidence of each channel, "
    "memories first, then session turns (kind: transcript, with transcript.sessionKey, "
    "turnIndex, role and timestamp) in the slots left, as JSON; a result with weak: true is "
    "among the best but not shown to be relevant (treat it as a guess).",
    (
        Arg("query", STRING, "what to look for", True),
        Arg("limit", INTEGER, "results to return, 1..100 (default 10)"),
        Arg("project", STRING, "only memories and sessions of this project"),
        Arg(
            "expand",
            BOOLEAN,
            "also return transcript excerpts around each result (supplementary; a session "
            "turn's neighbouring turns in transcript.context)",
        ),
        Arg("type", STRING, "only this memory type"),
        Arg("tags", TAGS, "only memories with all of these tags"),
        Arg("who", STRING, "only memories about or from this person or agent"),
        Arg("since", TIMESTAMP, "only memories created at or after (ISO-8601)"),
        Arg("until", TIMESTAMP, "only memories created before (ISO-8601)"),
        Arg("keyword_query", STRING, "different text for the keyword channel"),
        Arg("pinned", BOOLEAN, "only pinned (true) or unpinned (false) memories"),
        Arg("importance_min", NUMBER, "minimum importance, 0..1"),
        Arg("score_min", NUMBER, "minimum score, 0..1", field="min_score"),
        Arg("min_score", NUMBER, "deprecated alias of score_min"),
        Arg("as_of", TIMESTAMP, AS_OF_HELP),
    ),
    _search,
    out.SEARCH,
    read_only=True,
)
STORE = ToolSpec(
    "memory_store",
    "Save a memory for later sessions. `critical:` at the start pins it; `[a,b]:` adds "
    "tags. A duplicate returns the existing memory with deduped: true.",
    (Arg("content", STRING, "the memory text", True), _TYPE, _IMPORTANCE, _TAGS_ARG),
    _store,
    out.STORE,
)
GET = ToolSpec(
    "memory_get", "One memory by id, with all its fields.", (_ID,), _get, out.MEMORY, read_only=True
)
LIST = ToolSpec(
    "memory_list",
    "Memories newest first, a page at a time, with the store's counts.",
    (
        Arg("limit", INTEGER, "page size, 1..1000 (default 100)"),
        Arg("offset", INTEGER, "memories to skip (default 0)"),
        Arg("type", STRING, "only this memory type"),
    ),
    _list,
    out.LIST,
    read_only=True,
)
MODIFY = ToolSpec(
    "memory_modify",
    "Change a memory's content, type, tags or importance (a reason is required; the history "
    "keeps the old text and a content change re-embeds it).",
    (
        _ID,
        _REASON,
        Arg("content", STRING, "new content (the old text stays in the memory's history)"),
        _TYPE,
        _IMPORTANCE,
        _TAGS_ARG,
    ),
    _modify,
    out.MODIFY,
)
FORGET = ToolSpec(
    "memory_forget",
    "Forget a memory (a soft delete, recoverable for 30 days; pinned memories are refused).",
    (_ID, _REASON),
    _forget,
    out.FORGET,
    destructive=True,
)
FEEDBACK = ToolSpec(
    "memory_feedback",
    "Rate how relevant recalled or injected memories were to this session: -1 (harmful) .. "
    "0 (unused) .. 1 (directly helpful). Each rating joins the memory's running mean for the "
    "session. Every id must be one of your memories; otherwise nothing is recorded.",
    (
        Arg("session_key", STRING, "the current session key", True, field="sessionKey"),
        Arg(
            "ratings",
            {
                "type": "object",
                "additionalProperties": {"type": "number", "minimum": -1, "maximum": 1},
            },
            "memory id -> relevance score, -1..1 (at most 200)",
            True,
            field="feedback",
        ),
    ),
    _feedback,
    out.FEEDBACK,
)

MEMORY_TOOLS = (SEARCH, STORE, GET, LIST, MODIFY, FORGET, FEEDBACK)
