"""`signet source add folder|list|show|sync|remove` against the real app on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.daemon import Capture, CliDaemon, run_daemon

from signet_desktop.embedding.hashing import HashEmbedder


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[CliDaemon]:
    with run_daemon(tmp_path / "ws", HashEmbedder()) as served:
        yield served


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    (root / "archive").mkdir(parents=True)
    (root / "a.md").write_text("# A\n\nalpha", encoding="utf-8")
    (root / "b.txt").write_text("beta", encoding="utf-8")
    (root / "archive" / "old.md").write_text("old", encoding="utf-8")
    return root


def test_add_list_sync_show_remove(daemon: CliDaemon, capsys: Capture, notes: Path) -> None:
    code, out, err = daemon.cli(
        capsys, "source", "add", "folder", str(notes), "--exclude", "archive/**"
    )
    assert code == 0, err
    assert out.startswith("idle con_") and "2 added" in out, out
    connector_id = out.split()[1].rstrip(":")
    code, out, _ = daemon.cli(capsys, "source", "list")
    assert code == 0 and connector_id in out and " idle " in out
    (notes / "a.md").write_text("# A\n\nalpha, edited", encoding="utf-8")
    code, out, err = daemon.cli(capsys, "source", "sync", connector_id)
    assert code == 0, err
    assert "1 changed" in out and "1 unchanged" in out
    code, out, _ = daemon.cli(capsys, "source", "sync", connector_id, "--full")
    assert code == 0 and "2 unchanged" in out
    code, out, _ = daemon.cli(capsys, "source", "show", connector_id, "--json")
    assert json.loads(out)["files"] == 2
    code, out, _ = daemon.cli(capsys, "source", "remove", connector_id)
    assert code == 0 and "documents deleted" in out
    assert (notes / "a.md").read_text(encoding="utf-8").endswith("edited")
    code, out, _ = daemon.cli(capsys, "source", "list")
    assert "no connected sources" in out


def test_bad_folder_and_duplicate_send_an_error_and_write_nothing(
    daemon: CliDaemon, capsys: Capture, notes: Path
) -> None:
    code, _, err = daemon.cli(capsys, "source", "add", "folder", str(notes / "missing"))
    assert code != 0 and "does not exist" in err
    assert daemon.scalar("SELECT COUNT(*) FROM connectors") == 0
    code, _, _ = daemon.cli(capsys, "source", "add", "folder", str(notes), "--no-wait")
    assert code == 0
    code, _, err = daemon.cli(capsys, "source", "add", "folder", str(notes))
    assert code != 0 and "already connected" in err
    assert daemon.scalar("SELECT COUNT(*) FROM connectors") == 1


def test_help_says_how_it_differs_from_sources(capsys: Capture) -> None:
    from signet_desktop.cli.main import main

    code = main(["source", "--help"])
    assert code == 0 and "signet sources" in capsys.readouterr().out
