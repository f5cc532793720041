"""`signet dream setup`: discovery, consent, and the agent.yaml it writes (or refuses to).

Runs the real `signet` parser with fake harness binaries (shell scripts) on PATH and a
temporary workspace; every written file is loaded back with the project's own config loader.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from signet_desktop.cli.context import CliContext
from signet_desktop.cli.main import build_parser, run
from signet_desktop.config.loader import load_config
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.inference import harness_discovery
from signet_desktop.inference.registry import resolve_workload

PROMPT = (
    "Use Claude Code ({path}) for Dreaming? Each pass runs it headless and spends your Claude"
    " subscription or API credit. [y/N] "
)


class Terminal(io.StringIO):
    """Typed answers on a terminal: what the prompt needs before it asks."""

    def isatty(self) -> bool:
        return True


class Env:
    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.bin = tmp_path / "bin"
        self.workspace = tmp_path / "workspace"
        self.home.mkdir()
        self.bin.mkdir()
        self.path = str(self.bin)

    @property
    def yaml(self) -> Path:
        return self.workspace / "agent.yaml"

    def harness(self, name: str, version: str, folder: Path | None = None) -> Path:
        folder = folder or self.bin
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        path.write_text(f'#!/bin/sh\necho "{version}"\n')
        path.chmod(0o755)
        return path

    def claude(self) -> Path:
        return self.harness("claude", "2.0.14 (Claude Code)")

    def config_file(self, text: str) -> Path:
        self.workspace.mkdir(exist_ok=True)
        self.yaml.write_text(text)
        return self.yaml

    def signet(self, *argv: str, stdin: io.StringIO | None = None) -> tuple[int, str, str]:
        env = {
            "HOME": str(self.home),
            "PATH": self.path,
            "SIGNET_WORKSPACE": str(self.workspace),
        }
        out, err = io.StringIO(), io.StringIO()
        parser = build_parser()
        args = parser.parse_args(list(argv))
        ctx = CliContext(env=env, out=out, err=err, stdin=stdin or io.StringIO(""))
        code = run(args, ctx, parser)
        return code, out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def no_system_dirs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness_discovery, "SYSTEM_DIRS", ())


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


def bound(env: Env) -> tuple[str | None, str | None, object]:
    """memoryExtraction's target, that target's executor and acpx settings, per the loader."""
    config = load_config(WorkspacePaths.for_root(env.workspace)).config.inference
    binding = config.workloads.memory_extraction
    name = binding.target if binding is not None else None
    target = config.targets.get(name or "")
    return name, (target.executor if target else None), (target.acpx if target else None)


# Listing


def test_list_shows_what_was_found_and_writes_nothing(env: Env) -> None:
    claude = env.claude()
    codex = env.harness("codex", "codex-cli 0.46.0")  # one character shorter: padded
    code, out, _ = env.signet("dream", "setup", "--list")
    assert code == 0
    assert out.splitlines() == [
        "Agent harnesses found:",
        f"  Claude Code  2.0.14 (Claude Code)  {claude}  supported",
        f"  Codex        codex-cli 0.46.0      {codex}   supported",
    ]
    assert not env.workspace.exists()


def test_a_version_that_cannot_be_read_is_listed_as_unknown(env: Env) -> None:
    claude = env.bin / "claude"
    claude.write_text("#!/bin/sh\nexit 1\n")
    claude.chmod(0o755)
    code, out, _ = env.signet("dream", "setup", "--list")
    assert code == 0 and f"Claude Code  version unknown  {claude}  supported" in out


def test_nothing_found_names_what_was_looked_for_and_how_to_install(env: Env) -> None:
    code, out, _ = env.signet("dream", "setup", "--list")
    assert code == 0
    assert "looked for claude, codex, opencode on PATH" in out
    assert str(env.home / ".local" / "bin") in out
    assert "npm install -g @anthropic-ai/claude-code" in out
    code, out, _ = env.signet("dream", "setup", "--yes")
    assert code == 1 and "npm install -g @anthropic-ai/claude-code" in out
    assert not env.workspace.exists()


# Consent


def test_yes_on_a_terminal_creates_agent_yaml_that_loads(env: Env) -> None:
    claude = env.claude()
    code, out, _ = env.signet("dream", "setup", stdin=Terminal("y\n"))
    assert code == 0
    assert PROMPT.format(path=claude) in out
    assert f"Created {env.yaml}" in out
    assert "The daemon reads agent.yaml only when it starts: restart it" in out
    assert bound(env) == ("claude-code", "acpx", {"agent": str(claude)})


@pytest.mark.parametrize("answer", ["n\n", "\n", "", "yes please\n"])
def test_anything_but_yes_on_a_terminal_writes_nothing(env: Env, answer: str) -> None:
    claude = env.claude()
    code, out, _ = env.signet("dream", "setup", stdin=Terminal(answer))
    assert code == 1
    assert PROMPT.format(path=claude) in out and out.rstrip().endswith("Not changed.")
    assert not env.workspace.exists()


def test_without_a_terminal_and_without_yes_nothing_is_written(env: Env) -> None:
    env.claude()
    before = env.config_file("search:\n  top_k: 5\n").read_bytes()
    code, out, err = env.signet("dream", "setup", "--agent", "claude", stdin=io.StringIO("y\n"))
    assert code == 2
    assert "[y/N]" not in out
    assert "no terminal to ask" in err
    assert "`signet dream setup --agent claude --yes`" in err
    assert env.yaml.read_bytes() == before
    assert sorted(p.name for p in env.workspace.iterdir()) == ["agent.yaml"]


def test_yes_flag_needs_no_terminal(env: Env) -> None:
    claude = env.claude()
    code, out, _ = env.signet("dream", "setup", "--yes")
    assert code == 0 and "[y/N]" not in out
    assert bound(env) == ("claude-code", "acpx", {"agent": str(claude)})


# Choosing the harness


def test_agent_path_picks_a_binary_off_path(env: Env, tmp_path: Path) -> None:
    env.claude()
    other = env.harness("claude", "2.1.0 (Claude Code)", tmp_path / "opt" / "claude" / "bin")
    code, _, _ = env.signet("dream", "setup", "--agent", str(other), "--yes")
    assert code == 0
    assert bound(env) == ("claude-code", "acpx", {"agent": str(other)})


def test_agent_path_found_when_nothing_is_on_path(env: Env, tmp_path: Path) -> None:
    other = env.harness("claude", "2.1.0 (Claude Code)", tmp_path / "opt")
    code, out, _ = env.signet("dream", "setup", "--agent", str(other), "--yes")
    assert code == 0 and "No agent harness found" not in out
    assert bound(env)[2] == {"agent": str(other)}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--agent", "opencode"), "opencode was not found here"),
        (("--agent", "aider"), "--agent takes claude|codex|opencode or the path"),
        (("--agent", "/nonexistent/claude"), "/nonexistent/claude is not an executable file"),
        (("--agent", "RENAMED"), "Claude Code's binary is named `claude`"),
    ],
)
def test_unusable_agent_choices_are_refused(env: Env, argv: tuple[str, ...], message: str) -> None:
    env.claude()
    env.harness("codex", "codex-cli 0.46.0")
    renamed = env.harness("claude-wrapper", "2.0.14 (Claude Code)", env.home / "opt")
    argv = tuple(str(renamed) if arg == "RENAMED" else arg for arg in argv)
    code, _, err = env.signet("dream", "setup", *argv, "--yes")
    assert code == 2 and message in err
    assert not env.workspace.exists()


def test_opencode_is_bound_under_its_own_target(env: Env) -> None:
    opencode = env.harness("opencode", "1.18.33")
    code, out, _ = env.signet("dream", "setup", "--yes")
    assert code == 0 and "inference.targets.opencode (executor acpx" in out
    assert bound(env) == ("opencode", "acpx", {"agent": str(opencode)})


def test_codex_is_bound_under_its_own_target(env: Env) -> None:
    codex = env.harness("codex", "codex-cli 0.171.0")
    code, out, _ = env.signet("dream", "setup", "--agent", "codex", "--yes")
    assert code == 0 and "inference.targets.codex (executor acpx" in out
    assert bound(env) == ("codex", "acpx", {"agent": str(codex)})


def test_signets_own_codex_wrapper_is_passed_over_for_the_real_codex(
    env: Env, tmp_path: Path
) -> None:
    wrappers = tmp_path / "signet-bin"
    wrappers.mkdir()
    wrapper = wrappers / "codex"
    wrapper.write_text("#!/bin/sh\n# Codex with Signet: installed by `signet install codex`\n")
    wrapper.chmod(0o755)
    real = env.harness("codex", "codex-cli 0.171.0")
    env.path = f"{wrappers}:{env.path}"
    code, out, _ = env.signet("dream", "setup", "--list")
    assert code == 0 and str(real) in out and str(wrapper) not in out


# Writing agent.yaml


def test_a_file_without_inference_gets_the_block_appended_keeping_comments(env: Env) -> None:
    claude = env.claude()
    original = "# my settings, keep me\nsearch:\n  top_k: 5  # five is enough\n"
    env.config_file(original)
    code, out, _ = env.signet("dream", "setup", "--yes")
    assert code == 0 and f"Added to {env.yaml}" in out
    text = env.yaml.read_text()
    assert text.startswith(original + "\n# Dreaming runs through an agent harness")
    assert not (env.workspace / "agent.yaml.bak").exists()
    assert bound(env) == ("claude-code", "acpx", {"agent": str(claude)})
    assert load_config(WorkspacePaths.for_root(env.workspace)).config.search.top_k == 5


def test_a_file_without_a_final_newline_is_appended_cleanly(env: Env) -> None:
    env.claude()
    env.config_file("search:\n  top_k: 5")
    assert env.signet("dream", "setup", "--yes")[0] == 0
    assert env.yaml.read_text().startswith("search:\n  top_k: 5\n\n# Dreaming")
    assert bound(env)[0] == "claude-code"


MERGE_BASE = """\
# comments go when merging
search:
  top_k: 5
inference:
  targets:
    local:
      executor: ollama
      models:
        "qwen3:4b": {}
  workloads:
    interactive: {target: local}
"""


def test_a_file_with_inference_is_merged_after_a_backup(env: Env) -> None:
    claude = env.claude()
    env.config_file(MERGE_BASE).chmod(0o640)
    code, out, _ = env.signet("dream", "setup", "--yes")
    assert code == 0 and f"Updated {env.yaml}" in out
    backup = env.workspace / "agent.yaml.bak"
    assert backup.read_text() == MERGE_BASE
    assert f"the previous file is {backup}" in out and "does not keep comments" in out
    assert bound(env) == ("claude-code", "acpx", {"agent": str(claude)})
    config = load_config(WorkspacePaths.for_root(env.workspace)).config
    assert config.inference.targets["local"].executor == "ollama"
    assert config.inference.workloads.interactive is not None
    assert config.inference.workloads.interactive.target == "local"
    assert config.search.top_k == 5
    assert env.yaml.stat().st_mode & 0o777 == 0o640


def test_a_binding_elsewhere_is_refused_and_the_file_left_alone(env: Env) -> None:
    env.claude()
    text = MERGE_BASE + "    memoryExtraction: {target: local}\n"
    before = env.config_file(text).read_bytes()
    code, out, err = env.signet("dream", "setup", "--yes")
    assert code == 1
    assert "inference.workloads.memoryExtraction already sends Dreaming to target 'local'" in err
    assert "--replace" in err
    assert "Updated" not in out
    assert env.yaml.read_bytes() == before
    assert not (env.workspace / "agent.yaml.bak").exists()


def test_replace_rebinds_and_says_what_was_there(env: Env) -> None:
    claude = env.claude()
    env.config_file(MERGE_BASE + "    memory_extraction: local\n")  # snake case, bare name
    code, out, _ = env.signet("dream", "setup", "--yes", "--replace")
    assert code == 0 and "Dreaming used 'local' before." in out
    assert bound(env) == ("claude-code", "acpx", {"agent": str(claude)})
    assert "memory_extraction" not in env.yaml.read_text()  # one spelling, not two
    assert (env.workspace / "agent.yaml.bak").read_text().endswith("memory_extraction: local\n")


def test_a_same_named_target_of_another_kind_is_refused(env: Env) -> None:
    env.claude()
    text = (
        "inference:\n  targets:\n    claude-code:\n      executor: anthropic\n"
        "      models: {claude-haiku-4-5: {}}\n"
    )
    before = env.config_file(text).read_bytes()
    code, _, err = env.signet("dream", "setup", "--yes")
    assert code == 1 and "inference.targets.claude-code already exists" in err
    assert env.yaml.read_bytes() == before
    assert env.signet("dream", "setup", "--yes", "--replace")[0] == 0
    assert bound(env)[1] == "acpx"


def test_a_second_run_changes_nothing(env: Env) -> None:
    env.claude()
    env.config_file(MERGE_BASE)
    assert env.signet("dream", "setup", "--yes")[0] == 0
    (env.workspace / "agent.yaml.bak").unlink()
    after_first = env.yaml.read_bytes()
    code, out, _ = env.signet("dream", "setup", "--yes")
    assert code == 0 and "nothing written" in out
    assert env.yaml.read_bytes() == after_first
    assert not (env.workspace / "agent.yaml.bak").exists()


def test_a_moved_binary_updates_our_own_target_without_replace(env: Env, tmp_path: Path) -> None:
    env.claude()
    env.config_file(MERGE_BASE)
    assert env.signet("dream", "setup", "--yes")[0] == 0
    moved = env.harness("claude", "2.1.0 (Claude Code)", tmp_path / "elsewhere")
    code, _, _ = env.signet("dream", "setup", "--agent", str(moved), "--yes")
    assert code == 0 and bound(env)[2] == {"agent": str(moved)}


def test_a_config_that_does_not_load_is_left_alone(env: Env) -> None:
    env.claude()
    before = env.config_file("search:\n  top_k: [unclosed\n").read_bytes()
    code, _, err = env.signet("dream", "setup", "--yes")
    assert code == 1 and "fix it first" in err and "invalid YAML" in err
    assert env.yaml.read_bytes() == before


def test_a_symlinked_config_is_edited_where_it_points(env: Env, tmp_path: Path) -> None:
    env.claude()
    real = tmp_path / "dotfiles" / "agent.yaml"
    real.parent.mkdir()
    real.write_text("search:\n  top_k: 5\n")
    env.workspace.mkdir()
    env.yaml.symlink_to(real)
    assert env.signet("dream", "setup", "--yes")[0] == 0
    assert env.yaml.is_symlink() and "executor: acpx" in real.read_text()


def test_the_registry_resolves_memory_extraction_to_the_acpx_target(env: Env) -> None:
    env.claude()
    env.config_file(MERGE_BASE)
    assert env.signet("dream", "setup", "--yes")[0] == 0
    config = load_config(WorkspacePaths.for_root(env.workspace)).config
    resolved = resolve_workload(config.inference, "memory_extraction", env={})
    assert (resolved.target, resolved.wire) == ("claude-code", "acpx")
    assert resolved.harness is not None and resolved.harness.kind == "claude"
