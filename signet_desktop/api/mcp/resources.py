"""MCP resources: the calling agent's memories and sessions under `memory://` URIs.

- `memory://memories/recent`: the 20 newest memories and the store's counts
  (`GET /api/memories?limit=20`);
- `memory://memories/{id}`: one memory (`GET /api/memory/{id}`);
- `memory://sessions/recent`: the 20 latest retained sessions, no text (`GET /api/sessions`);
- `memory://sessions/{session_key}/transcript`: a session's turns
  (`GET /api/sessions/{key}/transcript`).

Scope is the connection's agent, as for the tools: another agent's memory or session is "not
found". A resource is context a client attaches for the model, so its texts (memory content,
turn text) come as data, as the search tools answer: the note first, then defanged text.
A URI this server does not serve, or one whose memory or session is not the caller's, is a
protocol error `-32602` (SEP-2164); a daemon that is down or a failure inside is `-32603`.
The error's `data` carries HTTP's code (`not_found`, `session_not_found`, ...).
"""

from __future__ import annotations

from urllib.parse import quote, unquote, urlsplit

import mcp_types as types
from mcp.shared.exceptions import MCPError

from signet_desktop.api.mcp.backend import MemoryBackend, ToolFailure
from signet_desktop.api.mcp.tool_spec import MAX_SESSION_KEY_CHARS, as_data, path_id

SCHEME = "memory"
JSON = "application/json"
RECENT_LIMIT = 20
RECENT_MEMORIES = "memory://memories/recent"
RECENT_SESSIONS = "memory://sessions/recent"
MEMORY_TEMPLATE = "memory://memories/{id}"
TRANSCRIPT_TEMPLATE = "memory://sessions/{session_key}/transcript"
# Refusals that are the server's trouble rather than the request's.
SERVER_FAILURES = frozenset({"daemon_unreachable", "daemon_timeout", "internal_error"})


def protocol_error(failure: ToolFailure) -> MCPError:
    """A refusal as a JSON-RPC error: -32603 for the server's trouble, else -32602."""
    code = types.INTERNAL_ERROR if failure.code in SERVER_FAILURES else types.INVALID_PARAMS
    return MCPError(code=code, message=failure.message, data={"code": failure.code})


def memory_uri(memory_id: str) -> str:
    return f"memory://memories/{quote(memory_id, safe='')}"


def transcript_uri(session_key: str) -> str:
    return f"memory://sessions/{quote(session_key, safe='')}/transcript"


def resource_list() -> list[types.Resource]:
    """The fixed resources, for `resources/list`."""
    return [
        types.Resource(
            name="recent-memories",
            title="Recent memories",
            uri=RECENT_MEMORIES,
            description=f"Your {RECENT_LIMIT} newest memories, with the store's counts.",
            mime_type=JSON,
        ),
        types.Resource(
            name="recent-sessions",
            title="Recent sessions",
            uri=RECENT_SESSIONS,
            description=f"Your {RECENT_LIMIT} latest retained sessions (keys, harness, "
            "project, status, turn counts; read one's transcript by its key).",
            mime_type=JSON,
        ),
    ]


def template_list() -> list[types.ResourceTemplate]:
    """The parameterised resources, for `resources/templates/list`."""
    return [
        types.ResourceTemplate(
            name="memory",
            title="A memory",
            uri_template=MEMORY_TEMPLATE,
            description="One of your memories by id, with all its fields.",
            mime_type=JSON,
        ),
        types.ResourceTemplate(
            name="session-transcript",
            title="A session's transcript",
            uri_template=TRANSCRIPT_TEMPLATE,
            description="The retained turns of one of your sessions, in order.",
            mime_type=JSON,
        ),
    ]


def _unknown(uri: str) -> MCPError:
    return MCPError(
        code=types.INVALID_PARAMS,
        message=f"Resource not found: {uri[:300]}",
        data={"code": "not_found", "uri": uri[:300]},
    )


def _segment(uri: str, raw: str, name: str, max_chars: int) -> str:
    """One percent-decoded path segment, checked as the route's path parameter."""
    try:
        return path_id({name: unquote(raw)}, name, max_chars)
    except ToolFailure as failure:
        raise MCPError(
            code=types.INVALID_PARAMS,
            message=f"{failure.message} (in {uri[:300]})",
            data={"code": failure.code},
        ) from None


async def _text(uri: str, backend: MemoryBackend) -> str:
    """The JSON a `memory://` URI names (MCPError for any other URI or a refusal)."""
    parts = urlsplit(uri)
    segments = parts.path.split("/")[1:] if parts.path.startswith("/") else []
    if parts.scheme != SCHEME or parts.query or parts.fragment or not segments:
        raise _unknown(uri)
    try:
        if parts.netloc == "memories" and segments == ["recent"]:
            found = await backend.list({"limit": RECENT_LIMIT})
            return as_data(found, (("memories", "content"),))
        if parts.netloc == "memories" and len(segments) == 1:
            memory_id = _segment(uri, segments[0], "id", 256)
            return as_data(await backend.get(memory_id), (("content",),))
        if parts.netloc == "sessions" and segments == ["recent"]:
            return await backend.sessions({"limit": RECENT_LIMIT})
        if parts.netloc == "sessions" and len(segments) == 2 and segments[1] == "transcript":
            key = _segment(uri, segments[0], "session_key", MAX_SESSION_KEY_CHARS)
            return as_data(await backend.session_transcript(key), (("turns", "text"),))
    except ToolFailure as failure:
        raise protocol_error(failure) from None
    raise _unknown(uri)


async def read_resource(uri: str, backend: MemoryBackend) -> types.ReadResourceResult:
    """`resources/read` of one `memory://` URI, scoped to the backend's agent."""
    text = await _text(uri, backend)
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type=JSON, text=text)]
    )
