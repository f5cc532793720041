"""The real OpenCode for end-to-end tests, run offline against a scripted model.

OpenCode is pointed at a scripted OpenAI Chat Completions API on loopback through a custom
provider on `@ai-sdk/openai-compatible` (bundled with OpenCode) in the user's own
opencode.json, which `signet install opencode` must keep. The binary is the pinned npm
package (`.ci/run` exports SIGNET_TEST_OPENCODE_BIN); it runs from the user's plain PATH with
`--print-logs`, so every error OpenCode logs (a plugin or MCP server failing) is visible.

OpenCode installs its plugin SDK (`@opencode-ai/plugin`, same version) from npm into a config
folder at start-up whenever that folder has a plugin — any plugin, ours needs nothing from it
— and offline that install blocks each run for over a minute before failing with a warning.
A user's OpenCode does it once, online; here the SDK comes from a copy `.ci/run` installed
(SIGNET_TEST_OPENCODE_PLUGIN_SDK), so every run stays on loopback.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.npm_harness import NpmBinary, Run, base_env, run

OPENCODE_VERSION = "1.18.33"  # keep in step with .ci/run
OPENCODE = NpmBinary(
    "opencode-ai", OPENCODE_VERSION, "opencode", "SIGNET_TEST_OPENCODE_BIN", "opencode"
)
PROVIDER, MODEL = "scripted", "scripted-model"
PLUGIN_SDK = "@opencode-ai/plugin"
PLUGIN_SDK_ENV = "SIGNET_TEST_OPENCODE_PLUGIN_SDK"
OFFLINE_ENV = {
    "OPENCODE_DISABLE_MODELS_FETCH": "1",  # no models.dev catalogue download
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
}


def user_config(model_url: str) -> dict[str, Any]:
    """The user's own opencode.json: their provider (our scripted server) and model."""
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "Scripted model on loopback",
        "options": {"baseURL": model_url, "apiKey": "sk-test-dummy"},
        "models": {MODEL: {"name": "Scripted model"}},
    }
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {PROVIDER: provider},
        "model": f"{PROVIDER}/{MODEL}",
    }


def plugin_sdk() -> Path:
    """The folder holding the pinned plugin SDK's package.json, lock and node_modules."""
    name = f"opencode-plugin-{OPENCODE_VERSION}"
    folder = Path(
        os.environ.get(PLUGIN_SDK_ENV, "").strip()
        or Path.home() / ".cache" / "signet-desktop" / name
    )
    if (folder / "node_modules" / PLUGIN_SDK / "package.json").is_file():
        return folder
    hint = (
        f"OpenCode's plugin SDK is not installed at {folder}; install it with `npm install"
        f" --prefix ~/.cache/signet-desktop/{name} --save-exact {PLUGIN_SDK}@{OPENCODE_VERSION}`"
        f" (or set {PLUGIN_SDK_ENV}; .ci/run does both)"
    )
    if os.environ.get("CI"):
        pytest.fail(hint)
    pytest.skip(hint)


def seed_plugin_sdk(config_dir: Path) -> None:
    """Put the plugin SDK where OpenCode's first online start would have installed it."""
    source = plugin_sdk()
    config_dir.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy2(source / name, config_dir / name)
    shutil.copytree(source / "node_modules", config_dir / "node_modules", symlinks=True)


@dataclass(frozen=True)
class OpenCode:
    """`opencode` in a temp HOME, from the user's plain PATH."""

    binary: str
    home: Path

    def env(self) -> dict[str, str]:
        return base_env(self.home, **OFFLINE_ENV)

    def run(self, cwd: Path, *args: str) -> Run:
        return run([self.binary, *args, "--print-logs"], cwd, self.env())

    def prompt(self, cwd: Path, text: str) -> Run:
        """`opencode run TEXT`: one non-interactive session, then exit."""
        return self.run(cwd, "run", text)


def mcp_rows(text: str) -> dict[str, str]:
    """`opencode mcp list`'s server lines by name: `●  ✓ signet connected` → {"signet": ...}."""
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    rows = {}
    for line in plain.splitlines():
        found = re.match(r"^\W*([✓✗])\s+(\S+)\s+(.*)$", line)
        if found:
            rows[found.group(2)] = f"{found.group(1)} {found.group(3).strip()}"
    return rows


def error_lines(text: str) -> list[str]:
    """Lines where OpenCode logs an error or warning, or where anything of ours complains."""
    words = ("level=error", "level=warn", "[signet]", "failed")
    return [line for line in text.splitlines() if any(word in line.lower() for word in words)]
