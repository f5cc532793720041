"""Workspace resolution order, layout, harness slugs and ensure()."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import pytest

from signet_desktop.config.workspace import (
    WorkspacePaths,
    find_config_file,
    harness_slug,
    resolve_workspace,
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


def test_cli_value_wins_over_both_env_vars(tmp_path: Path, home: Path) -> None:
    env = {"SIGNET_WORKSPACE": str(tmp_path / "ws"), "SIGNET_PATH": str(tmp_path / "sp")}
    assert resolve_workspace(tmp_path / "cli", env) == tmp_path / "cli"


def test_signet_workspace_wins_over_signet_path(tmp_path: Path, home: Path) -> None:
    env = {"SIGNET_WORKSPACE": str(tmp_path / "ws"), "SIGNET_PATH": str(tmp_path / "sp")}
    assert resolve_workspace(None, env) == tmp_path / "ws"


def test_signet_path_is_accepted_alone(tmp_path: Path, home: Path) -> None:
    assert resolve_workspace(None, {"SIGNET_PATH": str(tmp_path / "sp")}) == tmp_path / "sp"


def test_default_is_dot_agents_in_home(home: Path) -> None:
    assert resolve_workspace(None, {}) == home / ".agents"


def test_blank_values_are_skipped(tmp_path: Path, home: Path) -> None:
    env = {"SIGNET_WORKSPACE": "  ", "SIGNET_PATH": str(tmp_path / "sp")}
    assert resolve_workspace("", env) == tmp_path / "sp"
    assert resolve_workspace("   ", {"SIGNET_WORKSPACE": ""}) == home / ".agents"


def test_tilde_is_expanded_and_relative_made_absolute(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert resolve_workspace("~/mem", {}) == home / "mem"
    assert resolve_workspace(None, {"SIGNET_PATH": "~/sp"}) == home / "sp"
    monkeypatch.chdir(tmp_path)
    assert resolve_workspace("rel/../ws", {}) == tmp_path / "ws"


def test_process_environment_is_used_when_env_not_given(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SIGNET_WORKSPACE", raising=False)
    monkeypatch.setenv("SIGNET_PATH", str(tmp_path / "from-env"))
    assert resolve_workspace() == tmp_path / "from-env"


def test_layout_of_a_workspace(tmp_path: Path) -> None:
    paths = WorkspacePaths.for_root(tmp_path)
    assert paths.root == tmp_path
    assert paths.agent_yaml == tmp_path / "agent.yaml"
    assert paths.memory_dir == tmp_path / "memory"
    assert paths.db_path == tmp_path / "memory" / "memories.db"
    assert paths.daemon_dir == tmp_path / ".daemon"
    assert paths.pid_file == tmp_path / ".daemon" / "pid"
    assert paths.logs_dir == tmp_path / ".daemon" / "logs"
    assert paths.memory_md == tmp_path / "MEMORY.md"
    assert not any(tmp_path.iterdir()), "building the paths must not touch the disk"


def test_config_file_is_first_existing_candidate(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("search: {}\n")
    assert WorkspacePaths.for_root(tmp_path).agent_yaml == tmp_path / "config.yaml"
    (tmp_path / "agent.yaml").write_text("search: {}\n")
    paths = WorkspacePaths.for_root(tmp_path)
    assert paths.agent_yaml == tmp_path / "agent.yaml"
    assert paths.config_file() == tmp_path / "agent.yaml"


def test_config_file_is_none_when_absent_and_ignores_directories(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").mkdir()
    assert find_config_file(tmp_path) is None
    assert WorkspacePaths.for_root(tmp_path).config_file() is None


def test_for_root_makes_the_root_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert WorkspacePaths.for_root(Path("ws")).root == tmp_path / "ws"


def test_ensure_creates_directories_but_no_config(tmp_path: Path) -> None:
    paths = WorkspacePaths.for_root(tmp_path / "new" / "ws")
    paths.ensure()
    paths.ensure()  # idempotent
    assert paths.memory_dir.is_dir()
    assert paths.logs_dir.is_dir()
    assert stat.S_IMODE(paths.daemon_dir.stat().st_mode) & 0o077 == 0
    assert find_config_file(paths.root) is None
    assert not paths.db_path.exists()
    assert not paths.memory_md.exists()


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("claude-code", "claude-code"),
        ("Claude Code", "claude-code"),
        ("  OpenCode ", "opencode"),
        ("claude_code", "claude-code"),
        ("codex!", "codex"),
        ("pi.v2", "pi.v2"),
        ("Ünïcode", "unicode"),
        ("x" * 100, "x" * 64),
    ],
)
def test_harness_names_become_safe_slugs(name: str, slug: str) -> None:
    assert harness_slug(name) == slug


@pytest.mark.parametrize(
    "name", ["..", "../etc", "a/b", "a\\b", "..\\x", ".", "", "   ", "!!!", "a\x00b", "x..y"]
)
def test_harness_names_that_could_escape_are_refused(name: str, tmp_path: Path) -> None:
    paths = WorkspacePaths.for_root(tmp_path)
    with pytest.raises(ValueError):
        paths.transcripts_dir(name)


def test_transcripts_dir_stays_under_memory(tmp_path: Path) -> None:
    paths = WorkspacePaths.for_root(tmp_path)
    directory = paths.transcripts_dir("Claude Code")
    assert directory == tmp_path / "memory" / "claude-code" / "transcripts"
    assert directory.resolve().is_relative_to(paths.memory_dir.resolve())
    assert not directory.exists()


def test_workspace_module_does_not_import_pydantic_or_yaml() -> None:
    code = (
        "import sys, signet_desktop.config.workspace;"
        "bad = [m for m in ('pydantic', 'yaml') if m in sys.modules];"
        "sys.exit(1 if bad else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_package_exports_resolve_lazily() -> None:
    import signet_desktop.config as config

    assert config.resolve_workspace is resolve_workspace
    assert callable(config.load_config)
    with pytest.raises(AttributeError):
        _ = config.no_such_name
