"""The `claims` post-fusion stage: a memory stating what the knowledge graph holds as the asked
attribute of an entity the question names is the answer, not one more memory sharing a word.

"which database does billing use?" names the entity `billing` and the key `database` of
one of its active claims, whose value is "Postgres 16": among the top `top_n` candidates, the
memories that name billing and hold every word of that value ("billing runs on Postgres 16")
go first, in their fused order, ahead of the rest (each rank keeps the score it had, as the
reranker's reorder does). Lexical and vector evidence cannot see it: the answer shares only
the subject with the question, while memories about some other database, or a runbook about
billing's database, share the rarer word "database" too. The question must name the claim's
key or its aspect (as a word, a plural `s` folded), besides the entity; only keyed claims
(attribute values, up to `MAX_VALUE_WORDS` words, confidence >= `MIN_CONFIDENCE`) count. No
focal entity, no keyed claim the question names, or no candidate stating a value: the
ranking stays as fused. Each moved hit records why. docs/RECALL.md, "Claims as evidence".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from signet_desktop.recall.channels import ChannelRequest, StageClock
from signet_desktop.recall.fusion import FusedHit
from signet_desktop.recall.sanitize import query_tokens, words
from signet_desktop.recall.stages import reordered
from signet_desktop.recall.traversal import focal_entities
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.memories import get_memories

STAGE_NAME = "claims"
DEFAULT_TOP_N = 50
MAX_VALUE_WORDS = 6  # an attribute's value ("Postgres 16"), not a sentence
MAX_CLAIMS = 200
MIN_CONFIDENCE = 0.5

# The named entities' active keyed claims, with the aspect each belongs to.
KEYED_CLAIMS = """
SELECT s.entity_id, s.name AS aspect, c.claim_key, c.content
FROM entity_aspects s
JOIN entity_attributes c ON c.aspect_id = s.id
WHERE s.entity_id IN (SELECT value FROM json_each(:entity_ids))
  AND s.agent_id = :agent_id AND s.status = 'active'
  AND c.agent_id = :agent_id AND c.status = 'active'
  AND c.claim_key IS NOT NULL AND c.confidence >= :min_confidence
ORDER BY c.confidence DESC, c.id
LIMIT :max_claims
"""
_SPLIT = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True, slots=True)
class AskedValue:
    """A value the graph holds for an attribute the question asks about."""

    entity: str  # the entity's name
    entity_words: frozenset[str]
    key: str
    value: str
    value_words: frozenset[str]

    def stated_by(self, content: str) -> bool:
        """Does `content` name the entity and hold every word of the value?"""
        held = words(content)
        return self.entity_words <= held and self.value_words <= held


def _fold(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _named(label: str | None, asked: set[str]) -> bool:
    """Does the question name `label` (every word of it, plurals folded)?"""
    parts = {_fold(w) for w in _SPLIT.split((label or "").lower()) if len(w) > 1}
    return bool(parts) and parts <= asked


def asked_values(conn: Connection, agent_id: str, question: str) -> list[AskedValue]:
    """The values of the claims the question asks for: of an entity it names, keyed by (or in
    an aspect named by) another of its words."""
    entities = focal_entities(conn, agent_id, question)
    if not entities:
        return []
    names = {entity.id: entity.name for entity in entities}
    rows = conn.execute(
        KEYED_CLAIMS,
        {
            "entity_ids": json.dumps(list(names)),
            "agent_id": agent_id,
            "min_confidence": MIN_CONFIDENCE,
            "max_claims": MAX_CLAIMS,
        },
    ).fetchall()
    asked = {_fold(token) for token in query_tokens(question)}
    found = []
    for row in rows:
        name = names[row["entity_id"]]
        entity_words = frozenset(words(name))
        rest = asked - {_fold(w) for w in entity_words}
        value_words = frozenset(words(row["content"]))
        if not value_words or len(value_words) > MAX_VALUE_WORDS:
            continue
        if _named(row["claim_key"], rest) or _named(row["aspect"], rest):
            found.append(
                AskedValue(name, entity_words, row["claim_key"], row["content"], value_words)
            )
    return found


class ClaimEvidence:
    """The `claims` stage (see the module docstring); implements `PostFusionStage`."""

    name = STAGE_NAME

    def __init__(self, *, top_n: int = DEFAULT_TOP_N) -> None:
        if top_n < 1:
            raise ValueError("top_n must be at least 1")
        self.top_n = top_n

    def apply(
        self,
        conn: Connection,
        request: ChannelRequest,
        hits: list[FusedHit],
        clock: StageClock,
    ) -> list[FusedHit]:
        """The top `top_n` hits stating an asked value first, then the rest, as fused."""
        values = asked_values(conn, request.agent_id, request.text)
        if not values:
            return list(hits)
        head, tail = hits[: self.top_n], hits[self.top_n :]
        memories = get_memories(conn, request.agent_id, [hit.memory_id for hit in head])
        stated: dict[int, AskedValue] = {}
        for i, hit in enumerate(head):
            memory = memories.get(hit.memory_id)
            found = next((v for v in values if memory and v.stated_by(memory.content)), None)
            if found is not None:
                stated[i] = found
        if not stated:
            return list(hits)
        ranks = [*stated, *(i for i in range(len(head)) if i not in stated)]
        first = next(iter(stated.values()))
        reasons = [
            f"states {v.entity}'s {v.key} as the knowledge graph holds it: '{v.value}'"
            if (v := stated.get(i))
            else f"after {len(stated)} memory(ies) stating {first.entity}'s {first.key}"
            for i in range(len(head))
        ]
        return reordered(head, ranks, STAGE_NAME, reasons) + tail
