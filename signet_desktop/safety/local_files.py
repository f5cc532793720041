"""Which server paths a caller may read, checked on the opened descriptor.

The local user (served on trust from loopback) reads under `files.roots` and its own defaults
(home, /tmp, the workspace...); every other caller reads only under `files.roots`, and with
none configured reads nothing. Credential stores (`CREDENTIAL_DIRS`, `CREDENTIAL_FILES`,
`.env*`) are refused under every root. `open_file` opens first and then checks the real path of
the descriptor it holds, so a file swapped for a symlink between a check and the open is
never read: the check is of what was opened.
"""

from __future__ import annotations

import fcntl
import os
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import BinaryIO

from signet_desktop.domain.errors import Forbidden, InvalidInput

MAX_PATH_CHARS = 4096
ROOTS_KEY = "files.roots"
# Directories that hold credentials: nothing under them is read (matched as path suffixes).
CREDENTIAL_DIRS: tuple[tuple[str, ...], ...] = (
    (".ssh",),
    (".aws",),
    (".gnupg",),
    (".config", "gcloud"),
    (".local", "share", "keyrings"),
    ("Library", "Keychains"),
    (".kube",),
    (".docker",),
    (".password-store",),
)
# Files that are credentials wherever they are (`.env` and `.env.*` too).
CREDENTIAL_FILES = frozenset(
    {".netrc", ".git-credentials", ".pgpass", ".npmrc", ".pypirc", ".my.cnf", "credentials.json"}
)
_F_GETPATH = 50  # macOS fcntl: the path of an open descriptor


@dataclass(frozen=True, slots=True)
class FileRoots:
    """The configured roots (`files.roots`) and the local user's defaults for one surface."""

    configured: tuple[Path, ...] = ()
    local_defaults: tuple[Path, ...] = ()

    @classmethod
    def of(cls, configured: Sequence[Path], local_defaults: Sequence[Path]) -> FileRoots:
        return cls(_resolved(configured), _resolved(local_defaults))

    def for_caller(self, local: bool) -> tuple[Path, ...]:
        """The roots this caller may read: the local user's include its defaults."""
        return (*self.configured, *self.local_defaults) if local else self.configured


def _resolved(paths: Sequence[Path]) -> tuple[Path, ...]:
    return tuple(dict.fromkeys(Path(p).expanduser().resolve() for p in paths))


def is_credential_store(path: PurePath) -> bool:
    """The path is, or lies inside, a credential store (by its components)."""
    parts = path.parts
    for index, name in enumerate(parts):
        if name in CREDENTIAL_FILES or name == ".env" or name.startswith(".env."):
            return True
        for store in CREDENTIAL_DIRS:
            if tuple(parts[index : index + len(store)]) == store:
                return True
    return False


def check_path(raw: object, roots: Sequence[Path], *, field: str = "path") -> Path:
    """The absolute, resolved path `raw` names, if a caller with `roots` may read it.

    InvalidInput for a missing, relative or malformed path; Forbidden (`path_not_allowed`,
    `path_credential_store`) for one outside the roots or in a credential store. Use
    `open_file` (or `open_dir`) to read: this check alone leaves a gap before the open.
    """
    given = given_path(raw, field=field)
    resolved = given.resolve()
    check_real(given, resolved, roots, field=field)
    return resolved


def given_path(raw: object, *, field: str = "path") -> Path:
    """`raw` as an absolute path (`~` expanded, `..` folded), or InvalidInput naming `field`."""
    if not isinstance(raw, str) or not raw.strip() or len(raw) > MAX_PATH_CHARS or "\x00" in raw:
        raise InvalidInput(f"{field} must be a file path", code="path_invalid")
    given = Path(raw).expanduser()
    if not given.is_absolute():
        raise InvalidInput(f"{field} must be absolute", code="path_invalid")
    return Path(os.path.normpath(given))


def check_real(given: Path, real: Path, roots: Sequence[Path], *, field: str = "path") -> None:
    """Refuse `real` (what `given` leads to) outside `roots` or in a credential store."""
    if is_credential_store(given) or is_credential_store(real):
        raise Forbidden(
            f"{field} is in a credential store (.ssh, .aws, .gnupg, .env, ...), "
            "which is never read",
            code="path_credential_store",
        )
    if not roots:
        raise Forbidden(
            f"{field} names a server path, which only the local user may read unless "
            f"{ROOTS_KEY} in agent.yaml lists the directories other callers may read",
            code="path_not_allowed",
        )
    if not any(real.is_relative_to(root) for root in roots):
        raise Forbidden(
            f"{field} is outside the directories this caller may read "
            f"({ROOTS_KEY}; the local user also reads its defaults)",
            code="path_not_allowed",
        )


def open_file(raw: object, roots: Sequence[Path], *, field: str = "path") -> BinaryIO:
    """Open a regular file for reading, then check the descriptor's real path.

    Symlinks are followed by the kernel at the open; what was opened is then checked against
    `roots` and the credential stores, so there is no gap between check and open. The file is
    opened non-blocking (a FIFO cannot hang the reader) and must be a regular file.
    """
    given = given_path(raw, field=field)
    flags = os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC
    fd = _open(given, flags, roots, field)
    try:
        check_real(given, descriptor_path(fd, given), roots, field=field)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InvalidInput(f"{field} is not a regular file", code="path_not_found")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def open_dir(raw: object, roots: Sequence[Path], *, field: str = "path") -> Path:
    """The real path of a directory a caller with `roots` may read (checked as opened)."""
    given = given_path(raw, field=field)
    fd = _open(given, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, roots, field)
    try:
        real = descriptor_path(fd, given)
        check_real(given, real, roots, field=field)
        return real
    finally:
        os.close(fd)


def _open(given: Path, flags: int, roots: Sequence[Path], field: str) -> int:
    # Checked before the open too: a path out of bounds is never opened (a device's open can
    # act), and whether it exists is not for the caller to learn. The check that counts is
    # the one after, on the descriptor.
    check_real(given, given.resolve(), roots, field=field)
    try:
        return os.open(given, flags)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise InvalidInput(f"{field} does not exist", code="path_not_found") from None
        if isinstance(exc, NotADirectoryError):
            raise InvalidInput(f"{field} is not a directory", code="path_not_found") from None
        raise InvalidInput(
            f"{field} cannot be read: {exc.strerror or exc}", code="path_unreadable"
        ) from None


def descriptor_path(fd: int, given: Path) -> Path:
    """The real path of the open descriptor `fd` (which was opened from `given`)."""
    if sys.platform.startswith("linux"):
        target = os.readlink(f"/proc/self/fd/{fd}")
        if target.startswith("/") and not target.endswith(" (deleted)"):
            return Path(target)
    elif sys.platform == "darwin":
        raw = fcntl.fcntl(fd, _F_GETPATH, bytes(1024))
        return Path(os.fsdecode(raw.split(b"\x00", 1)[0]))
    # Elsewhere: the resolved path counts only while it is still the very file we hold.
    real = given.resolve()
    held = os.fstat(fd)
    try:
        named = os.stat(real)
    except OSError:
        raise InvalidInput("the file changed while it was opened", code="path_unreadable") from None
    if (held.st_dev, held.st_ino) != (named.st_dev, named.st_ino):
        raise InvalidInput("the file changed while it was opened", code="path_unreadable")
    return real
