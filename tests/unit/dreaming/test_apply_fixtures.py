"""Shared set-up (no tests) for the apply seam and revert tests: evidence, entities, attention."""

from __future__ import annotations

from typing import Any

from signet_desktop.domain.knowledge import Provenance
from signet_desktop.domain.memory import NewMemory
from signet_desktop.storage import attention, graph, graph_claims, memories, transcripts
from signet_desktop.storage.database import Database

FACT = "Alice moved to Lisbon in May and now works at Acme."


def add_memory(db: Database, agent: str, memory_id: str, content: str = FACT) -> None:
    with db.write() as conn:
        memories.insert_memory(
            conn,
            memory_id,
            NewMemory(agent_id=agent, content=content),
            actor="t",
            embedding_model=None,
        )


def add_transcript(db: Database, agent: str, key: str, content: str, *, complete: bool) -> None:
    with db.write() as conn:
        transcripts.save_transcript(
            conn,
            agent_id=agent,
            session_key=key,
            harness="claude-code",
            project=None,
            content=content,
            turn_count=1,
            content_hash="h",
            complete=complete,
        )


def entity(db: Database, agent: str, name: str, entity_type: str = "person") -> str:
    with db.write() as conn:
        found, _ = graph.create_entity(
            conn, Provenance(actor="t", agent_id=agent), name=name, entity_type=entity_type
        )
    return found.id


def aspect(db: Database, agent: str, entity_id: str, name: str) -> str:
    with db.write() as conn:
        found, _ = graph_claims.create_aspect(
            conn, Provenance(actor="t", agent_id=agent), entity_id, name
        )
    return found.id


def pin(db: Database, agent: str, entity_id: str) -> None:
    with db.write() as conn:
        graph.set_pinned(conn, Provenance(actor="t", agent_id=agent), entity_id, True)


def attend(db: Database, agent: str, subject: str, kind: str = "hygiene") -> str:
    with db.write() as conn:
        row = attention.create_attention(
            conn, agent_id=agent, kind=kind, subject_ref=subject, details={}
        )
    return row.id


def op(name: str, payload: dict[str, Any], **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"operation": name, "payload": payload, "confidence": 0.9}
    body.update(extra)
    return body


def cite(quote: str, ref: str = "memory:m1") -> list[dict[str, str]]:
    return [{"quote": quote, "source_ref": ref}]


def count(db: Database, table: str, where: str = "1") -> int:
    return int(db.reader().execute(f"SELECT COUNT(*) FROM {table} WHERE {where}").fetchone()[0])
