"""`signet memory-md`: the request sent, the summary printed, the unwritable-target message."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_fakes import FakeDaemon

from signet_desktop.cli.main import main

Capture = pytest.CaptureFixture[str]
REBUILT = {
    "agentId": "default", "path": "/ws/MEMORY.md", "changed": True, "bytes": 2345,
    "backup": "memory/MEMORY.backup-20261201T100000.000Z.md", "asOf": None, "shown": 4,
    "withheld": 1,
}  # fmt: skip


def call(fake: FakeDaemon, *argv: str) -> int:
    return main(list(argv), env={"SIGNET_DAEMON_URL": fake.url})


def test_rebuild_posts_the_agent_and_now_and_prints_a_summary(
    fake_daemon: FakeDaemon, capsys: Capture
) -> None:
    fake_daemon.reply("POST", "/api/memory-md/rebuild", 200, REBUILT)
    code = call(fake_daemon, "memory-md", "rebuild", "--agent", "a1", "--now", "2026-12-01")
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith("Rebuilt /ws/MEMORY.md (2,345 bytes; 1 withheld")
    assert "backup memory/MEMORY.backup-" in out
    (request,) = fake_daemon.requests
    assert request.body == {"agentId": "a1", "now": "2026-12-01"}
    assert request.headers["x-signet-agent-id"] == "a1"


def test_an_unchanged_rebuild_says_so(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    fake_daemon.reply("POST", "/api/memory-md/rebuild", 200, {**REBUILT, "changed": False})
    assert call(fake_daemon, "memory-md", "rebuild") == 0
    assert capsys.readouterr().out == "Unchanged /ws/MEMORY.md (2,345 bytes)\n"


def test_an_unwritable_target_is_a_clear_message_and_exit_1(
    fake_daemon: FakeDaemon, capsys: Capture
) -> None:
    error = {
        "error": "MEMORY.md could not be written at /ws/MEMORY.md: Permission denied; "
        "the previous file is unchanged",
        "code": "memory_md_unwritable",
    }
    fake_daemon.reply("POST", "/api/memory-md/rebuild", 503, error)
    assert call(fake_daemon, "memory-md", "rebuild") == 1
    err = capsys.readouterr().err
    assert "Permission denied" in err and "previous file is unchanged" in err
    assert "hint: make the path writable" in err


def test_status_prints_the_last_error(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    answer = {
        "agentId": "default", "path": "/ws/MEMORY.md", "exists": True,
        "last": {"state": "error", "error": "PermissionError: Permission denied"},
    }  # fmt: skip
    fake_daemon.reply("GET", "/api/memory-md", 200, answer)
    assert call(fake_daemon, "memory-md", "status") == 0
    out = capsys.readouterr().out
    assert "/ws/MEMORY.md (exists); last rebuild: error" in out
    assert "error: PermissionError: Permission denied" in out


def test_doctor_fails_when_memory_md_could_not_be_written(
    fake_daemon: FakeDaemon, tmp_path: Path, capsys: Capture
) -> None:
    fake_daemon.reply(
        "GET", "/health", 200,
        {"status": "ok", "version": "0.1.0", "pid": 7, "uptime": 12, "agentsDir": str(tmp_path)},
    )  # fmt: skip
    agents = {
        "default": {"state": "error", "path": "/ws/MEMORY.md", "error": "PermissionError: denied"},
        "b": {"state": "ok", "path": "/ws/agents/b/MEMORY.md", "error": None},
    }
    fake_daemon.reply(
        "GET", "/api/status", 200,
        {"vector": {"available": True, "version": "v0.1.9"}, "memoryMd": {"agents": agents}},
    )  # fmt: skip
    code = main(
        ["doctor", "--workspace", str(tmp_path)], env={"SIGNET_DAEMON_URL": fake_daemon.url}
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "✗ MEMORY.md of default not written at /ws/MEMORY.md: PermissionError" in out
    assert "✓ MEMORY.md of b written at /ws/agents/b/MEMORY.md" in out
