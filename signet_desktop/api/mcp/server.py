"""The MCP server object both transports serve: tools, resources and prompts over a backend
chosen per call.

Built on the SDK's low-level `Server` rather than `MCPServer`: `MCPServer` derives each
tool's arguments from a Python signature and validates them itself, wording refusals its own
way, while our tools must refuse with HTTP's messages and codes and declare their schemas once
(`tools.py`). Light to import (no FastAPI): `signet-mcp` builds it too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from signet_desktop.api.mcp.backend import MemoryBackend, ToolFailure
from signet_desktop.api.mcp.prompts import get_prompt, prompt_list
from signet_desktop.api.mcp.resources import (
    protocol_error,
    read_resource,
    resource_list,
    template_list,
)
from signet_desktop.api.mcp.tools import (
    TOOLS,
    call_tool,
    error_result,
    tool_definitions,
    unknown_tool,
)

SERVER_NAME = "signet"
INSTRUCTIONS = (
    "Signet memory: memory_search before answering from past context, memory_store for "
    "durable facts, preferences and decisions worth keeping across sessions, knowledge_expand "
    "for what is known about a named system or person, memory_feedback to rate what was "
    "recalled. Resources memory://memories/recent and memory://sessions/recent list your "
    "latest; the prompt recall_before_starting gathers what is known about a task."
)

Permission = Literal["read", "write"]
Context = ServerRequestContext[Any, Any]
BackendFor = Callable[[Context], MemoryBackend]
# Whether this caller may do this (`what`, needing `permission`): None, or the refusal.
Authorize = Callable[[Context, Permission, str], ToolFailure | None]


def build_server(
    backend_for: BackendFor, *, version: str, authorize: Authorize | None = None
) -> Server[Any]:
    """A server whose calls run over `backend_for(ctx)` (the caller's connection).

    `authorize` (the daemon's /mcp: the caller's permission and agent binding) is asked
    before each tool call, resource read and prompt; `signet-mcp` leaves it out, since the
    daemon's routes check its calls.
    """
    definitions = tool_definitions()

    def refusal(ctx: Context, permission: Permission, what: str) -> ToolFailure | None:
        return None if authorize is None else authorize(ctx, permission, what)

    async def list_tools(
        ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=definitions)

    async def run_tool(ctx: Context, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = TOOLS.get(params.name)
        if spec is None:
            raise unknown_tool(params.name)
        refused = refusal(ctx, "read" if spec.read_only else "write", f"the {spec.name} tool")
        if refused is not None:
            return error_result(refused.message, refused.code)
        return await call_tool(params.name, params.arguments, backend_for(ctx))

    async def list_resources(
        ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=resource_list())

    async def list_templates(
        ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=template_list())

    async def read(
        ctx: Context, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        refused = refusal(ctx, "read", "reading resources")
        if refused is not None:
            raise protocol_error(refused)
        return await read_resource(params.uri, backend_for(ctx))

    async def list_prompts(
        ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=prompt_list())

    async def prompt(ctx: Context, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        refused = refusal(ctx, "read", "prompts")
        if refused is not None:
            raise protocol_error(refused)
        return await get_prompt(params.name, params.arguments, backend_for(ctx))

    return Server(
        SERVER_NAME,
        version=version,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=run_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read,
        on_list_prompts=list_prompts,
        on_get_prompt=prompt,
    )
