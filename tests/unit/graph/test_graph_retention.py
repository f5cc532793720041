"""Retention and the graph: a purged memory takes its mention rows and the entities only it
supported; claims only it evidenced become `unsupported` (never deleted); the counter follows."""

from __future__ import annotations

from signet_desktop.domain.knowledge import Evidence, Provenance
from signet_desktop.domain.memory import Actor
from signet_desktop.maintenance.retention import purge_tombstones
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage import graph, graph_claims
from signet_desktop.storage import knowledge_reads as reads
from signet_desktop.storage.database import Database
from tests.support.graph import provenance, seed_graph

ACTOR = Actor(changed_by="tester")
A = "agent-a"


def tombstone(db: Database, memories: MemoryService, memory_id: str) -> None:
    memories.forget(A, memory_id, reason="test", if_version=None, actor=ACTOR)
    with db.write() as conn:
        conn.execute(
            "UPDATE memories SET deleted_at = '2020-01-01T00:00:00.000Z' WHERE id = ?",
            (memory_id,),
        )


def test_purge_marks_claims_and_drops_auto_created_orphans(db: Database) -> None:
    memories = MemoryService(db)
    gone = memories.remember(
        RememberRequest(content="Wombat runs on port 9000", agent_id=A), ACTOR
    ).memory.id
    other = memories.remember(
        RememberRequest(content="an unrelated note", agent_id=A), ACTOR
    ).memory.id
    from_memory = provenance(A, source_memory_id=gone)
    seeded = seed_graph(db, A, entities=["Kept"], mentions={"Kept": ["Kept is mentioned"]})
    with db.write() as conn:
        wombat, _ = graph.create_entity(conn, from_memory, name="Wombat", entity_type="system")
        orphan, _ = graph.create_entity(conn, from_memory, name="Orphan")
        explicit, _ = graph.create_entity(conn, provenance(A), name="Explicit")
        for entity in (wombat, orphan, explicit):
            graph.link_mention(conn, from_memory, gone, entity.id, entity.name)
        graph.link_mention(conn, from_memory, gone, seeded.entity("Kept").id, "Kept")
        aspect, _ = graph_claims.create_aspect(conn, from_memory, wombat.id, "deployment")
        only, _ = graph_claims.add_claim_value(conn, from_memory, aspect.id, "port 9000")
        cited = with_other_evidence(gone)
        backed, _ = graph_claims.add_claim_value(conn, cited, aspect.id, "runs in docker")
        unrelated, _ = graph_claims.add_claim_value(
            conn, provenance(A, source_memory_id=other), aspect.id, "owned by ops"
        )
    assert reads.entity(db.reader(), A, wombat.id).mentions == 1  # type: ignore[union-attr]
    tombstone(db, memories, gone)

    with db.write() as conn:
        batch = purge_tombstones(conn, "2021-01-01T00:00:00.000Z", 100)

    assert (batch.memories, batch.claims_unsupported, batch.entities) == (1, 1, 1)
    conn = db.reader()
    assert reads.claim(conn, A, only.id).status == "unsupported"  # type: ignore[union-attr]
    assert reads.claim(conn, A, backed.id).status == "active"  # type: ignore[union-attr]
    assert reads.claim(conn, A, unrelated.id).status == "active"  # type: ignore[union-attr]
    # Orphan (auto-created, nothing else) goes; Wombat keeps its aspect; Explicit was made by
    # a person; Kept is still mentioned by another memory.
    assert reads.entity(conn, A, orphan.id) is None
    for survivor in (wombat.id, explicit.id, seeded.entity("Kept").id):
        assert reads.entity(conn, A, survivor) is not None
    assert reads.entity(conn, A, wombat.id).mentions == 0  # type: ignore[union-attr]
    assert reads.entity(conn, A, seeded.entity("Kept").id).mentions == 1  # type: ignore[union-attr]
    purged = conn.execute(
        "SELECT operation, before_json IS NOT NULL FROM graph_mutations WHERE target_id = ?"
        " ORDER BY seq DESC LIMIT 1",
        (orphan.id,),
    ).fetchone()
    assert tuple(purged) == ("purge_entity", 1)


def with_other_evidence(memory_id: str) -> Provenance:
    return Provenance(
        actor="tester", agent_id=A, source_memory_id=memory_id,
        evidence=(Evidence("docker compose up", "transcript:sess-1#4"),),
    )  # fmt: skip
