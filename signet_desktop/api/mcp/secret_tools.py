"""The secret tool: list the names of the agent's stored secrets (a value never leaves)."""

from __future__ import annotations

from signet_desktop.api.mcp import output_schemas as out
from signet_desktop.api.mcp.backend import MemoryBackend
from signet_desktop.api.mcp.tool_spec import Arguments, ToolSpec


async def _secret_list(arguments: Arguments, backend: MemoryBackend) -> str:
    return await backend.secret_names()


SECRET_LIST = ToolSpec(
    "secret_list",
    "The names of the secrets stored for this agent (`signet secret put NAME`), usable as "
    "$secret:NAME in agent.yaml. Names only: no tool, route or log ever returns a value.",
    (),
    _secret_list,
    out.SECRET_LIST,
    read_only=True,
)

SECRET_TOOLS = (SECRET_LIST,)
