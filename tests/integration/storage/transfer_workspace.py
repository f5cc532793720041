"""A realistic workspace for the `signet storage migrate` tests, built through the service.

Memories with tags, metadata, a pin, an edit and a forget (history, counters, cues), vectors
from a hash embedder (a generation and its vec0 mirror), two transcripts captured as the hooks
capture them (turns, full text), entities with aliases and a merge that points at a later id
(a self-reference the copy must order parents first) and mentions counted by the 0012 trigger.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.sessions import Turn
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.storage.database import open_database
from signet_desktop.storage.memories import list_memories
from tests.support.db import database_of

NOW = "2026-12-01T00:00:00.000Z"
FACTS = [
    "The Ledger service owns every invoice",
    "Billing deploys on Fridays after the review",
    "The staging cluster has four nodes",
    "Ledger exports run nightly at two",
    "Alerts page the on-call engineer",
    "Feature flags live in the settings service",
]


def build_workspace(root: Path, *, extra: int = 0) -> Path:
    """Fill the workspace at `root` through a real service; returns its database path."""
    paths = WorkspacePaths.for_root(root)
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    service = build_service(paths, SignetConfig(), options)
    try:
        with database_of(service).write() as conn:
            for entity_id, name, status, merged in (
                ("z-ledger", "Ledger", "active", None),
                ("a-ledger-old", "Ledger Old", "merged", "z-ledger"),
                ("m-billing", "Billing", "active", None),
            ):
                conn.execute(
                    "INSERT INTO entities (id, agent_id, name, canonical_name, status,"
                    " merged_into, created_at, updated_at)"
                    " VALUES (?, 'default', ?, ?, ?, ?, ?, ?)",
                    (entity_id, name, name.lower(), status, merged, NOW, NOW),
                )
            conn.execute(
                "INSERT INTO entity_aliases (id, entity_id, agent_id, alias, canonical_alias,"
                " created_at) VALUES ('al-1', 'z-ledger', 'default', 'LDG', 'ldg', ?)",
                (NOW,),
            )
        actor = Actor()
        ids = []
        texts = FACTS + [f"Generated fact number {i} about topic {i % 7}" for i in range(extra)]
        for i, text in enumerate(texts):
            outcome = service.memories.remember(
                RememberRequest(
                    content=text,
                    tags=("ops", f"t{i % 3}"),
                    metadata={"origin": "test", "n": i, "nested": {"b": [1, 2.5], "a": None}},
                    importance=0.25 + (i % 4) / 8,
                    agent_id="default" if i % 5 else "b",
                ),
                actor,
            )
            ids.append((outcome.memory.agent_id, outcome.memory.id))
        service.memories.forget(ids[2][0], ids[2][1], reason="outdated", actor=actor)
        turns = [
            Turn("u", "user", "where do the ledger exports go?", "2026-11-29T09:00:00Z"),
            Turn("a", "assistant", "They land in the billing bucket.", "2026-11-29T09:01:00Z"),
        ]
        service.transcripts.capture("default", "s-1", "claude-code", turns, complete=True)
        service.transcripts.capture("b", "s-2", "codex", turns[:1], project="/work/ops")
    finally:
        service.close()
    return paths.db_path


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes, with its -wal and -shm beside it if any."""
    digest = hashlib.sha256()
    for candidate in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        digest.update(candidate.name.encode())
        digest.update(candidate.read_bytes() if candidate.exists() else b"<none>")
    return digest.hexdigest()


def memory_listing(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every agent's live memories as the daemon reads them (storage/memories.py)."""
    db = open_database(path)
    try:
        conn = db.reader()
        found = {}
        for agent in ("default", "b"):
            found[agent] = [
                (m.id, m.content, m.tags, m.metadata, m.importance, m.content_hash)
                for m in list_memories(conn, agent, 1000, 0)
            ]
        return found
    finally:
        db.close()
