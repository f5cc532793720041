"""Each table has one owning module, and only that module writes it (docs/ARCHITECTURE.md §3).

Reads may join a table elsewhere (a recall channel reads `memories` beside its index), but an
INSERT, UPDATE or DELETE on a table outside its owner is a second place that must agree with the
first about every column and invariant — exactly what this rule exists to prevent.
"""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[3] / "signet_desktop"

OWNERS: dict[str, str] = {
    "memories": "storage/memories.py",
    "memory_cues": "storage/memory_cues.py",
    "memory_history": "storage/history.py",
    "memory_jobs": "queue/jobs.py",
    "embeddings": "embedding/vectors.py",
    "embedding_generations": "embedding/generations.py",
    "memory_content_safety": "storage/content_safety.py",
    "memory_artifacts": "storage/artifacts.py",
    "memory_artifact_tombstones": "storage/artifacts.py",
    "umap_cache": "storage/projections.py",
    "hook_sessions": "storage/hook_sessions.py",
    "session_context_ledger": "storage/hook_sessions.py",
    "session_transcripts": "storage/transcripts.py",
    "canonical_transcript_files": "storage/transcripts.py",
    "transcript_turns": "storage/transcript_turns.py",
    "transcript_turn_backfill": "storage/transcript_turns.py",
    "sources": "storage/sources.py",
    "source_import_runs": "storage/sources.py",
    "source_import_files": "storage/sources.py",
    "source_import_records": "storage/sources.py",
    "source_tombstones": "storage/sources.py",
    "dreaming_evidence_consumption": "storage/dreaming_evidence.py",
    "dreaming_evidence_reviews": "storage/dreaming_evidence.py",
    "dreaming_attention": "storage/attention.py",
    "dreaming_operations": "storage/dreaming_operations.py",
    "ontology_proposals": "storage/ontology.py",
    "ontology_contradictions": "storage/ontology.py",
    "dreaming_state": "storage/dreaming_passes.py",
    "dreaming_passes": "storage/dreaming_passes.py",
    "dreaming_tool_calls": "storage/dreaming_passes.py",
    "dreaming_evidence_exclusions": "storage/dreaming_passes.py",
    "entities": "storage/graph_rows.py",
    "entity_aliases": "storage/graph_rows.py",
    "entity_aspects": "storage/graph_rows.py",
    "entity_attributes": "storage/graph_rows.py",
    "entity_dependencies": "storage/graph_rows.py",
    "relations": "storage/graph_rows.py",
    "graph_mutations": "storage/graph_rows.py",
    "memory_entity_mentions": "storage/mentions.py",
    "memory_hints": "storage/hints.py",
    "documents": "storage/documents.py",
    "document_memories": "storage/documents.py",
    "connectors": "storage/connectors.py",
    "memory_counts": "storage/counters.py",
    "memory_vector_counts": "storage/counters.py",
    "maintenance_runs": "storage/maintenance_runs.py",
    "memory_search_telemetry": "storage/search_telemetry.py",
    "api_tokens": "storage/tokens.py",
    "memory_feedback": "storage/feedback.py",
    "schema_migrations": "storage/migrate.py",
    "schema_migrations_audit": "storage/migrate.py",
}
# vec0 mirror tables are named per generation ({table}); embedding/vectors.py writes them.
DYNAMIC_WRITERS = {"embedding/vectors.py"}
WRITE = re.compile(
    # `ON CONFLICT ... DO UPDATE SET` updates the row the INSERT named, not a table called SET;
    # `FOR UPDATE [SKIP LOCKED]` locks the rows a SELECT read (PostgreSQL), it writes nothing.
    r"\b(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|(?<!DO\s)(?<!FOR\s)UPDATE|DELETE\s+FROM|REPLACE\s+INTO)"
    r"\s+([A-Za-z_{}]+)"
)


def writes_in(text: str) -> set[str]:
    """Tables written by SQL in `text` (uppercase keywords, as the house style writes SQL)."""
    return {match.group(1) for match in WRITE.finditer(text)}


def test_only_the_owner_writes_a_table() -> None:
    problems = []
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        module = str(path.relative_to(PACKAGE_ROOT))
        for table in writes_in(path.read_text(encoding="utf-8")):
            if table.startswith("{"):
                if module not in DYNAMIC_WRITERS:
                    problems.append(f"{module} writes a dynamically named table")
                continue
            owner = OWNERS.get(table)
            if owner is None:
                problems.append(f"{module} writes {table}, which has no owner in OWNERS")
            elif owner != module:
                problems.append(f"{module} writes {table}; its owner is {owner}")
    assert problems == []


def test_the_check_sees_a_stray_write() -> None:
    assert writes_in("UPDATE memories SET x = 1") == {"memories"}
    assert writes_in("INSERT OR IGNORE INTO memory_jobs (id) VALUES (1)") == {"memory_jobs"}
    assert writes_in("SELECT * FROM memories WHERE updated_at > :t") == set()
    assert writes_in("SELECT id FROM memory_jobs LIMIT 1 FOR UPDATE SKIP LOCKED") == set()
