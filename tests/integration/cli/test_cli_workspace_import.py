"""`signet import signet-workspace PATH` against the real app served on a loopback socket."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.daemon import Capture, CliDaemon, run_daemon
from support.signet_workspace import event, make_signet_db, memory, transcript

from signet_desktop.cli.import_commands import records_line
from signet_desktop.embedding.hashing import HashEmbedder


@pytest.fixture
def daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[CliDaemon]:
    monkeypatch.setenv("HOME", str(tmp_path))  # the Signet workspace sits under home
    make_signet_db(
        tmp_path / ".agents" / "memory" / "memories.db",
        memories=[memory(i) for i in range(5)] + [memory(9, content=" ")],
        history=[event("sig-000001", 1, "created")],
        transcripts=[transcript("s1", turns=3)],
    )
    with run_daemon(tmp_path / "ws", HashEmbedder()) as served:
        yield served


def test_a_signet_workspace_imports_with_a_summary_and_reruns_as_no_op(
    daemon: CliDaemon, capsys: Capture, tmp_path: Path
) -> None:
    code, out, err = daemon.cli(capsys, "import", "signet-workspace", str(tmp_path / ".agents"))
    assert code == 0, err
    assert out.startswith(
        "import completed: 6 memories and transcripts imported (3 transcript turns); "
        "0 duplicate, 0 already imported, 1 could not be mapped"
    )
    assert "report.json" in out and "records/s" in err
    code, out, _ = daemon.cli(
        capsys, "import", "signet-workspace", str(tmp_path / ".agents"), "--json"
    )
    counts = json.loads(out)["counts"]
    assert (counts["recordsImported"], counts["recordsSkipped"]) == (0, 6)
    code, out, _ = daemon.cli(capsys, "memory", "list", "--json")
    assert code == 0 and "sig-000001" in out


def test_a_path_is_required_and_must_hold_a_signet_database(
    daemon: CliDaemon, capsys: Capture, tmp_path: Path
) -> None:
    code, _, err = daemon.cli(capsys, "import", "signet-workspace")
    assert code == 2 and "path" in err  # a usage error: nothing was sent
    (tmp_path / "empty").mkdir()
    code, _, err = daemon.cli(capsys, "import", "signet-workspace", str(tmp_path / "empty"))
    assert code == 2 and "not_signet_workspace" in err
    code, out, _ = daemon.cli(capsys, "sources", "list")
    assert out.startswith("no sources yet")  # refused before anything was written


def test_the_records_line_counts_records_not_files() -> None:
    run = {"counts": {"recordsSeen": 500, "recordsImported": 490, "recordsDuplicate": 10}}
    assert records_line(run, 2.0) == (
        "500 records read · 490 imported · 10 duplicate · 250 records/s · 2.0 s"
    )


def test_removing_the_source_previews_then_purges_the_memories(
    daemon: CliDaemon, capsys: Capture, tmp_path: Path
) -> None:
    daemon.cli(capsys, "import", "signet-workspace", str(tmp_path / ".agents"))
    code, out, _ = daemon.cli(capsys, "sources", "list", "--json")
    (source,) = json.loads(out)["sources"]
    code, out, _ = daemon.cli(capsys, "sources", "remove", source["id"], "--dry-run")
    assert code == 0 and "memories" in out and "session_transcripts" in out
    code, out, _ = daemon.cli(capsys, "sources", "remove", source["id"])  # still a preview
    assert code == 0 and "would purge" in out and "--yes" in out
    assert daemon.scalar("SELECT COUNT(*) FROM memories") > 0
    code, out, _ = daemon.cli(capsys, "sources", "remove", source["id"], "--yes")
    assert code == 0 and "tombstone stb_" in out
    assert daemon.scalar("SELECT COUNT(*) FROM memories") == 0
    assert (tmp_path / ".agents" / "memory" / "memories.db").exists()  # Signet's file stays
