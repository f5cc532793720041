"""The signet-workspace importer over the real ImportService and a real database."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import sqlean
from support.signet_workspace import event, make_signet_db, memory, transcript

from signet_desktop.domain.errors import Conflict, InvalidInput
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.sources import Source
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.tracker import EmbeddingTracker
from signet_desktop.evidence.signet_rows import MEMORY_COLUMNS, SignetMemory, map_memory
from signet_desktop.service.events import EventBus
from signet_desktop.service.imports.faults import FaultPoints
from signet_desktop.service.imports.service import ImportService
from signet_desktop.service.imports.workspace import (
    KIND,
    SOURCE_TYPE,
    SignetWorkspaceImporter,
    to_imported,
)
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.service.transcripts.service import TranscriptService
from signet_desktop.storage import history, memories, transcript_turns, transcripts
from signet_desktop.storage import sources as records
from signet_desktop.storage.database import Database
from signet_desktop.storage.guard import in_write_transaction


@pytest.fixture
def imports(db: Database, tmp_path: Path) -> Iterator[ImportService]:
    service = ImportService(
        db,
        tmp_path,
        TranscriptService(db, tmp_path),
        importers=[SignetWorkspaceImporter(memory_batch=3)],
        faults=FaultPoints(),
    )
    yield service
    service.close()


def signet(tmp_path: Path, variant: str = "current", **rows: object) -> Path:
    make_signet_db(tmp_path / "signet" / "memory" / "memories.db", variant, **rows)  # type: ignore[arg-type]
    return tmp_path / "signet"


def run(imports: ImportService, root: Path, agent: str = "default") -> str:
    ticket = imports.start(agent, KIND, str(root), wait=True)
    finished = imports.run(agent, ticket.run_id)
    assert finished.status == "completed", finished.error
    return ticket.source_id


def live(db: Database, agent: str = "default") -> list[memories.Memory]:
    return memories.list_memories(db.reader(), agent, 1000, 0)


def test_memories_keep_what_signet_recorded_and_say_where_they_came_from(
    db: Database, imports: ImportService, tmp_path: Path
) -> None:
    root = signet(
        tmp_path,
        memories=[
            memory(1, tags="alpha,beta", importance=0.9, pinned=1, who="codex", version=3,
                   source_type="document", source_id="doc-9", created_at="2025-01-02T03:04:05Z"),
            memory(2, is_deleted=1, deleted_at="2025-03-09T00:00:00.000Z"),
        ],
        history=[
            event("sig-000001", 1, "created", new_content="first words"),
            event("sig-000001", 2, "modified", old_content="first words",
                  new_content=memory(1)["content"], reason="clarified"),
        ],
    )  # fmt: skip
    source_id = run(imports, root)
    row = memories.get_memory(db.reader(), "default", "sig-000001")
    assert row is not None  # Signet's id kept: its clients' references still work
    assert (row.importance, row.pinned, row.tags, row.who) == (
        0.9,
        True,
        ("alpha", "beta"),
        "codex",
    )
    assert (row.created_at, row.version) == ("2025-01-02T03:04:05.000Z", 3)
    assert (row.source_type, row.source_id) == (SOURCE_TYPE, source_id)
    assert row.metadata["signet"]["id"] == "sig-000001"
    assert row.metadata["signet"]["source_id"] == "doc-9"
    trail = history.list_events(db.reader(), "default", "sig-000001", 10)
    assert [(e.event, e.changed_by, e.reason) for e in trail] == [
        ("created", "claude-code", None),
        ("modified", "claude-code", "clarified"),
        ("none", "signet-import", "imported from Signet"),
    ]
    assert trail[0].id == "hist-sig-000001-1" and trail[0].created_at == "2025-03-01T10:00:01.000Z"
    deleted = memories.get_memory(db.reader(), "default", "sig-000002")
    assert deleted is not None and deleted.is_deleted
    assert deleted.deleted_at == "2025-03-09T00:00:00.000Z"
    path = db.reader().execute("SELECT source_path FROM memories WHERE id = 'sig-000001'")
    assert path.fetchone()[0] == str((root / "memory" / "memories.db").resolve())


def test_transcripts_arrive_completed_with_their_source_record(
    db: Database, imports: ImportService, tmp_path: Path
) -> None:
    root = signet(
        tmp_path, memories=[memory(1)],
        transcripts=[transcript("s-1", turns=4, content_hash="h1", source_id="x")],
    )  # fmt: skip
    source_id = run(imports, root)
    meta = db.reader().execute("SELECT source_meta_json FROM session_transcripts").fetchone()[0]
    assert json.loads(meta)["signet"] == {
        "agent_id": "default",
        "content_hash": "h1",
        "source_id": "x",
    }
    row = transcripts.get_transcript(db.reader(), "default", "s-1")
    assert row is not None and row.completed_at == "2025-03-02T09:30:00.000Z"
    assert (row.turn_count, row.source_id, row.created_at) == (
        4, source_id, "2025-03-02T09:00:00.000Z"
    )  # fmt: skip
    totals = imports.source("default", source_id).totals
    assert totals.records == {"imported": 2} and totals.turns == 4
    # Recallable at once: each turn indexed in the import's commit, role from its label.
    indexed = transcript_turns.neighbours(db.reader(), "default", "s-1", 0, 10)
    assert [(t.ordinal, t.role, t.text) for t in indexed] == [
        (0, "user", "turn 0 of s-1"),
        (1, "assistant", "turn 1 of s-1"),
        (2, "user", "turn 2 of s-1"),
        (3, "assistant", "turn 3 of s-1"),
    ]


def test_content_already_here_is_a_reported_duplicate(
    db: Database, imports: ImportService, tmp_path: Path
) -> None:
    MemoryService(db).remember(RememberRequest("Signet memory number 1 about topic 1."), Actor())
    root = signet(
        tmp_path, memories=[memory(1), memory(2), memory(3, content=memory(2)["content"])]
    )
    source_id = run(imports, root)
    assert len(live(db)) == 2  # ours and sig-2; sig-1 and sig-3 are duplicates
    totals = imports.source("default", source_id).totals
    assert totals.records == {"imported": 1, "duplicate": 2}
    record = records.get_record(db.reader(), "default", source_id, "memory:sig-000003")
    assert record is not None and record.last_error == "same as sig-000002"


def test_a_rerun_adds_nothing_and_counts_what_it_skipped(
    db: Database, imports: ImportService, tmp_path: Path
) -> None:
    root = signet(
        tmp_path,
        memories=[memory(i) for i in range(7)],
        history=[event("sig-000001", 1, "created")],
        transcripts=[transcript("a"), transcript("b")],
    )
    source_id = run(imports, root)
    before = db.reader().execute("SELECT COUNT(*) FROM memory_history").fetchone()[0]
    ticket = imports.start("default", KIND, str(root), wait=True)
    second = imports.run("default", ticket.run_id)
    assert ticket.source_id == source_id and not ticket.created
    assert (second.counts.records_imported, second.counts.records_skipped) == (0, 9)
    assert len(live(db)) == 7
    assert db.reader().execute("SELECT COUNT(*) FROM memory_history").fetchone()[0] == before
    assert transcripts.list_transcripts(db.reader(), "default").total == 2


def test_a_second_run_while_one_is_running_is_refused(db: Database, tmp_path: Path) -> None:
    reached, release = threading.Event(), threading.Event()

    def hold(step: str) -> None:
        if step == "memories.batch_read":
            reached.set()
            release.wait(10)

    service = ImportService(
        db, tmp_path, TranscriptService(db, tmp_path),
        importers=[SignetWorkspaceImporter()], faults=FaultPoints(on_hit=hold),
    )  # fmt: skip
    root = signet(tmp_path, memories=[memory(i) for i in range(3)])
    ticket = service.start("default", KIND, str(root))
    try:
        assert reached.wait(10)
        with pytest.raises(Conflict):
            service.start("default", KIND, str(root))
    finally:
        release.set()
        assert service.wait(ticket.source_id, 10)
        service.close()
    assert len(live(db)) == 3


def test_an_import_lands_in_the_asking_agent_only(
    db: Database, imports: ImportService, tmp_path: Path
) -> None:
    root = signet(tmp_path, memories=[memory(1, agent_id="signet-other")],
                  transcripts=[transcript("s")])  # fmt: skip
    run(imports, root, agent="alice")
    assert [m.id for m in live(db, "alice")] == ["sig-000001"]
    assert live(db) == [] and imports.sources("default") == []
    assert transcripts.list_transcripts(db.reader(), "default").total == 0
    assert memories.get_memory(db.reader(), "default", "sig-000001") is None
    assert live(db, "alice")[0].metadata["signet"]["agent_id"] == "signet-other"


def test_an_id_already_used_here_gets_a_stable_new_one(
    db: Database, imports: ImportService, tmp_path: Path
) -> None:
    root = signet(tmp_path, memories=[memory(1)])
    run(imports, root, agent="alice")
    other = tmp_path / "second"
    make_signet_db(other / "memory" / "memories.db", memories=[memory(1)])
    run(imports, other, agent="bob")
    (bob,) = live(db, "bob")
    assert bob.id != "sig-000001" and bob.metadata["signet"]["id"] == "sig-000001"


def test_unmappable_rows_and_unknown_columns_are_reported(
    db: Database, imports: ImportService, tmp_path: Path
) -> None:
    root = signet(
        tmp_path,
        "extra",
        memories=[memory(1, sentiment="calm"), memory(2, content="   "), memory(3, type="odd")],
        history=[event("gone", 1, "created")],
    )
    source_id = run(imports, root)
    totals = imports.source("default", source_id).totals
    assert totals.records == {"imported": 2, "failed": 1}
    failed = records.get_record(db.reader(), "default", source_id, "memory:sig-000002")
    assert failed is not None and failed.last_error == "content_empty"
    report = json.loads((tmp_path / "memory/imports" / source_id / "report.json").read_text())
    assert report["schema"]["unknownColumns"]["memories"] == ["sentiment", "raw_blob"]
    assert report["schema"]["tablesNotImported"] == {"custom_notes": 2, "entities": 0}
    assert report["orphanHistory"] == 1 and report["unmapped"]["count"] == 2
    kept = memories.get_memory(db.reader(), "default", "sig-000001")
    assert kept is not None and kept.metadata["signet"]["extra"] == {"sentiment": "calm"}
    odd = memories.get_memory(db.reader(), "default", "sig-000003")
    assert odd is not None and odd.type == "fact" and odd.metadata["signet"]["notes"]


def test_an_older_signet_schema_imports(
    db: Database, imports: ImportService, tmp_path: Path
) -> None:
    root = signet(tmp_path, "older", memories=[memory(1), memory(2)],
                  history=[event("sig-000001", 1, "created")])  # fmt: skip
    run(imports, root)
    assert {m.id for m in live(db)} == {"sig-000001", "sig-000002"}


def test_this_workspace_and_non_signet_paths_are_refused(
    db: Database, imports: ImportService, tmp_path: Path
) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidInput):
        imports.start("default", KIND, str(tmp_path / "empty"), wait=True)
    ticket = imports.start("default", KIND, str(tmp_path), wait=True)  # our own memories.db
    assert imports.run("default", ticket.run_id).status == "failed"  # refused when it runs
    guarded = ImportService(
        db, tmp_path, TranscriptService(db, tmp_path),
        importers=[SignetWorkspaceImporter(own_database=db.path)],
    )  # fmt: skip
    with pytest.raises(InvalidInput, match="own database"):  # and before anything is written
        guarded.start("alice", KIND, str(tmp_path), wait=True)
    assert guarded.sources("alice") == [] and live(db) == []


def test_removing_the_source_purges_its_memories_history_and_transcripts(
    db: Database, imports: ImportService, tmp_path: Path
) -> None:
    MemoryService(db).remember(RememberRequest("mine, not imported"), Actor())
    root = signet(tmp_path, memories=[memory(1), memory(2)], transcripts=[transcript("s")],
                  history=[event("sig-000001", 1, "created")])  # fmt: skip
    source_id = run(imports, root)
    count = "SELECT COUNT(*) FROM transcript_turns"
    assert db.reader().execute(count).fetchone()[0] == 2
    preview = imports.remove("default", source_id, dry_run=True)
    assert preview.purged["memories"] == 2 and live(db)[0].content != ""
    done = imports.remove("default", source_id, dry_run=False)
    assert done.purged["memories"] == 2 and done.purged["memory_history"] == 3
    assert done.purged["session_transcripts"] == 1 and done.tombstone_id
    assert db.reader().execute(count).fetchone()[0] == 0  # its indexed turns went with it
    assert [m.content for m in live(db)] == ["mine, not imported"]
    left = (
        db.reader()
        .execute("SELECT COUNT(*) FROM memory_history WHERE memory_id LIKE 'sig-%'")
        .fetchone()[0]
    )
    assert left == 0
    with pytest.raises(Conflict):  # the removal was deliberate: re-import must say so
        imports.start("default", KIND, str(root), wait=True)


def test_the_embedding_tracker_embeds_imported_memories_and_removal_drops_the_vectors(
    db: Database, imports: ImportService, tmp_path: Path
) -> None:
    root = signet(tmp_path, memories=[memory(i) for i in range(5)] + [memory(9, is_deleted=1)])
    source_id = run(imports, root)  # no provider call during the import
    tracker = EmbeddingTracker(db, VectorIndex(db), HashEmbedder(dimensions=16), batch_size=4)
    tracker.start()
    assert tracker.backfill(100).embedded == 5  # the live ones; the deleted one is not embedded
    assert tracker.coverage(fresh=True).missing == 0
    done = imports.remove("default", source_id, dry_run=False)
    assert done.purged["memory_vectors"] == 5
    assert db.reader().execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] == 0


class Follow:
    """A VectorFollow that records what it was handed (called after each commit)."""

    def __init__(self) -> None:
        self.handed: list[str] = []
        self.in_transaction: list[bool] = []

    def follow(self, items: Sequence[memories.Memory]) -> None:
        self.in_transaction.append(in_write_transaction())
        self.handed += [m.id for m in items]

    def store_now(self, items: Sequence[memories.Memory]) -> set[str]:
        raise AssertionError("the importer never embeds on its own thread")


def test_committed_batches_are_handed_to_the_vector_batcher_outside_any_transaction(
    db: Database, tmp_path: Path
) -> None:
    follow = Follow()
    service = ImportService(
        db, tmp_path, TranscriptService(db, tmp_path),
        importers=[SignetWorkspaceImporter(follow=follow, memory_batch=2)], faults=FaultPoints(),
    )  # fmt: skip
    root = signet(tmp_path, memories=[memory(i) for i in range(5)] + [memory(9, is_deleted=1)])
    run(service, root)
    assert sorted(follow.handed) == [f"sig-{i:06d}" for i in range(5)]
    assert follow.in_transaction == [False, False, False]


def test_progress_and_each_new_memory_are_published_after_their_commit(
    db: Database, tmp_path: Path
) -> None:
    bus = EventBus()
    seen = bus.subscribe(agent_id=None)
    service = ImportService(
        db, tmp_path, TranscriptService(db, tmp_path), events=bus,
        importers=[SignetWorkspaceImporter(memory_batch=2)], faults=FaultPoints(),
    )  # fmt: skip
    root = signet(tmp_path, memories=[memory(i) for i in range(3)] + [memory(9, is_deleted=1)])
    run(service, root)
    kinds = [d.event.kind for d in seen.drain()]
    assert kinds.count("memory.created") == 3  # live ones only
    assert "import.progress" in kinds and kinds[-1] == "import.finished"


def test_the_workspace_and_its_database_file_are_one_source(
    db: Database, imports: ImportService, tmp_path: Path
) -> None:
    root = signet(tmp_path, memories=[memory(1), memory(2, is_deleted=1)])
    first = run(imports, root)
    second = run(imports, root / "memory" / "memories.db")
    assert first == second and len(imports.sources("default")) == 1
    assert db.reader().execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 2


def test_signet_writing_its_file_mid_import_fails_the_run_and_a_rerun_finishes(
    db: Database, tmp_path: Path
) -> None:
    root = signet(tmp_path, memories=[memory(i) for i in range(4)])

    def signet_writes(step: str) -> None:
        if step == "signet.opened":
            writer = sqlean.connect(str(root / "memory" / "memories.db"), isolation_level=None)
            writer.execute("PRAGMA journal_mode = DELETE")
            writer.execute(
                "INSERT INTO memories (id, content, created_at, updated_at) "
                "VALUES ('late', 'written by Signet meanwhile', 'x', 'x')"
            )
            writer.close()

    service = ImportService(
        db, tmp_path, TranscriptService(db, tmp_path),
        importers=[SignetWorkspaceImporter(memory_batch=2)],
        faults=FaultPoints(on_hit=signet_writes),
    )  # fmt: skip
    ticket = service.start("default", KIND, str(root), wait=True)
    failed = service.run("default", ticket.run_id)
    assert failed.status == "failed" and "written during the import" in (failed.error or "")
    assert live(db) == []  # nothing read while the file changed was written
    imports = ImportService(
        db, tmp_path, TranscriptService(db, tmp_path),
        importers=[SignetWorkspaceImporter(memory_batch=2)], faults=FaultPoints(),
    )  # fmt: skip
    run(imports, root)
    assert len(live(db)) == 5


def test_every_signet_memory_column_the_reader_knows_lands_somewhere(tmp_path: Path) -> None:
    derived = {"normalized_content", "embedding_model"}  # recomputed here, never carried
    row: dict[str, object] = {name: f"v-{name}" for name in MEMORY_COLUMNS}
    row.update(
        id="sig-1", content="all columns", type="rule", importance=0.3, confidence=0.4,
        pinned=1, is_deleted=1, version=7, update_count=2, access_count=5, manual_override=1,
        visibility="archived", tags="t1,t2",
    )  # fmt: skip
    for name in ("created_at", "updated_at", "deleted_at", "last_accessed", "superseded_at",
                 "stale_at", "review_after", "occurred_at"):  # fmt: skip
        row[name] = "2025-05-05T05:05:05.000Z"
    mapped = map_memory(row)
    assert isinstance(mapped, SignetMemory) and not mapped.notes
    source = Source("src_" + "0" * 32, "default", KIND, "n", "/x", "active", None, "t", "t")
    imported = to_imported(mapped, "sig-1", source, "run_x", "/x/memory/memories.db")
    carried = {name: value for name, value in vars_of(imported).items() if name != "metadata"} | {
        f"signet.{k}": v for k, v in imported.metadata["signet"].items()
    }
    flat = {str(v) for v in carried.values()} | {
        str(v) for v in carried.values() if isinstance(v, tuple) for v in v
    }
    for name in MEMORY_COLUMNS - derived:
        value = row[name]
        if name == "tags":
            assert imported.tags == ("t1", "t2")
        elif name in ("pinned", "is_deleted", "manual_override"):
            assert getattr(imported, name) is True
        else:
            assert str(value) in flat, f"{name} was dropped"


def vars_of(value: object) -> dict[str, object]:
    return {name: getattr(value, name) for name in value.__dataclass_fields__}  # type: ignore[attr-defined]


def test_a_timestamp_we_cannot_read_is_kept_as_signet_wrote_it(tmp_path: Path) -> None:
    mapped = map_memory({"id": "a", "content": "x", "stale_at": "next tuesday"})
    assert isinstance(mapped, SignetMemory)
    source = Source("src_" + "0" * 32, "default", KIND, "n", "/x", "active", None, "t", "t")
    imported = to_imported(mapped, "a", source, "run_x", "/x")
    assert imported.stale_at is None
    assert imported.metadata["signet"]["unreadable_times"] == {"stale_at": "next tuesday"}
