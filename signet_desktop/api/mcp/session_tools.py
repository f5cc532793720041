"""The session tools: search past sessions' transcripts, and bypass Signet for one session."""

from __future__ import annotations

from signet_desktop.api.mcp import output_schemas as out
from signet_desktop.api.mcp.backend import MemoryBackend
from signet_desktop.api.mcp.tool_spec import (
    BOOLEAN,
    INTEGER,
    MAX_SESSION_KEY_CHARS,
    STRING,
    Arg,
    Arguments,
    ToolSpec,
    as_data,
    path_id,
)


async def _session_search(arguments: Arguments, backend: MemoryBackend) -> str:
    return as_data(await backend.session_search(SESSION_SEARCH.body(arguments)))


async def _session_bypass(arguments: Arguments, backend: MemoryBackend) -> str:
    key = path_id(arguments, "session_key", MAX_SESSION_KEY_CHARS)
    body = BYPASS.body(arguments, skip=frozenset({"session_key"}))
    return await backend.session_bypass(key, body)


SESSION_SEARCH = ToolSpec(
    "session_search",
    "Search the transcripts of past sessions (keywords, BM25). Returns hits with sessionKey, "
    "project, updatedAt, a highlighted excerpt and rank, as JSON.",
    (
        Arg("query", STRING, "what to look for", True),
        Arg("session_key", STRING, "only this session", field="sessionKey"),
        Arg("project", STRING, "only sessions of this project"),
        Arg("limit", INTEGER, "hits to return, 1..20 (default 10)"),
    ),
    _session_search,
    out.SESSION_SEARCH,
    read_only=True,
)
BYPASS = ToolSpec(
    "session_bypass",
    "Turn Signet's hooks off (enabled: true) or back on (false) for one session: while "
    "bypassed, every hook of that session answers empty (nothing injected at start or on a "
    "prompt, no transcript kept at its end). These tools still work. Other sessions are "
    "unaffected.",
    (
        Arg("session_key", STRING, "the session to bypass (its harness session id)", True),
        Arg("enabled", BOOLEAN, "true = bypass (hooks off), false = hooks on again", True),
    ),
    _session_bypass,
    out.SESSION_BYPASS,
)

SESSION_TOOLS = (SESSION_SEARCH, BYPASS)
