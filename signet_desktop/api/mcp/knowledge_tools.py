"""The knowledge tools: list and read the agent's entities, and expand one by name."""

from __future__ import annotations

from signet_desktop.api.mcp import output_schemas as out
from signet_desktop.api.mcp.backend import MemoryBackend
from signet_desktop.api.mcp.tool_spec import (
    INTEGER,
    STRING,
    Arg,
    Arguments,
    TextPath,
    ToolSpec,
    as_data,
    check_integer,
    check_string,
    memory_id,
)

# The texts of an expansion a model reads: the graph's claims and the memories behind them.
EXPANDED: tuple[TextPath, ...] = (
    ("memories", "content"),
    ("constraints", "content"),
    ("aspects", "attributes", "content"),
)


async def _knowledge_list(arguments: Arguments, backend: MemoryBackend) -> str:
    for name in ("limit", "offset"):
        check_integer(arguments, name)
    for name in ("query", "type", "status"):
        check_string(arguments, name)
    return await backend.knowledge_entities(KNOWLEDGE_LIST.body(arguments))


async def _knowledge_get(arguments: Arguments, backend: MemoryBackend) -> str:
    check_integer(arguments, "mention_limit")
    target = memory_id(arguments)  # the same path-parameter rules
    return await backend.knowledge_entity(target, KNOWLEDGE_GET.body(arguments, frozenset({"id"})))


async def _knowledge_expand(arguments: Arguments, backend: MemoryBackend) -> str:
    return as_data(await backend.knowledge_expand(KNOWLEDGE_EXPAND.body(arguments)), EXPANDED)


KNOWLEDGE_LIST = ToolSpec(
    "knowledge_list_entities",
    "The knowledge graph's entities (people, projects, systems, tools...), pinned then most "
    "mentioned first, with type, status and mention count, as JSON.",
    (
        Arg("query", STRING, "only entities whose name or alias contains this", field="q"),
        Arg("type", STRING, "only this entity type, e.g. person, project, system, tool"),
        Arg("status", STRING, "active (default), archived, merged, unsupported or all"),
        Arg("limit", INTEGER, "entities to return, 1..500 (default 50)"),
        Arg("offset", INTEGER, "entities to skip (default 0)"),
    ),
    _knowledge_list,
    out.KNOWLEDGE_LIST,
    read_only=True,
)
KNOWLEDGE_GET = ToolSpec(
    "knowledge_get_entity",
    "One entity in full: aliases, aspects with their claims (active and superseded "
    "versions), dependencies both ways and the memories that mention it, as JSON.",
    (
        Arg("id", STRING, "the entity id (from knowledge_list_entities)", True),
        Arg(
            "mention_limit",
            INTEGER,
            "mentions to return, 1..500 (default 50)",
            field="mentionLimit",
        ),
    ),
    _knowledge_get,
    out.KNOWLEDGE_GET,
    read_only=True,
)
KNOWLEDGE_EXPAND = ToolSpec(
    "knowledge_expand",
    "Drill into one entity of the knowledge graph by name: its constraints (and those of what "
    "it depends on), aspects with their claims, outgoing dependencies, and the memories the "
    "graph reaches from it, within a token budget, as JSON.",
    (
        Arg(
            "entity_name",
            STRING,
            "the entity's name or alias (e.g. 'signetai', 'Postgres')",
            True,
            field="entity",
        ),
        Arg("aspect_filter", STRING, "only aspects whose name contains this", field="aspect"),
        Arg("question", STRING, "what you want to know: memories using its words come first"),
        Arg(
            "max_tokens",
            INTEGER,
            "budget for the memories' text, in tokens (~4 characters), 1..10000 (default 2000)",
            field="maxTokens",
        ),
    ),
    _knowledge_expand,
    out.KNOWLEDGE_EXPAND,
    read_only=True,
)

KNOWLEDGE_TOOLS = (KNOWLEDGE_LIST, KNOWLEDGE_GET, KNOWLEDGE_EXPAND)
