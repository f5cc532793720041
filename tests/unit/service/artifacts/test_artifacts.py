"""Markdown artifacts: written for a completed session, rebuilt from the files, tombstones."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.db import database_of

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.artifacts import Artifact, ArtifactWritten, session_token
from signet_desktop.domain.events import TranscriptCaptured
from signet_desktop.domain.sessions import Turn
from signet_desktop.evidence import artifacts as files
from signet_desktop.service.artifacts.service import ArtifactService, first_sentence
from signet_desktop.service.artifacts.worker import ArtifactWorker
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService

TURNS = [
    Turn("u1", "user", "Move billing to Postgres 16. It is time."),
    Turn("a1", "assistant", "Done: billing runs on Postgres 16."),
]


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SignetService]:
    svc = build_service(
        WorkspacePaths.for_root(tmp_path), SignetConfig(), BuildOptions(no_embedder=True)
    )
    yield svc
    svc.close()


@pytest.fixture
def artifacts(service: SignetService, tmp_path: Path) -> ArtifactService:
    return ArtifactService(
        database_of(service), tmp_path, service.transcripts, events=service.events
    )


def index_of(service: SignetService) -> list[tuple[object, ...]]:
    rows = (
        database_of(service)
        .reader()
        .execute(
            "SELECT agent_id, source_path, content_hash, source_kind, session_key, session_token, "
            "project, harness, captured_at, started_at, ended_at, memory_sentence, content "
            "FROM memory_artifacts ORDER BY source_path"
        )
    )
    return [tuple(r) for r in rows.fetchall()]


def captured(service: SignetService, key: str = "s1", agent: str = "default") -> None:
    service.transcripts.capture(
        agent, key, "claude-code", TURNS, project="/work/billing", complete=True
    )


def test_a_completed_session_gets_a_transcript_artifact_through_the_bus(
    service: SignetService, artifacts: ArtifactService, tmp_path: Path
) -> None:
    worker = ArtifactWorker(artifacts)
    service.events.connect(worker.notice)
    with service.events.subscribe(agent_id=None, kinds={"artifact.written"}) as seen:
        service.transcripts.capture("default", "s1", "claude-code", TURNS[:1], project="/p")
        assert worker.run_once() is False  # still open: nothing to write
        captured(service)
        assert worker.run_once() is True
        events = [d.event for d in seen.drain()]
    [path] = sorted((tmp_path / "memory").glob("*--transcript.md"))
    assert files.FILE_NAME.match(path.name)
    assert f"--{session_token('default', 's1')}--" in path.name
    meta, body = files.parse(path.read_text())
    assert (meta.agent_id, meta.session_key, meta.harness, meta.project) == (
        "default", "s1", "claude-code", "/p",
    )  # fmt: skip
    assert "User: Move billing to Postgres 16." in body and meta.ended_at is not None
    assert meta.memory_sentence == "Move billing to Postgres 16."
    assert len(events) == 1 and isinstance(events[0], ArtifactWritten)
    # The same state again writes nothing new.
    assert artifacts.write_transcript("default", "s1") is not None
    assert worker.run_once() is False
    assert len(list((tmp_path / "memory").glob("*.md"))) == 1


def test_the_scan_catches_sessions_completed_without_an_event(
    service: SignetService, artifacts: ArtifactService
) -> None:
    service.transcripts.capture("default", "ttl", "codex", TURNS)
    assert service.transcripts.expire_idle("9999-01-01T00:00:00.000Z") == 1  # TTL: no event
    assert artifacts.write_pending_transcripts() == 1
    assert artifacts.write_pending_transcripts() == 0
    [artifact] = artifacts.indexed("default")
    assert artifact.meta.harness == "codex" and artifact.meta.kind == "transcript"


def test_reindex_rebuilds_an_equal_index_from_the_files(
    service: SignetService, artifacts: ArtifactService
) -> None:
    captured(service, "s1")
    captured(service, "s2", agent="b")
    artifacts.write_pending_transcripts()
    artifacts.write_compaction(
        "default", "s1", "We chose Postgres 16. Next: backups.", harness="claude-code"
    )
    before = index_of(service)
    assert len(before) == 3
    with database_of(service).write() as conn:
        conn.execute("DELETE FROM memory_artifacts")
    report = artifacts.reindex()
    assert report.indexed == 3 and report.removed == 0
    assert index_of(service) == before
    assert artifacts.reindex().indexed == 0  # nothing changed: no row touched


def test_reindex_drops_rows_whose_file_is_gone_and_skips_strangers(
    service: SignetService, artifacts: ArtifactService, tmp_path: Path
) -> None:
    captured(service, "s1")
    artifacts.write_pending_transcripts()
    [artifact] = artifacts.indexed("default")
    (tmp_path / "memory" / "MEMORY.backup-20260101T000000.000Z.md").write_text("old")
    (tmp_path / "memory" / "20260101T000000.000Z--junk-00000000--summary.md").write_text("junk")
    (tmp_path / artifact.source_path).unlink()
    report = artifacts.reindex("default")
    assert (report.removed, report.unreadable) == (1, 1)
    assert artifacts.indexed("default") == []


def test_a_removed_session_stays_out_on_reindex_and_is_not_rewritten(
    service: SignetService, artifacts: ArtifactService, tmp_path: Path
) -> None:
    captured(service, "s1")
    captured(service, "s2")
    artifacts.write_pending_transcripts()
    artifacts.write_compaction("default", "s1", "Summary of s1.")
    kept = {
        a.source_path: (tmp_path / a.source_path).read_bytes() for a in artifacts.indexed("default")
    }
    removed = artifacts.remove_session("default", "s1", "user removed it")
    assert removed.rows == 2 and len(removed.files) == 2
    for relative in removed.files:  # the files come back (a restore, a sync tool) ...
        (tmp_path / relative).write_bytes(kept[relative])
    report = artifacts.reindex()
    assert report.tombstoned == 2  # ... and stay out of the index
    assert {a.meta.session_key for a in artifacts.indexed("default")} == {"s2"}
    assert artifacts.write_transcript("default", "s1") is None
    assert artifacts.write_compaction("default", "s1", "again") is None
    assert artifacts.write_pending_transcripts() == 0


def test_artifacts_are_agent_scoped(service: SignetService, artifacts: ArtifactService) -> None:
    captured(service, "same-key", agent="a")
    captured(service, "same-key", agent="b")
    artifacts.write_pending_transcripts()
    a, b = artifacts.indexed("a"), artifacts.indexed("b")
    assert len(a) == len(b) == 1 and a[0].source_path != b[0].source_path
    artifacts.remove_session("a", "same-key", "gone")
    assert artifacts.indexed("a") == [] and len(artifacts.indexed("b")) == 1
    artifacts.reindex("a")
    assert len(artifacts.indexed("b")) == 1


def test_more_turns_after_completion_make_a_new_immutable_file(
    service: SignetService, artifacts: ArtifactService
) -> None:
    captured(service, "s1")
    first = artifacts.write_transcript("default", "s1")
    extra = [*TURNS, Turn("u2", "user", "And the backups?")]
    service.transcripts.capture("default", "s1", "claude-code", extra, complete=True)
    second = artifacts.write_transcript("default", "s1")
    assert isinstance(first, Artifact) and isinstance(second, Artifact)
    assert first.source_path != second.source_path
    assert len(artifacts.indexed("default")) == 2


def test_a_name_clash_with_other_text_takes_the_next_millisecond(
    artifacts: ArtifactService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        "signet_desktop.service.artifacts.service.utc_now", lambda: "2026-12-01T10:00:00.000Z"
    )
    one = artifacts.write_compaction("default", "s1", "first summary")
    two = artifacts.write_compaction("default", "s1", "second summary")
    assert one is not None and two is not None
    assert two.meta.captured_at == "2026-12-01T10:00:00.001Z"
    assert (tmp_path / one.source_path).read_text().endswith("first summary\n")


def test_a_failed_write_leaves_no_file_and_no_row(
    artifacts: ArtifactService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(src: str, dst: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("signet_desktop.evidence.artifacts.os.replace", refuse)
    with pytest.raises(PermissionError):
        artifacts.write_compaction("default", "s1", "a summary")
    assert list((tmp_path / "memory").glob("*compaction*")) == []
    assert list((tmp_path / "memory").glob(".*.tmp")) == []
    assert artifacts.indexed("default") == []


def test_file_format_round_trips() -> None:
    assert (
        files.iso_time(files.compact_time("2026-12-01T14:41:39.123Z")) == "2026-12-01T14:41:39.123Z"
    )
    assert first_sentence("User: One. Two.") == "One."
    assert first_sentence("   ") is None
    assert "--" not in session_token("default", "a--b//c")
    event = TranscriptCaptured(
        agent_id="a", session_key="k", harness="codex", turns=1, appended=1, completed=False
    )
    assert event.completed is False


def test_imported_sessions_get_no_artifact(
    service: SignetService, artifacts: ArtifactService
) -> None:
    captured(service, "live")
    with database_of(service).write() as conn:
        conn.execute(
            "UPDATE session_transcripts SET source_id = 'src-1', source_record_id = 'r1' "
            "WHERE session_key = 'live'"
        )
    assert artifacts.write_pending_transcripts() == 0
    assert artifacts.write_transcript("default", "live") is None


def test_the_worker_first_reindexes_what_a_crash_left_unindexed(
    service: SignetService, artifacts: ArtifactService
) -> None:
    artifacts.write_compaction("default", "s1", "A summary whose row was lost.")
    with database_of(service).write() as conn:
        conn.execute("DELETE FROM memory_artifacts")  # the crash between file and row
    worker = ArtifactWorker(artifacts)
    worker.run_once()
    [artifact] = artifacts.indexed("default")
    assert artifact.meta.kind == "compaction"


def test_a_retried_compaction_writes_one_file(artifacts: ArtifactService, tmp_path: Path) -> None:
    first = artifacts.write_compaction("default", "s1", "Same summary.")
    again = artifacts.write_compaction("default", "s1", "  Same summary.\n")
    assert first is not None and again is not None and again.source_path == first.source_path
    assert len(list((tmp_path / "memory").glob("*--compaction.md"))) == 1


def test_reindex_sweeps_only_artifact_temp_files(
    artifacts: ArtifactService, tmp_path: Path
) -> None:
    folder = tmp_path / "memory"
    folder.mkdir(exist_ok=True)
    mine = folder / ".20261201T000000.000Z--s1-00000000--summary.md.k2j3.tmp"
    backup = folder / ".MEMORY.backup-20261201T000000.000Z.md.x9.tmp"
    mine.write_text("torn")
    backup.write_text("MEMORY.md's writer owns this one")
    artifacts.reindex()
    assert not mine.exists() and backup.exists()
