"""`signet import` and `signet sources` against the real app served on a loopback socket."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.daemon import Capture, CliDaemon, run_daemon
from support.history_files import write_claude_project

from signet_desktop.cli.import_commands import progress_line
from signet_desktop.embedding.hashing import HashEmbedder


@pytest.fixture
def daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[CliDaemon]:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    write_claude_project(tmp_path / "claude" / "projects", sessions=3, exchanges=2)
    with run_daemon(tmp_path / "ws", HashEmbedder()) as served:
        yield served


def test_import_shows_progress_then_a_summary(daemon: CliDaemon, capsys: Capture) -> None:
    code, out, err = daemon.cli(capsys, "import", "claude-code")
    assert code == 0, err
    assert out.startswith("import completed: 3 sessions imported, 12 turns; 0 duplicate")
    assert "files: 3 seen — 3 imported, 0 unchanged, 0 skipped, 0 in progress" in out
    assert "messages kept out of turns (still in the staged copies): 3 sidechain" in out
    assert "files" in err and "turns/s" in err  # the progress line (stderr is not a TTY)
    code, out, _ = daemon.cli(capsys, "import", "claude-code", "--json")
    run = json.loads(out)
    assert run["status"] == "completed" and run["counts"]["recordsImported"] == 0


def test_sources_list_show_and_remove(daemon: CliDaemon, capsys: Capture) -> None:
    daemon.cli(capsys, "import", "claude-code")
    code, out, _ = daemon.cli(capsys, "sources", "list", "--json")
    (source,) = json.loads(out)["sources"]
    code, out, _ = daemon.cli(capsys, "sources", "show", source["id"])
    assert code == 0 and "3 imported; 12 turns; 0 unreadable lines skipped" in out
    code, out, _ = daemon.cli(capsys, "sources", "remove", source["id"], "--dry-run")
    assert code == 0 and "would purge" in out and "session_transcripts" in out
    code, out, _ = daemon.cli(capsys, "sources", "remove", source["id"])  # a preview first
    assert code == 0 and out.startswith(f"{source['id']}: would purge")
    assert f"to purge: signet sources remove {source['id']} --yes" in out
    code, out, _ = daemon.cli(capsys, "sources", "list", "--json")
    assert [s["id"] for s in json.loads(out)["sources"]] == [source["id"]]  # nothing went
    code, out, _ = daemon.cli(capsys, "sources", "remove", source["id"], "--yes")
    assert code == 0 and "purged" in out and "tombstone stb_" in out
    code, out, _ = daemon.cli(capsys, "sources", "list")
    assert out.startswith("no sources yet")
    code, _, err = daemon.cli(capsys, "import", "claude-code")
    assert code == 2 and "source_removed" in err and "--reimport" in err
    code, out, err = daemon.cli(capsys, "import", "claude-code", "--reimport")
    assert code == 0 and "3 sessions imported" in out, err


def test_bad_input_exits_2(daemon: CliDaemon, capsys: Capture, tmp_path: Path) -> None:
    code, _, err = daemon.cli(capsys, "import", "codex", str(tmp_path / "missing"))
    assert code == 2 and "path" in err
    code, _, err = daemon.cli(capsys, "sources", "remove", "not-an-id")
    assert code == 2


def test_the_progress_line_shows_counts_and_rate() -> None:
    run = {"counts": {"filesSeen": 5, "recordsImported": 4, "turnsImported": 400}, "filesTotal": 10}
    line = progress_line(run, 2.0)
    assert line.startswith("[" + "#" * 12 + "." * 12 + "] 5/10 files")
    assert "4 sessions · 400 turns · 200 turns/s · 2.0 s" in line
