"""What the installers changed, so an uninstall can give the user's files back as they were.

`$XDG_CONFIG_HOME/signet/installs.json` holds, per file an installer changed, the sha256 of
the bytes it wrote and whether the file existed before; the file as Signet first found it is
its one backup, `<name>.signet-backup`, made the first time Signet changes it and kept until
an uninstall has given those bytes back. An uninstall of a file nobody touched since (its
bytes still hash to what was written) restores the backup byte for byte — or removes the file
when Signet created it; a file changed since (a harness rewrote it, the user edited it) has
only Signet's entries taken out, in place, and its backup is kept.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

from signet_desktop.harness.installers.files import (
    FileChange,
    Locations,
    Plan,
    backup_path,
    read_text,
    write_atomic,
)

LEDGER_VERSION = 1


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclasses.dataclass(frozen=True, slots=True)
class Entry:
    """One changed file: the hash of what Signet wrote last (None: it removed the file),
    whether the file existed before Signet first changed it, and whether every write since
    landed on Signet's own previous bytes (else its backup is no longer the file minus
    Signet's entries, and an uninstall takes them out in place instead)."""

    written: str | None
    existed: bool
    exact: bool = True


class InstallLedger:
    """The installs file: read once, changed per file, saved atomically."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries: dict[str, Entry] = {}
        text = read_text(path)
        if text:
            self._entries = _parse(text)

    @classmethod
    def of(cls, locations: Locations) -> InstallLedger:
        return cls(locations.config_home / "signet" / "installs.json")

    def entry(self, path: Path) -> Entry | None:
        return self._entries.get(str(path))

    def knows(self, path: Path) -> bool:
        return str(path) in self._entries

    def untouched(self, change: FileChange) -> bool:
        """Does the file still hold exactly what Signet wrote, every write onto its own?"""
        entry = self.entry(change.path)
        return (
            entry is not None
            and entry.exact
            and change.before is not None
            and entry.written == digest(change.before)
        )

    def restoring(self, plan: Plan) -> Plan:
        """An uninstall plan that gives back the bytes Signet found in every file unchanged
        since it wrote them (removes the ones it created); the rest as planned, with a note."""
        changes, notes = [], []
        for change in plan.changes:
            restored = self._restored(change)
            changes.append(restored)
            if restored is not change:
                notes.append(f"{change.path}: given back as it was before install")
            elif change.changed and change.backup and self.entry(change.path) is not None:
                notes.append(
                    f"{change.path} changed since install: Signet's entries taken out in "
                    f"place; the file as first found is kept at {backup_path(change.path).name}"
                )
        return dataclasses.replace(plan, changes=tuple(changes), notes=(*plan.notes, *notes))

    def _restored(self, change: FileChange) -> FileChange:
        """The change giving back the file's bytes before install, when nothing touched it
        since Signet wrote it (else `change` itself)."""
        entry = self.entry(change.path)
        if entry is None or not change.backup or not self.untouched(change):
            return change
        if not entry.existed:
            return dataclasses.replace(change, after=None)
        original = read_text(backup_path(change.path))
        return change if original is None else dataclasses.replace(change, after=original)

    def wrote(self, change: FileChange) -> None:
        """Note a user file Signet just wrote (the first time: whether it existed)."""
        entry = self.entry(change.path)
        written = None if change.after is None else digest(change.after)
        if entry is None:
            self._entries[str(change.path)] = Entry(written, change.before is not None)
            return
        before = None if change.before is None else digest(change.before)
        exact = entry.exact and before == entry.written
        self._entries[str(change.path)] = Entry(written, entry.existed, exact)

    def forget(self, path: Path) -> None:
        self._entries.pop(str(path), None)

    def save(self) -> None:
        if not self._entries and read_text(self.path) is None:
            return
        files = {
            name: {"written": entry.written, "existed": entry.existed, "exact": entry.exact}
            for name, entry in sorted(self._entries.items())
        }
        body = {"version": LEDGER_VERSION, "files": files}
        write_atomic(self.path, json.dumps(body, indent=2) + "\n")


def _parse(text: str) -> dict[str, Entry]:
    """The entries of an installs file; an unreadable one counts as empty (nothing is
    restored from it, every change is still made in place)."""
    try:
        value: Any = json.loads(text)
    except ValueError:
        return {}
    files = value.get("files") if isinstance(value, dict) else None
    if not isinstance(files, dict):
        return {}
    entries = {}
    for name, raw in files.items():
        if isinstance(raw, dict) and isinstance(raw.get("existed"), bool):
            written = raw.get("written")
            exact = raw.get("exact") is not False
            entries[str(name)] = Entry(
                written if isinstance(written, str) else None, raw["existed"], exact
            )
    return entries
