"""The real Codex CLI for end-to-end tests, run offline against a scripted model.

Codex is pointed at a scripted OpenAI Responses API on loopback through a custom
`model_providers` entry in its config.toml (the user's own config, which `signet install
codex` must keep). It runs as a user's shell would run it: `bash` reads `~/.bashrc`, where the
installer's PATH block puts the `codex` wrapper first, and the real binary (the pinned npm
package, `.ci/run` exports SIGNET_TEST_CODEX_BIN) is further down PATH.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.npm_harness import USER_PATH, NpmBinary, Run, base_env, run

CODEX_VERSION = "0.171.0"  # keep in step with .ci/run
CODEX = NpmBinary("@openai/codex", CODEX_VERSION, "codex", "SIGNET_TEST_CODEX_BIN", "codex")
MODEL = "scripted-model"
API_KEY_ENV = "SCRIPTED_MODEL_API_KEY"


def user_config(model_url: str) -> str:
    """The user's own config.toml: their provider (our scripted server), a comment, and
    analytics off. Codex 0.171.0 still looks up api.github.com and chatgpt.com at start; it
    connects to neither when they do not resolve (as here and in CI)."""
    return (
        "# my Codex settings\n"
        f'model = "{MODEL}"\n'
        'model_provider = "scripted"\n'
        "\n"
        "[model_providers.scripted]\n"
        'name = "Scripted model on loopback"\n'
        f'base_url = "{model_url}"\n'
        'wire_api = "responses"\n'
        f'env_key = "{API_KEY_ENV}"\n'
        "\n"
        "[analytics]\n"
        "enabled = false\n"
        "\n"
        "[feedback]\n"
        "enabled = false\n"
    )


@dataclass(frozen=True)
class Codex:
    """`codex` in a temp HOME, from a login-less bash that reads the user's ~/.bashrc."""

    binary: str
    home: Path

    def env(self) -> dict[str, str]:
        bin_dir = str(Path(self.binary).parent)  # node_modules/.bin: `codex` (and node's)
        return base_env(self.home, f"{bin_dir}:{USER_PATH}", **{API_KEY_ENV: "sk-test-dummy"})

    def shell(self, cwd: Path, *args: str) -> Run:
        """`codex ARGS` as typed in the user's shell (so the wrapper runs when installed)."""
        line = "codex " + " ".join(shlex.quote(arg) for arg in args)
        script = f'. "$HOME/.bashrc"; {line}'
        return run(["bash", "-c", script], cwd, self.env())

    def exec(self, cwd: Path, prompt: str, *options: str) -> Run:
        """`codex exec [OPTIONS] PROMPT`: one non-interactive session, then exit."""
        return self.shell(cwd, "exec", "--skip-git-repo-check", *options, prompt)


def error_lines(text: str) -> list[str]:
    """Lines where Codex or our wrapper reports something failing."""
    words = ("[signet]", "error", "failed")
    return [
        line
        for line in text.splitlines()
        if line.lower().startswith("signet:") or any(word in line.lower() for word in words)
    ]
