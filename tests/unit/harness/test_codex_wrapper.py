"""The `codex` wrapper: what `signet install codex` writes, and the script run for real.

The script is run by /bin/sh with a stand-in `codex` and `signet` first on PATH (each records
its arguments and stdin), so the test sees exactly what Codex and `signet hook` receive.
"""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
import tomllib
from pathlib import Path

import pytest
from installer_support import URL, backups

from signet_desktop.harness.installers import codex, codex_wrapper
from signet_desktop.harness.installers.files import Locations, apply

SESSION = "019a1b2c-3d4e-7f60-8a9b-0c1d2e3f4a5b"

FAKE_SIGNET = """#!/bin/sh
# stand-in for `signet hook <event> ...`: records argv and stdin, prints context at start
log="$FAKE_LOG/signet-$2.json"
stdin=$(cat)
printf '%s\\n%s\\n' "$*" "$stdin" > "$log"
[ "$2" = "session-start" ] && [ -n "$FAKE_CONTEXT" ] && printf '%s' "$FAKE_CONTEXT"
exit 0
"""

FAKE_CODEX = """#!/bin/sh
# stand-in for codex: records argv, writes a rollout file as Codex does, exits 3
printf '%s\\n' "$@" > "$FAKE_LOG/codex-argv"
dir="${CODEX_HOME:-$HOME/.codex}/sessions/2026/12/01"
mkdir -p "$dir"
echo '{"type":"session_meta"}' > "$dir/rollout-2026-12-01T12-00-00-SESSION.jsonl"
exit 3
""".replace("SESSION", SESSION)


class StandInLocations(Locations):
    """Locations whose `signet` is the stand-in in real-bin (the installer writes the
    absolute path of this installation's own otherwise)."""

    def executable(self, name: str) -> str:
        found = shutil.which(name, path=self.env.get("PATH"))
        return found if name == "signet" and found else super().executable(name)


def _executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def setup(home: Path, tmp_path: Path) -> tuple[Locations, dict[str, str], Path]:
    real_bin, log, temp = tmp_path / "real-bin", tmp_path / "log", tmp_path / "tmp"
    log.mkdir()
    temp.mkdir()
    _executable(real_bin / "codex", FAKE_CODEX)
    _executable(real_bin / "signet", FAKE_SIGNET)
    wrapper_dir = home / ".config" / "signet" / "bin"
    path = f"{wrapper_dir}:{real_bin}:/usr/bin:/bin"
    env = {"HOME": str(home), "PATH": path, "FAKE_LOG": str(log), "TMPDIR": str(temp)}
    locations = StandInLocations(home, env)
    apply(codex.plan_install(locations))
    return locations, env, log


def _run(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    wrapper = Path(env["HOME"]) / ".config" / "signet" / "bin" / "codex"
    return subprocess.run(
        [str(wrapper), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=30
    )


def test_install_writes_an_executable_wrapper_and_one_path_block(
    setup: tuple[Locations, dict[str, str], Path],
) -> None:
    locations, _env, _log = setup
    wrapper = codex_wrapper.wrapper_path(locations)
    assert wrapper.stat().st_mode & stat.S_IXUSR
    bashrc = (locations.home / ".bashrc").read_text()
    assert bashrc.count(codex_wrapper.BLOCK_START) == 1
    assert f"export PATH={codex_wrapper.wrapper_dir(locations)}:" in bashrc
    assert codex.plan_install(locations).pending == ()  # a second install changes nothing
    facts = codex.status(locations)
    assert facts["hooks"] == f"wrapper {wrapper}" and "note" not in facts  # first on PATH


def test_session_context_goes_in_and_the_rollout_file_comes_out(
    setup: tuple[Locations, dict[str, str], Path], tmp_path: Path
) -> None:
    _locations, env, log = setup
    project = tmp_path / 'my "billing" app'
    project.mkdir()
    done = _run({**env, "FAKE_CONTEXT": "billing runs on Postgres 16"}, project, "exec", "hi")
    assert done.returncode == 3  # Codex's own exit status
    argv = (log / "codex-argv").read_text().splitlines()
    # beside Codex's own instructions (model_instructions_file would replace them)
    assert argv[:2] == ["-c", 'developer_instructions="billing runs on Postgres 16"']
    assert argv[2:] == ["exec", "hi"]
    start_args, start_body = (log / "signet-session-start.json").read_text().splitlines()
    assert start_args == f"hook session-start -H codex --project {project} --url {URL}"
    assert json.loads(start_body) == {"cwd": str(project)}
    end_args, end_body = (log / "signet-session-end.json").read_text().splitlines()
    assert end_args == f"hook session-end -H codex --url {URL}"
    end = json.loads(end_body)
    assert end["session_id"] == SESSION and end["cwd"] == str(project)
    assert end["transcript_path"].endswith(f"rollout-2026-12-01T12-00-00-{SESSION}.jsonl")
    assert list(Path(env["TMPDIR"]).iterdir()) == []  # the wrapper's temp folder is gone


def test_any_context_reaches_codex_as_one_toml_string(
    setup: tuple[Locations, dict[str, str], Path], tmp_path: Path
) -> None:
    _locations, env, log = setup
    context = '## Signet memory\n\t"Postgres 16" C:\\db \\n ünïcode\r\n\x07bell\n\nlast\n'
    assert _run({**env, "FAKE_CONTEXT": context}, tmp_path, "exec", "hi").returncode == 3
    option, value = (log / "codex-argv").read_text().splitlines()[1].split("=", 1)
    assert option == "developer_instructions"
    expected = '## Signet memory\n\t"Postgres 16" C:\\db \\n ünïcode\nbell\n\nlast'
    assert tomllib.loads(f"x = {value}")["x"] == expected  # control characters dropped


def test_a_context_too_long_for_one_argument_is_left_out(
    setup: tuple[Locations, dict[str, str], Path], tmp_path: Path
) -> None:
    _locations, env, log = setup
    assert _run({**env, "FAKE_CONTEXT": "x" * 120_000}, tmp_path, "hi").returncode == 3
    assert (log / "codex-argv").read_text().splitlines() == ["hi"]


def test_without_context_codex_runs_with_the_users_arguments_only(
    setup: tuple[Locations, dict[str, str], Path], tmp_path: Path
) -> None:
    _locations, env, log = setup
    assert _run(env, tmp_path, "--version").returncode == 3
    assert (log / "codex-argv").read_text().splitlines() == ["--version"]


@pytest.mark.parametrize("switch", ["SIGNET_NO_HOOKS", "SIGNET_CODEX_BYPASS_WRAPPER"])
def test_bypass_runs_the_real_codex_untouched(
    setup: tuple[Locations, dict[str, str], Path], tmp_path: Path, switch: str
) -> None:
    _locations, env, log = setup
    assert _run({**env, switch: "1", "FAKE_CONTEXT": "x"}, tmp_path, "a b").returncode == 3
    assert (log / "codex-argv").read_text().splitlines() == ["a b"]
    assert not list(log.glob("signet-*"))


def test_no_real_codex_is_a_clear_error(home: Path, tmp_path: Path) -> None:
    env = {"HOME": str(home), "PATH": f"{home / '.config/signet/bin'}:/usr/bin:/bin"}
    apply(codex.plan_install(Locations(home, env)))
    done = _run(env, tmp_path)
    assert done.returncode == 127 and "no codex found on PATH" in done.stderr


def test_uninstall_takes_out_the_block_and_the_script_and_keeps_the_users_lines(
    home: Path,
) -> None:
    zshrc = home / ".zshrc"
    zshrc.write_text("# mine\nalias gs='git status'\n")
    locations = Locations(home, {"HOME": str(home), "PATH": "/usr/bin:/bin"})
    apply(codex.plan_install(locations))
    assert not (home / ".bashrc").exists()  # only the start-up files that exist
    assert codex_wrapper.BLOCK_START in zshrc.read_text()
    apply(codex.plan_uninstall(locations))
    assert zshrc.read_text() == "# mine\nalias gs='git status'\n"
    assert not codex_wrapper.wrapper_path(locations).exists()
    assert len(backups(home)) == 1  # one backup of .zshrc, not one per run
    assert codex.plan_uninstall(locations).pending == ()


def test_a_half_removed_block_is_left_to_the_user() -> None:
    text = f"x\n{codex_wrapper.BLOCK_START}\nexport PATH=/a:$PATH\n"
    assert codex_wrapper.without_block(text) == text
