"""The secret store on disk: one owner-only file per secret under the workspace's `.secrets/`.

`<secrets dir>/NAME` is the `default` agent's secret NAME: the file `$secret:NAME` in
agent.yaml resolves to (inference/secrets.py), and where a hand-written key already lives.
Another agent's secrets are under `<secrets dir>/.agents/<agent id>/NAME`, a dot-directory no
secret name can collide with. Directories are made (and kept) 0700, files 0600; a value is
written to a temp file, fsynced and renamed into place, so a reader never sees half of one.
Nothing here reads a value back: names are listed, and only the resolver opens a file.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from pathlib import Path

from signet_desktop.config.atomic import fsync_dir
from signet_desktop.domain.memory import DEFAULT_AGENT_ID

NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")  # Signet's rule, bounded
AGENTS_DIR = ".agents"
DIR_MODE = 0o700
FILE_MODE = 0o600


class SecretStore:
    """Secrets of every agent under one directory (the caller checks names and agents)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def directory(self, agent_id: str) -> Path:
        """Where the agent's secrets live."""
        if agent_id == DEFAULT_AGENT_ID:
            return self.root
        if "/" in agent_id or agent_id.startswith(".") or not agent_id:
            raise ValueError(f"not a checked agent id: {agent_id!r}")
        return self.root / AGENTS_DIR / agent_id

    def names(self, agent_id: str) -> list[str]:
        """The agent's secret names, sorted (files only; temp and other entries skipped)."""
        directory = self.directory(agent_id)
        try:
            entries = list(os.scandir(directory))
        except FileNotFoundError:
            return []
        return sorted(
            entry.name
            for entry in entries
            if NAME_PATTERN.match(entry.name) and entry.is_file(follow_symlinks=True)
        )

    def has(self, agent_id: str, name: str) -> bool:
        return self._path(agent_id, name).is_file()

    def put(self, agent_id: str, name: str, value: str) -> bool:
        """Store `value` as the agent's secret `name` (0600); True when it is new."""
        target = self._path(agent_id, name)
        directory = self._ensure_directory(agent_id)
        fd, temp = tempfile.mkstemp(prefix=".tmp-", dir=directory)  # 0600, never followed
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(value)
                handle.flush()
                os.fsync(handle.fileno())
            created = not target.exists()
            os.replace(temp, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
            raise
        fsync_dir(directory)
        return created

    def delete(self, agent_id: str, name: str) -> bool:
        """Remove the agent's secret `name`; False when there was none."""
        try:
            os.unlink(self._path(agent_id, name))
        except FileNotFoundError:
            return False
        fsync_dir(self.directory(agent_id))
        return True

    def _path(self, agent_id: str, name: str) -> Path:
        if not NAME_PATTERN.match(name):
            raise ValueError("not a valid secret name")
        return self.directory(agent_id) / name

    def _ensure_directory(self, agent_id: str) -> Path:
        directory = self.directory(agent_id)
        for path in _chain(self.root, directory):
            path.mkdir(mode=DIR_MODE, exist_ok=True)
            if stat.S_IMODE(path.stat().st_mode) & 0o077:
                os.chmod(path, DIR_MODE)  # owner-only, even when someone widened it
        return directory


def _chain(root: Path, directory: Path) -> list[Path]:
    """`root` and every directory from it down to `directory`."""
    chain = [root]
    for part in directory.relative_to(root).parts:
        chain.append(chain[-1] / part)
    return chain
