"""Derived graph rows that cite one memory as their evidence (read-only).

A row cites `memory:<id>` when it was written from that memory: an active claim whose
`memory_id` is it or whose evidence names it, an active link whose evidence names it, an
active entity whose source is it or that the memory mentions (`memory_entity_mentions`).
Each comes with what it takes from the memory's text: the quotes of its evidence items that
name the memory (an empty quote: the memory as a whole), an entity's name, a mention's text.
A content edit asks whether the new text still holds them (service/memories/content_edits.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres

# An evidence item names the memory when its source_ref parses as `memory:<id>` the way the
# apply seam parses it (dreaming/sources.py: parse_ref: kind case-insensitive, both trimmed).
_REF = "json_extract(e.value, '$.source_ref')"
_NAMES_MEMORY = (
    f"(lower(trim(substr({_REF}, 1, instr({_REF}, ':') - 1))) = 'memory'"
    f" AND trim(substr({_REF}, instr({_REF}, ':') + 1)) = :memory)"
)
# The quotes of a row's evidence items [{quote, source_ref}] that name the memory.
_QUOTES = (
    "COALESCE((SELECT json_group_array(COALESCE(json_extract(e.value, '$.quote'), ''))"
    " FROM json_each({table}.proposal_evidence) e WHERE " + _NAMES_MEMORY + "), '[]')"
)
# A LIKE on the raw JSON first (cheap, a superset), then the exact check on parsed items.
_CITES = (
    "{table}.proposal_evidence LIKE :like AND EXISTS (SELECT 1"
    " FROM json_each({table}.proposal_evidence) e WHERE " + _NAMES_MEMORY + ")"
)

CITING_CLAIMS = f"""
SELECT id, {_QUOTES.format(table="entity_attributes")} AS quotes FROM entity_attributes
WHERE agent_id = :agent AND status = 'active'
  AND (memory_id = :memory OR {_CITES.format(table="entity_attributes")})
ORDER BY created_at, id
"""
CITING_LINKS = f"""
SELECT id, {_QUOTES.format(table="entity_dependencies")} AS quotes FROM entity_dependencies
WHERE agent_id = :agent AND status = 'active' AND {_CITES.format(table="entity_dependencies")}
ORDER BY created_at, id
"""
CITING_ENTITIES = """
SELECT id, json_array(name) AS quotes FROM entities
WHERE agent_id = :agent AND status = 'active' AND source_kind = 'memory' AND source_id = :memory
UNION ALL
SELECT e.id, json_array(COALESCE(NULLIF(m.mention_text, ''), e.name))
FROM memory_entity_mentions m JOIN entities e ON e.id = m.entity_id
WHERE m.agent_id = :agent AND m.memory_id = :memory AND e.agent_id = :agent
  AND e.status = 'active'
"""
QUERIES = (("claim", CITING_CLAIMS), ("link", CITING_LINKS), ("entity", CITING_ENTITIES))

# PostgreSQL: the same reads over jsonb (evidence is a jsonb array; `->>` for json_extract,
# strpos/split_part for instr/substr, which refuses the negative length SQLite reads as '').
_REF_PG = "(e.value ->> 'source_ref')"
_NAMES_MEMORY_PG = (
    f"(strpos({_REF_PG}, ':') > 0 AND lower(trim(split_part({_REF_PG}, ':', 1))) = 'memory'"
    f" AND trim(substr({_REF_PG}, strpos({_REF_PG}, ':') + 1)) = :memory)"
)
_QUOTES_PG = (
    "COALESCE((SELECT jsonb_agg(COALESCE(e.value ->> 'quote', ''))"
    " FROM jsonb_array_elements({table}.proposal_evidence) e WHERE "
    + _NAMES_MEMORY_PG
    + "), '[]'::jsonb)"
)
_CITES_PG = (
    "{table}.proposal_evidence::text LIKE :like AND EXISTS (SELECT 1"
    " FROM jsonb_array_elements({table}.proposal_evidence) e WHERE " + _NAMES_MEMORY_PG + ")"
)
CITING_CLAIMS_PG = f"""
SELECT id, {_QUOTES_PG.format(table="entity_attributes")} AS quotes FROM entity_attributes
WHERE agent_id = :agent AND status = 'active'
  AND (memory_id = :memory OR {_CITES_PG.format(table="entity_attributes")})
ORDER BY created_at, id
"""
CITING_LINKS_PG = f"""
SELECT id, {_QUOTES_PG.format(table="entity_dependencies")} AS quotes FROM entity_dependencies
WHERE agent_id = :agent AND status = 'active' AND {_CITES_PG.format(table="entity_dependencies")}
ORDER BY created_at, id
"""
CITING_ENTITIES_PG = CITING_ENTITIES.replace("json_array(", "jsonb_build_array(")
QUERIES_PG = (
    ("claim", CITING_CLAIMS_PG),
    ("link", CITING_LINKS_PG),
    ("entity", CITING_ENTITIES_PG),
)


@dataclass(frozen=True, slots=True)
class Citation:
    """A derived row citing the memory: `claim`, `link` or `entity`, its id, and what it takes
    from the memory's text (quotes; `""` stands for the memory as a whole)."""

    kind: str
    row_id: str
    quotes: tuple[str, ...]

    @property
    def ref(self) -> str:
        """`kind:id`, the form attention subjects and the apply seam use."""
        return f"{self.kind}:{self.row_id}"


def _quotes(value: Any) -> tuple[str, ...]:
    return tuple(str(quote) for quote in json.loads(value or "[]"))


def citing_rows(conn: Connection, agent_id: str, memory_id: str) -> list[Citation]:
    """Every active claim, link and entity of the agent citing this memory, one per row
    (an entity both sourced from and mentioned by it comes once, with both texts)."""
    # JSON escapes non-ASCII, quotes and backslashes: such an id skips the prefilter.
    plain = memory_id.isascii() and '"' not in memory_id and "\\" not in memory_id
    params = {"agent": agent_id, "memory": memory_id, "like": f"%{memory_id}%" if plain else "%"}
    found: dict[str, Citation] = {}
    for kind, sql in QUERIES_PG if is_postgres(conn) else QUERIES:
        for row in conn.execute(sql, params).fetchall():
            citation = Citation(kind, str(row["id"]), _quotes(row["quotes"]))
            seen = found.get(citation.ref)
            if seen is not None:
                citation = Citation(kind, citation.row_id, (*seen.quotes, *citation.quotes))
            found[citation.ref] = citation
    return list(found.values())
