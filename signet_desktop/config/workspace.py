"""Where the workspace lives and what is inside it.

Resolution: `--workspace` > `SIGNET_WORKSPACE` > `SIGNET_PATH` (Signet's name) > `~/.agents`.
Layout: `agent.yaml`, `MEMORY.md`, `memory/memories.db`, `memory/{harness}/transcripts/`,
`.daemon/` (pid, logs).
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

DEFAULT_WORKSPACE = "~/.agents"
WORKSPACE_ENV_VARS = ("SIGNET_WORKSPACE", "SIGNET_PATH")
# Signet reads the first of these that exists.
CONFIG_FILE_NAMES = ("agent.yaml", "AGENT.yaml", "config.yaml")

_HARNESS_MAX_LEN = 64
_UNSAFE_RUN = re.compile(r"[^a-z0-9._-]+")
_SEPARATOR_RUN = re.compile(r"[-_\s]+")


def _absolute(value: str | Path) -> Path:
    return Path(os.path.abspath(os.path.expanduser(os.fspath(value))))


def resolve_workspace(
    cli_value: str | Path | None = None, env: Mapping[str, str] | None = None
) -> Path:
    """The workspace root: CLI flag, then SIGNET_WORKSPACE, then SIGNET_PATH, then ~/.agents.

    Blank values are skipped. `~` is expanded and the result made absolute (not resolved
    through symlinks, so a symlinked workspace keeps the path the user gave).
    """
    if cli_value is not None and str(cli_value).strip():
        return _absolute(cli_value)
    environ = os.environ if env is None else env
    for name in WORKSPACE_ENV_VARS:
        value = environ.get(name, "")
        if value.strip():
            return _absolute(value.strip())
    return _absolute(DEFAULT_WORKSPACE)


def harness_slug(harness: str) -> str:
    """A harness name as a safe lowercase directory name (`Claude Code` -> `claude-code`).

    Raises ValueError for names that could leave the memory directory (`..`, `/`, `\\`, NUL)
    or that are empty once cleaned.
    """
    if any(sep in harness for sep in ("/", "\\", "\x00")) or ".." in harness:
        raise ValueError(f"harness name {harness!r} contains a path separator or '..'")
    ascii_name = unicodedata.normalize("NFKD", harness).encode("ascii", "ignore").decode()
    slug = _SEPARATOR_RUN.sub("-", ascii_name.strip().lower())
    slug = _UNSAFE_RUN.sub("-", slug).strip("-.")
    if not slug:
        raise ValueError(f"harness name {harness!r} has no usable characters")
    return slug[:_HARNESS_MAX_LEN].rstrip("-.")


@dataclass(frozen=True, slots=True)
class WorkspacePaths:
    """Every well-known path in one workspace. Building it touches nothing on disk."""

    root: Path
    agent_yaml: Path
    memory_dir: Path
    db_path: Path
    daemon_dir: Path
    pid_file: Path
    logs_dir: Path
    memory_md: Path

    @classmethod
    def for_root(cls, root: Path) -> WorkspacePaths:
        """The layout under `root` (made absolute); `agent_yaml` is the config file in use."""
        root = _absolute(root)
        memory_dir = root / "memory"
        daemon_dir = root / ".daemon"
        return cls(
            root=root,
            agent_yaml=find_config_file(root) or root / CONFIG_FILE_NAMES[0],
            memory_dir=memory_dir,
            db_path=memory_dir / "memories.db",
            daemon_dir=daemon_dir,
            pid_file=daemon_dir / "pid",
            logs_dir=daemon_dir / "logs",
            memory_md=root / "MEMORY.md",
        )

    def config_file(self) -> Path | None:
        """The config file that exists right now (first of agent.yaml/AGENT.yaml/config.yaml)."""
        return find_config_file(self.root)

    def transcripts_dir(self, harness: str) -> Path:
        """`memory/{harness}/transcripts/` for a harness name (normalised; traversal refused)."""
        return self.memory_dir / harness_slug(harness) / "transcripts"

    def ensure(self) -> None:
        """Create the root, memory/, .daemon/ and .daemon/logs/ (never a config file).

        memory/ and .daemon/ are created 0700; the database file itself is created 0600 by
        `storage/connect.py: create_private_file`.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        # memory/ holds the database and transcripts, .daemon the pid, logs and (later) the
        # auth secret: owner-only. Existing directories keep the mode their owner gave them.
        self.memory_dir.mkdir(mode=0o700, exist_ok=True)
        self.daemon_dir.mkdir(mode=0o700, exist_ok=True)
        self.logs_dir.mkdir(mode=0o700, exist_ok=True)


def find_config_file(root: Path) -> Path | None:
    """The first of agent.yaml / AGENT.yaml / config.yaml that is a file under `root`."""
    for name in CONFIG_FILE_NAMES:
        candidate = root / name
        if candidate.is_file():
            return candidate
    return None
