"""What every installer shares: planned file changes, diffs, backups and atomic writes.

An installer never writes while it decides: it reads the harness's files, builds a `Plan` of
`FileChange`s (whole new texts; JSON files edited in place by `json_edit`, so only what
changes is rewritten), and `apply` then keeps one backup per file (`<name>.signet-backup`:
the file as Signet first found it, `ledger.py`) and replaces it atomically (temp file in the
same directory, same mode, `os.replace`). `--dry-run` prints `diff(plan)` instead. A file that
does not parse raises `ConfigFileError` with its path and the parser's message; nothing is
written.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from signet_desktop.config.atomic import replace_file
from signet_desktop.domain.address import DEFAULT_HOST, DEFAULT_PORT
from signet_desktop.harness.installers.json_edit import JsoncError, loads, patched

BACKUP_SUFFIX = ".signet-backup"
DEFAULT_URL = f"http://{DEFAULT_HOST}:{DEFAULT_PORT}"  # the daemon when no --url is given
NEW_FILE_MODE = 0o600


class ConfigFileError(Exception):
    """A harness config file that cannot be read or parsed; it is left as it is."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


class ManualEditRequired(Exception):
    """The change cannot be made safely by a program; the message says what to do by hand."""


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's text before and after (None: absent / to be removed)."""

    path: Path
    before: str | None
    after: str | None
    mode: int | None = None  # for a new file (default owner-only)
    backup: bool = True  # False for files that are wholly ours (the OpenCode plugin)

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass(frozen=True, slots=True)
class Plan:
    """What one install or uninstall would do: file changes plus notes for the user."""

    harness: str
    changes: tuple[FileChange, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def pending(self) -> tuple[FileChange, ...]:
        return tuple(change for change in self.changes if change.changed)


@dataclass(frozen=True, slots=True)
class Locations:
    """Where the harnesses keep their files, from HOME and the harnesses' own variables."""

    home: Path
    env: Mapping[str, str]

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Locations:
        home = env.get("HOME", "").strip()
        return cls(Path(home) if home else Path.home(), env)

    def _dir(self, name: str, default: Path) -> Path:
        value = self.env.get(name, "").strip()
        return Path(value).expanduser() if value else default

    @property
    def claude_dir(self) -> Path:
        """CLAUDE_CONFIG_DIR or ~/.claude."""
        return self._dir("CLAUDE_CONFIG_DIR", self.home / ".claude")

    @property
    def claude_json(self) -> Path:
        """`~/.claude.json`, or `.claude.json` inside CLAUDE_CONFIG_DIR when it is set."""
        if self.env.get("CLAUDE_CONFIG_DIR", "").strip():
            return self.claude_dir / ".claude.json"
        return self.home / ".claude.json"

    @property
    def codex_dir(self) -> Path:
        """CODEX_HOME or ~/.codex."""
        return self._dir("CODEX_HOME", self.home / ".codex")

    @property
    def config_home(self) -> Path:
        """XDG_CONFIG_HOME or ~/.config."""
        return self._dir("XDG_CONFIG_HOME", self.home / ".config")

    def executable(self, name: str) -> str:
        """An absolute path to this installation's `name`, so the harness finds it from its own
        PATH: the script beside this interpreter (a virtualenv, `uv run`'s environment or a
        pipx venv, none of which the user's shell need hold), else the one on PATH; the bare
        name only when neither exists (`install --status` then says it does not start)."""
        beside = Path(sys.executable).with_name(name)
        if beside.is_file():
            return str(beside)
        found = shutil.which(name, path=self.env.get("PATH"))
        return os.path.abspath(found) if found else name


def commands_note(command: str) -> str:
    """Where the written commands point, so a person knows what moving it would break."""
    if not os.path.isabs(command):
        return f"`{command}` was not found as a file: `signet install --status` will say so"
    folder = os.path.dirname(command)
    return f"commands run from {folder} (install again if that environment moves)"


def read_text(path: Path) -> str | None:
    """The file's text, None when it does not exist."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigFileError(path, f"cannot read it ({exc})") from None


def load_json_object(path: Path, text: str | None) -> dict[str, Any]:
    """A JSON object from the file's text ({} for a missing or empty file)."""
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        message = f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        raise ConfigFileError(path, message + "; fix or move it, nothing was changed") from None
    if not isinstance(value, dict):
        raise ConfigFileError(path, "holds JSON that is not an object; nothing was changed")
    return value


def dump_json(value: Mapping[str, Any], like: str | None) -> str:
    """JSON text in the file's own indentation (2 spaces when new), with a final newline."""
    indent: int | str = 2
    if like:
        for line in like.splitlines()[1:]:
            stripped = line.lstrip(" \t")
            if stripped and len(stripped) < len(line):
                lead = line[: len(line) - len(stripped)]
                indent = "\t" if lead.startswith("\t") else len(lead)
                break
    return json.dumps(value, indent=indent, ensure_ascii=False) + "\n"


def json_change(path: Path, before: str | None, value: Mapping[str, Any]) -> FileChange:
    """The change that leaves `value` in `path`: an existing file is edited in place (only the
    spans that differ are rewritten, so the user's layout and comments stay byte for byte);
    a new or empty one is written whole. No change when the content is the same."""
    if before is not None and _same_json(before, value):
        return FileChange(path, before, before)
    if before is not None and before.strip():
        try:
            return FileChange(path, before, patched(before, dict(value)))
        except JsoncError:
            pass  # unreadable as JSON(C): callers parse first, so this is not reached
    return FileChange(path, before, dump_json(value, before))


def _same_json(text: str, value: Mapping[str, Any]) -> bool:
    try:
        return bool(loads(text) == value) if text.strip() else not value
    except JsoncError:
        return False


def diff(plan: Plan) -> str:
    """A unified diff of every pending change (empty when nothing would change)."""
    chunks = []
    for change in plan.pending:
        before = (change.before or "").splitlines(keepends=True)
        after = (change.after or "").splitlines(keepends=True)
        old = str(change.path) if change.before is not None else "/dev/null"
        new = str(change.path) if change.after is not None else "/dev/null"
        lines = difflib.unified_diff(before, after, fromfile=old, tofile=new)
        chunks.append("".join(line if line.endswith("\n") else line + "\n" for line in lines))
    return "".join(chunks)


def backup_path(path: Path) -> Path:
    """`settings.json.signet-backup`: the one backup of a file."""
    return path.with_name(path.name + BACKUP_SUFFIX)


class WriteLog(Protocol):
    """What `apply` tells about the user files it writes (`ledger.InstallLedger`)."""

    def knows(self, path: Path) -> bool: ...

    def untouched(self, change: FileChange) -> bool: ...

    def wrote(self, change: FileChange) -> None: ...

    def forget(self, path: Path) -> None: ...

    def save(self) -> None: ...


def apply(plan: Plan, log: WriteLog | None = None, *, uninstall: bool = False) -> list[Path]:
    """Back up and write every pending change; returns the backups made.

    A file gets one backup: made the first time Signet changes it (an install with no
    `log` entry for it starts afresh and refreshes it), never one per run, and none for an
    uninstall that gives back what Signet found. With a `log`, an install records what it
    wrote and an uninstall forgets the file, dropping the backup once the file holds exactly
    its bytes again."""
    backups = []
    for change in plan.pending:
        target = change.path.resolve() if change.path.is_symlink() else change.path
        backup = backup_path(change.path)
        if change.backup and change.before is not None and target.exists():
            if log is None:
                wanted = not backup.exists()
            elif uninstall:
                wanted = not log.untouched(change) and not backup.exists()
            else:
                wanted = not log.knows(change.path) or not backup.exists()
            if wanted:
                shutil.copy2(target, backup)
                backups.append(backup)
        if change.after is None:
            target.unlink(missing_ok=True)
        else:
            write_atomic(target, change.after, change.mode)
        if log is None or not change.backup:
            continue
        if uninstall:
            log.forget(change.path)
            if change.after is not None and read_text(backup) == change.after:
                backup.unlink()
        else:
            log.wrote(change)
    if log is not None:
        log.save()
    return backups


def write_atomic(path: Path, text: str, mode: int | None = None) -> None:
    """Replace `path` with `text` in one rename; keeps the old file's mode."""
    replace_file(path, text, NEW_FILE_MODE if mode is None else mode)
