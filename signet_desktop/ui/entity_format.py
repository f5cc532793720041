"""What the Entities pane shows, computed without Qt: list rows, the entity page, the graph.

Every string and every position the pane lays out comes from here, so it is unit-tested
without widgets (`tests/unit/ui/test_entity_format.py`). Input values are the knowledge
graph's domain values (`domain/knowledge.py`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from signet_desktop.domain.knowledge import (
    Claim,
    Dependency,
    EntityDetail,
    EntityMention,
    EntityPage,
    KnowledgeStats,
)
from signet_desktop.ui.hit_format import preview, relative_date

EXCERPT_CHARS = 180
STATUS_CHOICES = (("Active", "active"), ("Archived", "archived"), ("Merged", "merged"),
                  ("Unsupported", "unsupported"), ("Any status", None))  # fmt: skip
CLAIM_ORDER = {"active": 0, "superseded": 1, "archived": 2}
MAX_NEIGHBOURS = 12  # the node-link view draws at most this many neighbours


def plural(count: int, one: str, many: str | None = None) -> str:
    """`1 entity`, `3 entities`, `1,204 memories`."""
    word = one if count == 1 else many or f"{one}s"
    return f"{count:,} {word}"


def count_text(page: EntityPage, filtered: bool = False) -> str:
    """`12 entities`, `12 matching`, or `showing 200 of 1,204 entities` when paged."""
    total = page.total
    head = f"{total:,} matching" if filtered else plural(total, "entity", "entities")
    if len(page.items) < total:
        return f"showing {len(page.items):,} of {head}"
    return head


def type_choices(stats: KnowledgeStats | None) -> list[tuple[str, str | None]]:
    """The type filter: `All types`, then each type the agent has, with its count."""
    choices: list[tuple[str, str | None]] = [("All types", None)]
    if stats is None:
        return choices
    for kind, count in sorted(stats.entity_types.items(), key=lambda kv: (-kv[1], kv[0])):
        if count:
            choices.append((f"{kind} ({count:,})", kind))
    return choices


def stats_text(stats: KnowledgeStats) -> str:
    """`12 entities · 30 claims · 8 links · 140 mentions` (active entities and claims)."""
    entities = int(stats.entities.get("active", 0))
    claims = int(stats.claims.get("active", 0))
    return " · ".join(
        (
            plural(entities, "entity", "entities"),
            plural(claims, "claim"),
            plural(stats.dependencies, "link"),
            plural(stats.mentions, "mention"),
        )
    )


def entity_meta(entity_type: str, mentions: int, status: str, pinned: bool = False) -> str:
    """`system · 14 mentions` (a status other than active, and pinned, shown too)."""
    parts = [entity_type, plural(mentions, "mention")]
    if status != "active":
        parts.append(status)
    if pinned:
        parts.append("pinned")
    return " · ".join(parts)


def detail_meta(detail: EntityDetail) -> str:
    """The page's second line: type, status, mentions, aliases."""
    entity = detail.entity
    parts = [entity.entity_type, entity.status, plural(detail.mention_total, "mention")]
    if entity.pinned:
        parts.append("pinned")
    if detail.aliases:
        parts.append("also " + ", ".join(a.alias for a in detail.aliases))
    return " · ".join(parts)


def provenance_text(detail: EntityDetail, now: datetime | None = None) -> str:
    """Who created the entity, when, and from what."""
    entity = detail.entity
    parts = [f"created by {entity.created_by}", relative_date(entity.created_at, now)]
    if entity.source_kind and entity.source_id:
        parts.append(f"from {entity.source_kind} {short(entity.source_id)}")
    if entity.archived_reason:
        parts.append(f"archived: {entity.archived_reason}")
    return " · ".join(parts)


def short(identifier: str, keep: int = 8) -> str:
    """An id cut to `keep` characters with an ellipsis (ids shorter than that unchanged)."""
    return identifier if len(identifier) <= keep else identifier[:keep] + "…"


@dataclass(frozen=True, slots=True)
class ClaimRow:
    """One claim under its aspect: current (`history=False`) or an earlier/archived version."""

    claim_id: str
    text: str  # `database = Postgres 16` or the content alone
    status: str
    version: str  # `v2` ("" for an unversioned claim)
    meta: str  # confidence, when, source memory
    history: bool
    memory_id: str | None


@dataclass(frozen=True, slots=True)
class AspectBlock:
    """An aspect's heading and its claims, current first then history (newest first)."""

    name: str
    summary: str  # `2 current · 1 earlier`
    rows: tuple[ClaimRow, ...]


def claim_text(claim: Claim) -> str:
    """`database = Postgres 16` when the claim has a key, else its content."""
    return f"{claim.claim_key} = {claim.content}" if claim.claim_key else claim.content


def claim_row(claim: Claim, now: datetime | None = None) -> ClaimRow:
    parts = [f"confidence {claim.confidence:.2f}", relative_date(claim.updated_at, now)]
    if claim.memory_id:
        parts.append(f"from memory {short(claim.memory_id)}")
    if claim.evidence:
        parts.append(plural(len(claim.evidence), "quote"))
    versioned = claim.version > 1 or claim.previous_attribute_id or claim.superseded_by
    return ClaimRow(
        claim_id=claim.id,
        text=claim_text(claim),
        status=claim.status,
        version=f"v{claim.version}" if versioned else "",
        meta=" · ".join(parts),
        history=claim.status != "active",
        memory_id=claim.memory_id,
    )


def aspect_blocks(detail: EntityDetail, now: datetime | None = None) -> list[AspectBlock]:
    """Every aspect with its claims; within an aspect current claims first, then superseded
    and archived versions newest first, so a claim's history reads downward."""
    blocks: list[AspectBlock] = []
    for item in detail.aspects:
        claims = sorted(
            item.claims,
            key=lambda c: (CLAIM_ORDER.get(c.status, 3), -c.version, c.updated_at),
        )
        current = sum(1 for c in claims if c.status == "active")
        earlier = len(claims) - current
        summary = [plural(current, "current claim")]
        if earlier:
            summary.append(f"{earlier:,} earlier")
        rows = tuple(claim_row(c, now) for c in claims)
        blocks.append(AspectBlock(item.aspect.name, " · ".join(summary), rows))
    return blocks


@dataclass(frozen=True, slots=True)
class DependencyRow:
    """One link: its direction from this entity, the other end, type and strength."""

    dependency_id: str
    direction: str  # "out" (this → other) or "in" (other → this)
    other_id: str
    other_name: str
    text: str  # `depends_on → Postgres`
    strength: float
    meta: str
    link_type: str = ""


def dependency_rows(detail: EntityDetail) -> list[DependencyRow]:
    """Outgoing links, then incoming, each sorted by strength (strongest first)."""
    rows: list[DependencyRow] = []
    for direction, links in (("out", detail.outgoing), ("in", detail.incoming)):
        for link in sorted(links, key=lambda d: (-d.strength, d.dependency_type)):
            rows.append(_dependency_row(link, direction))
    return rows


def _dependency_row(link: Dependency, direction: str) -> DependencyRow:
    if direction == "out":
        other_id, other = link.target_entity_id, link.target_name or short(link.target_entity_id)
        text = f"{link.dependency_type} → {other}"
    else:
        other_id, other = link.source_entity_id, link.source_name or short(link.source_entity_id)
        text = f"{other} → {link.dependency_type}"
    meta = [f"confidence {link.confidence:.2f}"]
    if link.status != "active":
        meta.append(link.status)
    if link.reason:
        meta.append(preview(link.reason, 80))
    return DependencyRow(
        link.id,
        direction,
        other_id,
        other,
        text,
        link.strength,
        " · ".join(meta),
        link.dependency_type,
    )


@dataclass(frozen=True, slots=True)
class MentionRow:
    """A memory that mentions the entity: its excerpt and its provenance."""

    memory_id: str
    excerpt: str
    provenance: str  # `fact · alice · via hook · 2 days ago`
    deleted: bool


def mention_row(mention: EntityMention, now: datetime | None = None) -> MentionRow:
    parts = [mention.memory_type]
    if mention.who:
        parts.append(mention.who)
    if mention.source_type:
        parts.append(f"via {mention.source_type}")
    parts.append(relative_date(mention.memory_created_at, now))
    if mention.mention_text:
        parts.append(f"as “{mention.mention_text}”")
    if mention.memory_deleted:
        parts.append("forgotten")
    return MentionRow(
        mention.memory_id,
        preview(mention.excerpt, EXCERPT_CHARS),
        " · ".join(parts),
        mention.memory_deleted,
    )


def mentions_heading(detail: EntityDetail) -> str:
    """`Mentioned in 14 memories` (`, newest 50 shown` when the page is partial)."""
    shown, total = len(detail.mentions), detail.mention_total
    head = f"Mentioned in {plural(total, 'memory', 'memories')}"
    return head if shown >= total else f"{head} · newest {shown:,} shown"


# -- the neighbourhood view ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Node:
    """A node of the neighbourhood: position in scene units (focal at the origin)."""

    entity_id: str
    label: str
    x: float
    y: float
    focal: bool


@dataclass(frozen=True, slots=True)
class Edge:
    """A link drawn between two nodes (source → target), its type and strength."""

    source: str
    target: str
    label: str
    strength: float


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    """What the node-link view draws; `hidden` neighbours did not fit."""

    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    hidden: int = 0


def neighbourhood(
    detail: EntityDetail, radius: float = 120.0, most: int = MAX_NEIGHBOURS
) -> Neighbourhood:
    """The entity at the centre and its linked entities (strongest first, at most `most`) on a
    circle, evenly spaced from the top clockwise; one edge per link, both directions."""
    entity = detail.entity
    links = [(d, d.target_entity_id, d.target_name) for d in detail.outgoing]
    links += [(d, d.source_entity_id, d.source_name) for d in detail.incoming]
    strongest: dict[str, tuple[float, str]] = {}
    for link, other, name in links:
        if other == entity.id:
            continue  # a self-loop has no neighbour to draw
        best = strongest.get(other)
        if best is None or link.strength > best[0]:
            strongest[other] = (link.strength, name or short(other))
    ranked = sorted(strongest.items(), key=lambda kv: (-kv[1][0], kv[1][1]))
    shown = ranked[:most]
    nodes = [Node(entity.id, entity.name, 0.0, 0.0, True)]
    count = len(shown)
    for n, (other, (_strength, name)) in enumerate(shown):
        angle = -math.pi / 2 + 2 * math.pi * n / max(count, 1)
        nodes.append(Node(other, name, radius * math.cos(angle), radius * math.sin(angle), False))
    drawn = {node.entity_id for node in nodes}
    edges = tuple(
        Edge(link.source_entity_id, link.target_entity_id, link.dependency_type, link.strength)
        for link, other, _name in links
        if other in drawn and other != entity.id
    )
    return Neighbourhood(tuple(nodes), edges, hidden=len(ranked) - len(shown))


def edge_width(strength: float) -> float:
    """Line width in pixels for a link of `strength` in [0, 1]: 1 to 3.5."""
    return 1.0 + 2.5 * max(0.0, min(1.0, strength))


def elide(label: str, chars: int = 18) -> str:
    """A node label cut to `chars` with an ellipsis."""
    return label if len(label) <= chars else label[: chars - 1].rstrip() + "…"


# -- the recall hit → traversal path link ----------------------------------------------------


def traversal_focal(evidence: object) -> tuple[str | None, tuple[str, ...]]:
    """From a hit's `channels["traversal"]` evidence: the focal entity id (the path's first
    entity step) and the path's steps as words, when the channel recorded a path."""
    steps = _path_of(evidence)
    focal = next((_field(s, "id") for s in steps if _field(s, "kind") == "entity"), None)
    return focal or None, tuple(w for w in (_step_words(s) for s in steps) if w)


def path_text(words: Sequence[str]) -> str:
    """`billing → (depends_on) → Postgres → mentions`."""
    return " → ".join(words)


def _path_of(evidence: object) -> Sequence[object]:
    path = (
        evidence.get("path") if isinstance(evidence, Mapping) else getattr(evidence, "path", None)
    )
    if isinstance(path, str) or not isinstance(path, Sequence):
        return ()
    return path


def _field(step: object, key: str) -> str:
    value = step.get(key) if isinstance(step, Mapping) else getattr(step, key, None)
    return value if isinstance(value, str) else ""


def _step_words(step: object) -> str:
    kind, name = _field(step, "kind"), _field(step, "name") or short(_field(step, "id"))
    if kind == "dependency":
        return f"({name})" if name else ""
    if kind == "mention":
        return "mentions"
    return name
