"""Bad input at start-up: a clear message, a non-zero exit, and nothing of the user's changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.launcher import START_TIMEOUT, Launcher, args_for, clean_env, no_traceback

pytestmark = pytest.mark.slow


def refused(launcher: Launcher, workspace: Path, *extra: str) -> str:
    daemon = launcher.run_to_exit(*args_for(workspace, *extra))
    stderr = daemon.stderr()
    assert daemon.exit_code == 2, stderr
    no_traceback(stderr)
    assert not (workspace / ".daemon" / "pid").exists()
    return stderr


def test_retired_config_key_is_named(launcher: Launcher) -> None:
    workspace = launcher.tmp_path / "ws"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text(
        "search:\n  top_k: 10\nmemory:\n  pipelineV2:\n    writeGateEnabled: true\n"
    )
    stderr = refused(launcher, workspace)
    assert "memory.pipelineV2.writeGateEnabled" in stderr
    assert "agent.yaml:5:" in stderr
    assert not (workspace / "memory" / "memories.db").exists()  # never got as far as the DB


def test_corrupt_yaml_names_line_and_column(launcher: Launcher) -> None:
    workspace = launcher.tmp_path / "ws"
    workspace.mkdir()
    original = b"search:\n  top_k: [10, 20\nembedding:\n  provider: native\n"
    (workspace / "agent.yaml").write_bytes(original)
    stderr = refused(launcher, workspace)
    assert "invalid YAML" in stderr
    assert "agent.yaml:3:1" in stderr
    assert (workspace / "agent.yaml").read_bytes() == original


def test_database_that_is_not_sqlite_is_left_byte_for_byte(launcher: Launcher) -> None:
    workspace = launcher.tmp_path / "ws"
    db_file = workspace / "memory" / "memories.db"
    db_file.parent.mkdir(parents=True)
    original = bytes(range(256)) * 64
    db_file.write_bytes(original)
    stderr = refused(launcher, workspace)
    assert "not a SQLite database" in stderr and str(db_file) in stderr
    assert db_file.read_bytes() == original
    assert sorted(p.name for p in db_file.parent.iterdir()) == ["memories.db"]  # no -wal/-shm


def test_public_address_without_token_is_refused(launcher: Launcher) -> None:
    stderr = refused(launcher, launcher.tmp_path / "ws", "--host", "0.0.0.0")
    assert "auth.token" in stderr


def test_bad_port_value_is_a_usage_error(launcher: Launcher) -> None:
    daemon = launcher.run_to_exit("--workspace", str(launcher.tmp_path / "ws"), "--port", "x")
    assert daemon.exit_code == 2
    assert "--port" in daemon.stderr()


def test_desktop_mode_without_a_display_points_to_headless(launcher: Launcher) -> None:
    env = {
        k: v
        for k, v in clean_env(launcher.home).items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    workspace = launcher.tmp_path / "ws"
    daemon = launcher.start(*args_for(workspace), env=env, headless=False)
    assert daemon.wait(START_TIMEOUT) == 2
    assert "--headless" in daemon.stderr()
    no_traceback(daemon.stderr())
    assert not workspace.exists()  # refused before touching anything
