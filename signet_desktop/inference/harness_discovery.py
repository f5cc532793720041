"""Which agent harnesses (Claude Code, Codex, OpenCode) are installed here, for Dreaming.

`signet dream setup` offers one of them as the `memory_extraction` workload's acpx target. A
harness is looked for on PATH, then where its installers usually put it; the path kept is
absolute but not resolved through symlinks (`~/.local/bin/claude` points at one version and
is moved on update). Its version comes from `<bin> --version`, bounded by a timeout; a binary
that fails, hangs or prints nothing has an unknown version, and nothing here raises.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

VERSION_TIMEOUT_S = 10.0
_VERSION_MAX_CHARS = 80
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # colour codes some CLIs print even to a pipe
# Under $HOME, every harness; then the system places (module constant: tests empty it).
HOME_DIRS = (".local/bin", ".npm-global/bin", ".bun/bin")
SYSTEM_DIRS: tuple[Path, ...] = (Path("/usr/local/bin"),)

VersionRunner = Callable[[Path, float], str | None]
WRAPPER_MARK = b"installed by `signet install "  # in every wrapper script's header


@dataclass(frozen=True, slots=True)
class HarnessKind:
    """A harness Signet knows: its command name, label, extra install places under $HOME."""

    name: str
    label: str
    supported: bool
    home_paths: tuple[str, ...] = ()


KINDS: tuple[HarnessKind, ...] = (
    HarnessKind("claude", "Claude Code", True, (".claude/local/claude",)),
    HarnessKind("codex", "Codex", True),
    HarnessKind("opencode", "OpenCode", True, (".opencode/bin/opencode",)),
)
KINDS_BY_NAME = {kind.name: kind for kind in KINDS}


@dataclass(frozen=True, slots=True)
class Harness:
    """One harness binary found here; `supported`: Dreaming can run through it today."""

    name: str
    label: str
    path: Path
    version: str | None
    supported: bool


def read_version(binary: Path, timeout_s: float = VERSION_TIMEOUT_S) -> str | None:
    """The first line `<binary> --version` prints, or None when it fails, hangs or is silent.

    Runs in its own process group so a harness that leaves children holding its output open
    is still stopped at the timeout; `SIGNET_NO_HOOKS=1` keeps Signet's own `codex` wrapper
    from calling the daemon.
    """
    env = {**os.environ, "SIGNET_NO_HOOKS": "1"}
    try:
        proc = subprocess.Popen(
            [str(binary), "--version"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
    except (OSError, ValueError):
        return None
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _stop(proc)
        return None
    if proc.returncode != 0:
        return None
    return _first_line(out) or _first_line(err)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except (ProcessLookupError, PermissionError):
        pass
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.communicate(timeout=2)


def _first_line(raw: bytes) -> str | None:
    for line in raw.decode("utf-8", errors="replace").splitlines():
        clean = "".join(ch for ch in _ANSI.sub("", line) if ch.isprintable()).strip()
        if clean:
            return clean[:_VERSION_MAX_CHARS]
    return None


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def candidates(kind: HarnessKind, path_var: str | None, home: Path) -> list[Path]:
    """Where `kind` may be, in the order tried: PATH, then the usual install places.

    Signet's own `codex` wrapper (`signet install codex`) is passed over: it is the user's
    Codex plus session hooks, and a Dreaming pass is no session."""
    found: list[Path] = []
    for folder in (path_var or "").split(os.pathsep) if path_var else ():
        on_path = shutil.which(kind.name, path=folder) if folder else None
        if on_path and not is_signet_wrapper(Path(on_path)):
            found.append(Path(os.path.abspath(on_path)))
            break
    found.extend(home / extra for extra in kind.home_paths)
    found.extend(home / folder / kind.name for folder in HOME_DIRS)
    found.extend(folder / kind.name for folder in SYSTEM_DIRS)
    return found


def is_signet_wrapper(path: Path) -> bool:
    """The file is a hook wrapper Signet's installer wrote (a script that names it)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(512)
    except OSError:
        return False
    return head.startswith(b"#!") and WRAPPER_MARK in head


def looked_in(home: Path) -> list[str]:
    """The places searched besides PATH, for a message when nothing is found."""
    extras = [str(home / extra) for kind in KINDS for extra in kind.home_paths]
    return [
        *(str(home / folder) for folder in HOME_DIRS),
        *extras,
        *(str(folder) for folder in SYSTEM_DIRS),
    ]


def discover(
    *,
    path_var: str | None,
    home: Path,
    runner: VersionRunner = read_version,
    timeout_s: float = VERSION_TIMEOUT_S,
) -> tuple[Harness, ...]:
    """Every known harness found here (the first place that has it), in KINDS order."""
    found: list[Harness] = []
    for kind in KINDS:
        binary = next((p for p in candidates(kind, path_var, home) if _executable(p)), None)
        if binary is not None:
            found.append(_harness(kind, binary, _safe_version(runner, binary, timeout_s)))
    return tuple(found)


def inspect(
    binary: Path,
    *,
    runner: VersionRunner = read_version,
    timeout_s: float = VERSION_TIMEOUT_S,
) -> Harness | None:
    """The harness at a path the user named (None when it is not an executable file).

    Known by its file name (`claude`, `claude.exe`), as the acpx executor knows it; any other
    name is listed under that name and is not supported, whatever `--version` says.
    """
    binary = Path(os.path.abspath(binary))
    if not _executable(binary):
        return None
    version = _safe_version(runner, binary, timeout_s)
    kind = KINDS_BY_NAME.get(binary.name.lower().removesuffix(".exe").removesuffix(".cmd"))
    if kind is None:
        return Harness(binary.name, binary.name, binary, version, supported=False)
    return _harness(kind, binary, version)


def _harness(kind: HarnessKind, binary: Path, version: str | None) -> Harness:
    return Harness(kind.name, kind.label, binary, version, kind.supported)


def _safe_version(runner: VersionRunner, binary: Path, timeout_s: float) -> str | None:
    # An injected runner is held to the same promise as the real one: never raise.
    try:
        return runner(binary, timeout_s)
    except Exception:
        return None


def search_env(env: Mapping[str, str]) -> tuple[str | None, Path]:
    """PATH and the home directory to search, from an environment (HOME, else the user's)."""
    home = env.get("HOME") or os.path.expanduser("~")
    return env.get("PATH"), Path(home)
