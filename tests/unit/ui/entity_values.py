"""Knowledge-graph domain values for the Entities pane tests (a billing entity and its graph)."""

from __future__ import annotations

from datetime import UTC, datetime

from signet_desktop.domain.knowledge import (
    Alias,
    Aspect,
    AspectDetail,
    Claim,
    Dependency,
    Entity,
    EntityDetail,
    EntityMention,
    Evidence,
)

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
WHEN = "2026-11-29T12:00:00.000Z"


def entity(eid: str = "e1", name: str = "billing", **kw: object) -> Entity:
    fields: dict[str, object] = dict(
        id=eid, agent_id="default", name=name, canonical_name=name.lower(),
        entity_type="system", description=None, mentions=3, pinned=False, status="active",
        merged_into=None, source_kind=None, source_id=None, created_by="claude-code",
        created_at=WHEN, updated_at=WHEN,
    )  # fmt: skip
    fields.update(kw)
    return Entity(**fields)  # type: ignore[arg-type]


def claim(cid: str, content: str, status: str = "active", version: int = 1,
          **kw: object) -> Claim:  # fmt: skip
    fields: dict[str, object] = dict(
        id=cid, aspect_id="a1", agent_id="default", memory_id="m-000000001", kind="attribute",
        content=content, confidence=0.9, importance=0.5, status=status, claim_key="database",
        group_key=None, version=version, version_root_id=None, previous_attribute_id=None,
        superseded_by=None, evidence=(Evidence("moved to Postgres 16", "memory:m1"),),
        proposal_id=None, created_at=WHEN, updated_at=WHEN,
    )  # fmt: skip
    fields.update(kw)
    return Claim(**fields)  # type: ignore[arg-type]


def link(lid: str, source: str, target: str, strength: float, **kw: object) -> Dependency:
    fields: dict[str, object] = dict(
        id=lid, agent_id="default", source_entity_id=source, target_entity_id=target,
        dependency_type="depends_on", strength=strength, confidence=0.8, reason=None,
        aspect_id=None, status="active", created_at=WHEN, updated_at=WHEN,
        source_name=source.upper(), target_name=target.upper(),
    )  # fmt: skip
    fields.update(kw)
    return Dependency(**fields)  # type: ignore[arg-type]


def detail(**kw: object) -> EntityDetail:
    aspect = Aspect("a1", "e1", "default", "storage", "storage", 1.0, "active", WHEN, WHEN)
    fields: dict[str, object] = dict(
        entity=entity(),
        aliases=(Alias("x1", "e1", "billing-svc", "billing svc", "manual", WHEN),),
        aspects=(
            AspectDetail(
                aspect,
                (
                    claim("c1", "Postgres 14", status="superseded", version=1, superseded_by="c2"),
                    claim("c2", "Postgres 16", version=2, previous_attribute_id="c1"),
                ),
            ),
        ),
        outgoing=(link("d1", "e1", "pg", 0.9), link("d2", "e1", "redis", 0.3)),
        incoming=(link("d3", "api", "e1", 0.6, dependency_type="calls"),),
        mentions=(
            EntityMention(
                "m1",
                "billing",
                1.0,
                WHEN,
                "billing  runs on\nPostgres 16",
                "fact",
                "alice",
                "hook",
                WHEN,
                False,
            ),
        ),
        mention_total=3,
    )
    fields.update(kw)
    return EntityDetail(**fields)  # type: ignore[arg-type]
