"""A folder source's scan: which Markdown/text files exist, and what changed since the cursor.

Read-only by construction: files are opened `rb` and only stat'ed, read and hashed. The walk
is bounded: symlinked directories are never entered (a symlink loop cannot recurse), a
directory reached twice by (device, inode) is skipped, depth and file count are capped, and
a symlinked file is read only when it resolves inside the root, and credential stores
(`safety/local_files.py`: `.ssh`, `.aws`, `.env*`...) are never entered or read: they are
counted as skipped (`credential_store`). Change detection is by
content hash; the (size, mtime) pair recorded beside it lets a rescan skip reading files
that did not change, so a rescan of 1,000 files reads only the one that did.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from signet_desktop.domain.errors import SignetError
from signet_desktop.safety import local_files
from signet_desktop.safety.local_files import is_credential_store

DEFAULT_GLOBS = ("**/*.md", "**/*.markdown", "**/*.txt")
DEFAULT_EXCLUDES = (".git/**", "node_modules/**", ".obsidian/**", ".trash/**")
MAX_DEPTH = 64
MAX_FILES = 100_000
MAX_PATTERNS = 32
MAX_PATTERN_CHARS = 200
_REFUSALS = {"path_not_allowed": "outside_root", "path_credential_store": "credential_store"}


@dataclass(frozen=True, slots=True)
class FileState:
    """What the cursor remembers of one file (`document_id` once it was submitted)."""

    size: int
    mtime_ns: int
    sha256: str
    document_id: str | None = None
    shared: bool = False  # the document belongs to someone else (deduplicated): never delete


@dataclass(frozen=True, slots=True)
class ScanRules:
    """Which files count: relative POSIX paths matching a glob and no exclude."""

    globs: tuple[str, ...] = DEFAULT_GLOBS
    excludes: tuple[str, ...] = DEFAULT_EXCLUDES
    max_bytes: int = 10 * 1024 * 1024
    max_files: int = MAX_FILES
    # Set: files are opened through safety/local_files.py and must really lie in these roots
    # (a file swapped for a link out of them between the walk and the read is not read).
    roots: tuple[Path, ...] | None = None

    def wants(self, relative: str) -> bool:
        return any(_match(relative, g) for g in self.globs) and not self.excluded(relative)

    def excluded(self, relative: str) -> bool:
        return any(_match(relative, pattern) for pattern in self.excludes)


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file the scan left out, and why (too_large, binary, unreadable, outside_root,
    credential_store)."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class ScanResult:
    """A scan against the cursor: files to submit, to drop, unchanged; the new states."""

    added: tuple[str, ...]
    changed: tuple[str, ...]
    removed: tuple[str, ...]
    unchanged: int
    states: Mapping[str, FileState]
    skipped: tuple[Skipped, ...] = ()
    truncated: bool = False  # stopped at max_files
    read_files: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)


def check_patterns(patterns: Sequence[str], name: str) -> tuple[str, ...]:
    """Validated glob patterns (relative, bounded); ValueError naming `name` otherwise."""
    if len(patterns) > MAX_PATTERNS:
        raise ValueError(f"at most {MAX_PATTERNS} {name} patterns")
    out = []
    for pattern in patterns:
        text = pattern.strip()
        if not text or len(text) > MAX_PATTERN_CHARS or "\x00" in text:
            raise ValueError(f"{name} pattern {pattern!r} is empty or too long")
        if text.startswith("/") or ".." in PurePosixPath(text).parts:
            raise ValueError(f"{name} pattern {pattern!r} must be relative to the folder")
        out.append(text)
    return tuple(out)


def _match(relative: str, pattern: str) -> bool:
    """Glob match where `**/` also matches no directory (`**/*.md` matches `a.md`) and
    `dir/**` matches the directory and everything under it, at the pattern's place."""
    if pattern.endswith("/**"):
        parts = relative.split("/")
        ancestors = ["/".join(parts[: n + 1]) for n in range(len(parts))]
        return any(_match(ancestor, pattern[:-3]) for ancestor in ancestors)
    if fnmatch.fnmatchcase(relative, pattern):
        return True
    return pattern.startswith("**/") and fnmatch.fnmatchcase(relative, pattern[3:])


def walk(
    root: Path, rules: ScanRules, refused: list[Skipped] | None = None
) -> Iterator[tuple[str, os.stat_result]]:
    """(relative POSIX path, stat) of every wanted regular file under `root`, bounded;
    credential stores met on the way are added to `refused`, never entered or yielded."""
    refused = [] if refused is None else refused
    seen: set[tuple[int, int]] = set()
    stack: list[tuple[Path, str, int]] = [(root, "", 0)]
    resolved_root = root.resolve()
    count = 0
    while stack:
        directory, prefix, depth = stack.pop()
        try:
            info = directory.stat()
            if (info.st_dev, info.st_ino) in seen:
                continue
            seen.add((info.st_dev, info.st_ino))
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            relative = f"{prefix}{entry.name}"
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth >= MAX_DEPTH or rules.excluded(relative):
                        continue
                    if is_credential_store(PurePosixPath(relative)):
                        refused.append(Skipped(f"{relative}/", "credential_store"))
                        continue
                    stack.append((Path(entry.path), f"{relative}/", depth + 1))
                    continue
                if not rules.wants(relative):
                    continue
                if is_credential_store(PurePosixPath(relative)):
                    refused.append(Skipped(relative, "credential_store"))
                    continue
                if entry.is_symlink() and not _inside(Path(entry.path), resolved_root):
                    continue
                info = entry.stat(follow_symlinks=True)
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):
                continue
            yield relative, info
            count += 1
            if count >= rules.max_files:
                return


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root)
    except (OSError, RuntimeError):  # a dangling or looping link
        return False


def file_digest(
    path: Path, max_bytes: int, roots: Sequence[Path] | None = None
) -> tuple[str | None, str | None]:
    """(sha256, None) of a text file, else (None, reason): too_large, binary, unreadable,
    outside_root, credential_store (the last two only when `roots` are given)."""
    digest = hashlib.sha256()
    size = 0
    try:
        opened = path.open("rb") if roots is None else local_files.open_file(str(path), roots)
    except SignetError as exc:
        return None, _REFUSALS.get(exc.code, "unreadable")
    except OSError:
        return None, "unreadable"
    try:
        with opened as handle:
            while block := handle.read(1 << 20):
                size += len(block)
                if size > max_bytes:
                    return None, "too_large"
                if b"\x00" in block:
                    return None, "binary"
                digest.update(block)
    except OSError:
        return None, "unreadable"
    return digest.hexdigest(), None


def scan(root: Path, rules: ScanRules, cursor: Mapping[str, FileState]) -> ScanResult:
    """Walk `root` and compare with `cursor` (relative path -> state)."""
    added: list[str] = []
    changed: list[str] = []
    skipped: list[Skipped] = []
    states: dict[str, FileState] = {}
    unchanged = read = 0
    truncated = False
    refused: list[Skipped] = []
    for n, (relative, info) in enumerate(walk(root, rules, refused), start=1):
        truncated = n >= rules.max_files
        before = cursor.get(relative)
        if before is not None and (before.size, before.mtime_ns) == (
            info.st_size,
            info.st_mtime_ns,
        ):
            states[relative] = before
            unchanged += 1
            continue
        read += 1
        digest, reason = file_digest(root / relative, rules.max_bytes, rules.roots)
        if digest is None:
            skipped.append(Skipped(relative, reason or "unreadable"))
            continue
        if before is not None and before.sha256 == digest:
            states[relative] = FileState(
                info.st_size, info.st_mtime_ns, digest, before.document_id, before.shared
            )
            unchanged += 1
            continue
        states[relative] = FileState(info.st_size, info.st_mtime_ns, digest)
        (changed if before is not None else added).append(relative)
    skipped_paths = {s.path for s in skipped}
    removed = sorted(p for p in cursor if p not in states and p not in skipped_paths)
    # A skipped file that was indexed before keeps its document until it is readable again.
    for path in skipped_paths & set(cursor):
        states[path] = cursor[path]
    if truncated:
        removed = []  # an incomplete walk cannot tell a deletion from a file it did not reach
    # A credential store indexed before this rule is removed (not kept like an unreadable file).
    return ScanResult(
        added=tuple(added),
        changed=tuple(changed),
        removed=tuple(removed),
        unchanged=unchanged,
        states=states,
        skipped=(*skipped, *refused),
        truncated=truncated,
        read_files=read,
    )


def cursor_json(states: Mapping[str, FileState]) -> dict[str, object]:
    """The cursor as stored in `connectors.cursor_json` (compact per-file lists)."""
    files = {
        path: [s.size, s.mtime_ns, s.sha256, s.document_id, int(s.shared)]
        for path, s in sorted(states.items())
    }
    return {"version": 1, "files": files}


def cursor_from_json(value: Mapping[str, object] | None) -> dict[str, FileState]:
    """The stored cursor back as states (an unknown or damaged cursor is empty)."""
    if not value or value.get("version") != 1 or not isinstance(value.get("files"), dict):
        return {}
    out: dict[str, FileState] = {}
    files = value["files"]
    assert isinstance(files, dict)
    for path, item in files.items():
        try:
            size, mtime_ns, digest, document_id, shared = item
            out[str(path)] = FileState(
                int(size), int(mtime_ns), str(digest), document_id, bool(shared)
            )
        except (TypeError, ValueError):
            continue
    return out
