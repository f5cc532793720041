"""Finding Claude Code, Codex and OpenCode: fake binaries (shell scripts) in temporary dirs."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from signet_desktop.inference import harness_discovery
from signet_desktop.inference.harness_discovery import Harness, discover, inspect, read_version


@pytest.fixture(autouse=True)
def no_system_dirs(monkeypatch: pytest.MonkeyPatch) -> None:
    # /usr/local/bin on the machine running the tests must not leak into them.
    monkeypatch.setattr(harness_discovery, "SYSTEM_DIRS", ())


def fake_binary(folder: Path, name: str, body: str = 'echo "1.0.0"') -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def test_finds_each_harness_on_path_with_its_version(tmp_path: Path, home: Path) -> None:
    bin_dir = tmp_path / "bin"
    fake_binary(bin_dir, "claude", 'echo "2.0.14 (Claude Code)"')
    fake_binary(bin_dir, "codex", 'echo "codex-cli 0.46.0"')
    fake_binary(bin_dir, "opencode", 'echo ""; echo "0.15.2"')
    found = discover(path_var=str(bin_dir), home=home)
    assert found == (
        Harness("claude", "Claude Code", bin_dir / "claude", "2.0.14 (Claude Code)", True),
        Harness("codex", "Codex", bin_dir / "codex", "codex-cli 0.46.0", True),
        Harness("opencode", "OpenCode", bin_dir / "opencode", "0.15.2", True),
    )


def test_nothing_found_is_an_empty_tuple(tmp_path: Path, home: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert discover(path_var=str(tmp_path / "empty"), home=home) == ()
    assert discover(path_var=None, home=home) == ()


@pytest.mark.parametrize(
    "relative",
    [".local/bin/claude", ".claude/local/claude", ".npm-global/bin/claude", ".bun/bin/claude"],
)
def test_finds_claude_in_the_usual_install_places_off_path(home: Path, relative: str) -> None:
    binary = fake_binary((home / relative).parent, "claude", 'echo "2.0.1 (Claude Code)"')
    (found,) = discover(path_var="", home=home)
    assert found.path == binary and found.version == "2.0.1 (Claude Code)" and found.supported


def test_system_dirs_are_searched(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    system = tmp_path / "usr-local-bin"
    binary = fake_binary(system, "codex")
    monkeypatch.setattr(harness_discovery, "SYSTEM_DIRS", (system,))
    assert [h.path for h in discover(path_var="", home=home)] == [binary]


def test_path_wins_over_install_places(tmp_path: Path, home: Path) -> None:
    on_path = fake_binary(tmp_path / "bin", "claude")
    fake_binary(home / ".local" / "bin", "claude")
    (found,) = discover(path_var=str(tmp_path / "bin"), home=home)
    assert found.path == on_path


def test_a_relative_path_entry_becomes_absolute(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_binary(tmp_path / "rel", "claude")
    monkeypatch.chdir(tmp_path)
    (found,) = discover(path_var="rel", home=home)
    assert found.path.is_absolute() and found.path == tmp_path / "rel" / "claude"


def test_a_symlink_is_kept_not_resolved(tmp_path: Path, home: Path) -> None:
    # ~/.local/bin/claude points at one version; the link is what survives an update.
    real = fake_binary(tmp_path / "versions" / "2.0.14", "claude")
    link_dir = home / ".local" / "bin"
    link_dir.mkdir(parents=True)
    (link_dir / "claude").symlink_to(real)
    (found,) = discover(path_var="", home=home)
    assert found.path == link_dir / "claude"


def test_non_executable_files_and_directories_are_skipped(tmp_path: Path, home: Path) -> None:
    bin_dir = tmp_path / "bin"
    fake_binary(bin_dir, "claude").chmod(0o644)
    (home / ".local" / "bin" / "claude").mkdir(parents=True)
    assert discover(path_var=str(bin_dir), home=home) == ()


def test_a_failing_version_is_unknown(tmp_path: Path, home: Path) -> None:
    fake_binary(tmp_path / "bin", "claude", 'echo "boom" >&2; exit 3')
    (found,) = discover(path_var=str(tmp_path / "bin"), home=home)
    assert found.version is None and found.path == tmp_path / "bin" / "claude"


def test_a_binary_that_cannot_start_has_an_unknown_version(tmp_path: Path, home: Path) -> None:
    binary = tmp_path / "bin" / "claude"
    binary.parent.mkdir()
    binary.write_text("#!/nonexistent/interpreter\n")
    binary.chmod(0o755)
    (found,) = discover(path_var=str(binary.parent), home=home)
    assert found.version is None


def test_a_hanging_version_is_stopped_at_the_timeout(tmp_path: Path) -> None:
    # `sleep` is a child of the script holding its stdout: killing only the script would leave
    # the read waiting for the sleep to end.
    binary = fake_binary(tmp_path / "bin", "claude", "sleep 30")
    started = time.monotonic()
    assert read_version(binary, timeout_s=0.5) is None
    assert time.monotonic() - started < 10


def test_a_version_on_stderr_is_read_without_colour_codes(tmp_path: Path) -> None:
    body = 'printf "\\033[1m0.15.2\\033[0m\\a\\n" >&2'
    binary = fake_binary(tmp_path / "bin", "opencode", body)
    assert read_version(binary) == "0.15.2"
    long_line = fake_binary(tmp_path / "bin", "codex", "printf 'x%.0s' $(seq 1 300)")
    assert read_version(long_line) == "x" * 80


def test_the_version_run_asks_signets_codex_wrapper_to_stay_out(tmp_path: Path) -> None:
    binary = fake_binary(tmp_path / "bin", "codex", 'echo "hooks=$SIGNET_NO_HOOKS"')
    assert read_version(binary) == "hooks=1"


def test_a_runner_that_raises_gives_an_unknown_version(tmp_path: Path, home: Path) -> None:
    fake_binary(tmp_path / "bin", "claude")

    def broken(binary: Path, timeout_s: float) -> str | None:
        raise RuntimeError("boom")

    (found,) = discover(path_var=str(tmp_path / "bin"), home=home, runner=broken)
    assert found.version is None


def test_the_runner_gets_the_path_and_timeout(tmp_path: Path, home: Path) -> None:
    fake_binary(tmp_path / "bin", "codex")
    calls: list[tuple[Path, float]] = []

    def runner(binary: Path, timeout_s: float) -> str | None:
        calls.append((binary, timeout_s))
        return "scripted"

    (found,) = discover(path_var=str(tmp_path / "bin"), home=home, runner=runner, timeout_s=3)
    assert calls == [(tmp_path / "bin" / "codex", 3)] and found.version == "scripted"


def test_inspect_knows_a_harness_by_its_file_name_only(tmp_path: Path) -> None:
    named = fake_binary(tmp_path / "a", "claude")
    assert inspect(named) == Harness("claude", "Claude Code", named, "1.0.0", True)
    # The acpx executor tells harnesses apart by file name, so a renamed Claude Code is not
    # offered even when its version says what it is.
    renamed = fake_binary(tmp_path / "b", "claude-wrapper", 'echo "2.0.14 (Claude Code)"')
    assert inspect(renamed) == Harness(
        "claude-wrapper", "claude-wrapper", renamed, "2.0.14 (Claude Code)", False
    )
    other = fake_binary(tmp_path / "c", "aider", 'echo "aider 0.80"')
    assert inspect(other) == Harness("aider", "aider", other, "aider 0.80", False)


def test_inspect_refuses_what_is_not_an_executable_file(tmp_path: Path) -> None:
    assert inspect(tmp_path / "missing") is None
    assert inspect(tmp_path) is None
    text = tmp_path / "claude"
    text.write_text("not a program")
    os.chmod(text, 0o644)
    assert inspect(text) is None


def test_looked_in_names_every_place_searched(home: Path) -> None:
    places = harness_discovery.looked_in(home)
    assert str(home / ".local" / "bin") in places
    assert str(home / ".claude" / "local" / "claude") in places
    assert str(home / ".bun" / "bin") in places and str(home / ".npm-global" / "bin") in places
