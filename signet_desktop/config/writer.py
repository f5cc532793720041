"""Change agent.yaml safely: validate first, keep a backup, replace atomically.

`update_config(paths, changes)` sets (or, with `None`, removes) values at dotted key paths of
the workspace's config file and writes the result only when the project's own loader accepts
it; otherwise `ConfigWriteError` says why and the file is left byte for byte as it was. YAML is
re-dumped through PyYAML, which drops comments, so the file as it was is first copied to
`agent.yaml.bak` (the previous backup is replaced). The write goes to a temp file in the same
directory, is flushed to disk and then `os.replace`d over the file (same mode; through a
symlink, the file it points at). The daemon reads agent.yaml only at start.
"""

from __future__ import annotations

import copy
import dataclasses
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from signet_desktop.config.atomic import replace_file
from signet_desktop.config.loader import ConfigError, LoadedConfig, load_config, parse_config_text
from signet_desktop.config.source import YamlSyntaxError, parse_yaml
from signet_desktop.config.workspace import WorkspacePaths

BACKUP_SUFFIX = ".bak"
DEFAULT_FILE_NAME = "agent.yaml"

Changes = Mapping[str, object]  # "auth.mode" -> "team"; None removes the key


class ConfigWriteError(Exception):
    """Nothing was written; `str()` says why, in words for the person who asked."""


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What happened: the file, whether it changed, its backup, and the config now in it."""

    path: Path
    changed: bool
    backup: Path | None
    loaded: LoadedConfig


def config_path(paths: WorkspacePaths) -> Path:
    """The file a write goes to: the existing config file, else `<root>/agent.yaml`."""
    return paths.config_file() or paths.root / DEFAULT_FILE_NAME


def read_data(paths: WorkspacePaths) -> dict[str, Any]:
    """The config file's data as a plain mapping ({} when there is no file or it is empty)."""
    file = paths.config_file()
    if file is None:
        return {}
    data = parse_yaml(_read(file)).data
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ConfigWriteError(f"{file}: the top level is not a mapping; fix it by hand first")
    return dict(data)


def update_config(paths: WorkspacePaths, changes: Changes) -> WriteResult:
    """Apply `changes` (dotted key -> value, None removes) and write if the result loads."""
    try:
        load_config(paths)  # a file that does not load now is the user's to fix first
        data = read_data(paths)
    except (ConfigError, YamlSyntaxError) as exc:
        raise ConfigWriteError(f"agent.yaml does not load; fix it first: {exc}") from None
    updated = apply_changes(data, changes)
    file = config_path(paths)
    if updated == data and paths.config_file() is not None:
        return WriteResult(file, False, None, load_config(paths))
    text = yaml.safe_dump(updated, sort_keys=False, allow_unicode=True, width=100)
    return write_config_text(paths, text)


def apply_changes(data: Mapping[str, Any], changes: Changes) -> dict[str, Any]:
    """A deep copy of `data` with each dotted key set (None: removed, empty parents too)."""
    result: dict[str, Any] = copy.deepcopy(dict(data))
    for dotted, value in changes.items():
        keys = [key for key in dotted.split(".") if key]
        if not keys:
            raise ConfigWriteError(f"{dotted!r} is not a key path")
        if value is None:
            _remove(result, keys)
        else:
            _parent(result, keys, dotted)[keys[-1]] = copy.deepcopy(value)
    return result


def write_config_text(paths: WorkspacePaths, text: str) -> WriteResult:
    """Write `text` as the config file if the loader accepts it (backup first, atomic)."""
    file = config_path(paths)
    try:
        loaded = parse_config_text(text, str(file))
    except ConfigError as exc:
        raise ConfigWriteError(f"not saved, the result would not load: {exc}") from None
    backup = None
    if file.exists():
        backup = file.with_name(file.name + BACKUP_SUFFIX)
        try:
            shutil.copy2(file.resolve(), backup)
        except OSError as exc:
            raise ConfigWriteError(f"not saved: cannot back up {file} to {backup}: {exc}") from None
    write_atomic(file, text)
    return WriteResult(file, True, backup, dataclasses.replace(loaded, path=file))


def write_atomic(file: Path, text: str) -> None:
    """Replace `file` atomically, keeping its mode; through a symlink, edit what it points at.
    Raises ConfigWriteError (the file is then untouched)."""
    real = file.resolve() if file.is_symlink() else file
    try:
        replace_file(real, text)
    except OSError as exc:
        raise ConfigWriteError(f"not saved: cannot write {file}: {exc}") from None


def _parent(data: dict[str, Any], keys: list[str], dotted: str) -> dict[str, Any]:
    node = data
    for index, key in enumerate(keys[:-1]):
        child = node.get(key)
        if child is None:
            child = node[key] = {}
        if not isinstance(child, dict):
            where = ".".join(keys[: index + 1])
            raise ConfigWriteError(f"cannot set {dotted}: {where} is not a mapping in agent.yaml")
        node = child
    return node


def _remove(data: dict[str, Any], keys: list[str]) -> None:
    trail: list[tuple[dict[str, Any], str]] = []
    node: Any = data
    for key in keys[:-1]:
        if not isinstance(node, dict) or not isinstance(node.get(key), dict):
            return
        trail.append((node, key))
        node = node[key]
    if isinstance(node, dict):
        node.pop(keys[-1], None)
    for parent, key in reversed(trail):  # a section left empty goes too
        if parent[key]:
            break
        del parent[key]


def _read(file: Path) -> str:
    try:
        return file.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigWriteError(f"cannot read {file}: {exc}") from None
