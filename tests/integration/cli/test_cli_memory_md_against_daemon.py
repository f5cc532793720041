"""`signet memory-md` against the real app on a loopback socket: the file, its bytes, faults."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.daemon import Capture, CliDaemon, run_daemon

from signet_desktop.embedding.hashing import HashEmbedder


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[CliDaemon]:
    with run_daemon(tmp_path / "ws", HashEmbedder()) as served:
        yield served


def test_rebuild_writes_memory_md_and_a_second_one_is_unchanged(
    daemon: CliDaemon, capsys: Capture, tmp_path: Path
) -> None:
    assert daemon.cli(capsys, "remember", "critical: never force-push main")[0] == 0
    code, out, err = daemon.cli(capsys, "memory-md", "rebuild")
    assert (code, err) == (0, "") and out.startswith("Rebuilt ")
    target = tmp_path / "ws" / "MEMORY.md"
    data = target.read_bytes()
    assert b"## Global Head (Tier 1)" in data and b"never force-push main" in data
    code, out, _ = daemon.cli(capsys, "memory-md", "rebuild")
    assert code == 0 and out.startswith("Unchanged ") and target.read_bytes() == data
    code, out, _ = daemon.cli(capsys, "memory-md", "status")
    assert code == 0 and "(exists); last rebuild: ok" in out


def test_an_unwritable_target_is_a_message_and_exit_1(
    daemon: CliDaemon, capsys: Capture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    daemon.cli(capsys, "remember", "critical: the first rule")
    daemon.cli(capsys, "memory-md", "rebuild")
    target = tmp_path / "ws" / "MEMORY.md"
    before = target.read_bytes()
    daemon.cli(capsys, "remember", "critical: the second rule")

    def refuse(src: str, dst: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("signet_desktop.evidence.artifacts.os.replace", refuse)
    code, out, err = daemon.cli(capsys, "memory-md", "rebuild")
    assert code == 1 and out == ""
    assert "MEMORY.md could not be written" in err and "Permission denied" in err
    assert "hint: make the path writable" in err
    assert target.read_bytes() == before
