"""The MCP tools, defined once (by capability: `memory_tools`, `session_tools`,
`knowledge_tools`) and run here over a MemoryBackend.

Errors follow the MCP spec (2025-11-25, the newest revision the SDK negotiates): a tool name
the server does not have is a protocol error, JSON-RPC `-32602` (invalid params), as is a
request that does not fit `tools/call` (the SDK refuses it before it reaches us). Everything
that happens once the tool is found is the tool's own result: a refused argument or a core
refusal is a tool error (`isError`) whose text is HTTP's error body `{"error", "code"}`, so
the model can read it and correct itself; an unexpected failure is logged and answered
`internal_error` the same way. Nothing is written by a refused call.

A successful call answers twice: one text block holding the route's JSON (for clients that
read only text) and the same object as `structuredContent`, which validates against the
tool's `outputSchema` (`output_schemas.py`).
"""

from __future__ import annotations

import json
import logging

import mcp_types as types
from mcp.shared.exceptions import MCPError

from signet_desktop.api.mcp.backend import Body, MemoryBackend, ToolFailure
from signet_desktop.api.mcp.knowledge_tools import KNOWLEDGE_TOOLS
from signet_desktop.api.mcp.memory_tools import MEMORY_TOOLS
from signet_desktop.api.mcp.secret_tools import SECRET_TOOLS
from signet_desktop.api.mcp.session_tools import SESSION_TOOLS
from signet_desktop.api.mcp.tool_spec import Arguments, ToolSpec, as_data

logger = logging.getLogger("signet_desktop.api.mcp")

TOOLS: dict[str, ToolSpec] = {
    spec.name: spec for spec in (*MEMORY_TOOLS, *SESSION_TOOLS, *KNOWLEDGE_TOOLS, *SECRET_TOOLS)
}


def tool_definitions() -> list[types.Tool]:
    """Every tool, for `tools/list`."""
    return [spec.definition() for spec in TOOLS.values()]


def unknown_tool(name: str) -> MCPError:
    """The protocol error for a tool this server does not have (JSON-RPC -32602)."""
    return MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name[:200]}")


def error_result(message: str, code: str) -> types.CallToolResult:
    """A tool error whose text is HTTP's error body."""
    text = json.dumps({"error": message, "code": code}, ensure_ascii=False)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def answer(text: str) -> types.CallToolResult:
    """A successful call: the JSON as text and as structured content."""
    structured = json.loads(text)
    if not isinstance(structured, dict):
        raise TypeError(f"a tool answered {type(structured).__name__}, not a JSON object")
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=structured
    )


async def call_tool(
    name: str, arguments: Arguments | None, backend: MemoryBackend
) -> types.CallToolResult:
    """Run one tool; an unknown name raises the protocol error, everything else is a result."""
    spec = TOOLS.get(name)
    if spec is None:
        raise unknown_tool(name)
    try:
        return answer(await spec.run(arguments or {}, backend))
    except ToolFailure as failure:
        return error_result(failure.message, failure.code)
    except Exception:
        logger.exception("MCP tool %s failed", name)
        return error_result("internal error", "internal_error")


__all__ = [
    "TOOLS",
    "Body",
    "ToolSpec",
    "as_data",
    "call_tool",
    "error_result",
    "tool_definitions",
    "unknown_tool",
]
