"""Run one UMAP reduction in a separate process, with progress and cancel.

`UmapRun` writes the matrix to a private temp directory, starts
`python -m signet_desktop.projection.umap_worker`, and reads its JSON progress lines on the
calling thread (`wait`). `cancel()` from any other thread terminates the process (then kills
it if it lingers); `wait` then raises `ProjectionCancelled`. The reducer is named by a
`module:function` string so tests can put a fast fake behind the same interface.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np
import numpy.typing as npt

from signet_desktop.projection.reducers import DEFAULT_REDUCER

log = logging.getLogger(__name__)

WORKER_MODULE = "signet_desktop.projection.umap_worker"
TERMINATE_GRACE_S = 3.0
STDERR_TAIL = 2000

ProgressCallback = Callable[[str, float], None]


class ProjectionFailed(Exception):
    """The worker process failed (its last error line, or how it exited)."""


class ProjectionCancelled(Exception):
    """The run was cancelled before it finished."""


@dataclass(frozen=True, slots=True)
class RunnerConfig:
    """How to start the worker: which reducer, the seed, extra import paths for the child."""

    reducer: str = DEFAULT_REDUCER
    seed: int = 42
    extra_path: tuple[str, ...] = ()
    python: str = sys.executable


@dataclass(frozen=True, slots=True)
class RunResult:
    """A finished reduction: coordinates in the map frame and the KNN edges."""

    coords: npt.NDArray[np.float64]
    edges: tuple[tuple[int, int], ...]


class UmapRun:
    """One reduction in a child process; `wait()` on one thread, `cancel()` from any."""

    def __init__(
        self,
        matrix: npt.NDArray[np.floating],
        dimensions: int,
        config: RunnerConfig,
        progress: ProgressCallback | None = None,
    ) -> None:
        self._matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        self._dimensions = dimensions
        self._config = config
        self._progress = progress
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None
        self._cancelled = False

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        """Stop the run: terminate the process (or stop it from starting)."""
        with self._lock:
            self._cancelled = True
            process = self._process
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(TERMINATE_GRACE_S)
            except subprocess.TimeoutExpired:
                process.kill()

    def wait(self) -> RunResult:
        """Run to the end; raises ProjectionCancelled or ProjectionFailed."""
        with tempfile.TemporaryDirectory(prefix="signet-umap-") as tmp:
            source, target = Path(tmp) / "matrix.npy", Path(tmp) / "layout.npz"
            np.save(source, self._matrix)
            # stderr goes to a file: a pipe nobody reads could fill and stall the worker.
            with open(Path(tmp) / "stderr.txt", "w+", encoding="utf-8") as errors:
                process = self._start(source, target, errors)
                if process is None:
                    raise ProjectionCancelled("cancelled before the worker started")
                with process:  # closes the stdout pipe and reaps the child
                    error = self._follow(process)
                    code = process.wait()
                errors.seek(0)
                stderr = errors.read()
            if self._cancelled:
                raise ProjectionCancelled("cancelled")
            if code != 0 or error is not None:
                detail = error or f"worker exited with status {code}: {stderr[-STDERR_TAIL:]}"
                raise ProjectionFailed(detail)
            with np.load(target) as data:
                coords = np.asarray(data["coords"], dtype=np.float64)
                edges = tuple((int(a), int(b)) for a, b in data["edges"])
        return RunResult(coords, edges)

    def _command(self, source: Path, target: Path) -> list[str]:
        return [
            self._config.python,
            "-m",
            WORKER_MODULE,
            str(source),
            str(target),
            "--dimensions",
            str(self._dimensions),
            "--seed",
            str(self._config.seed),
            "--reducer",
            self._config.reducer,
        ]

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        paths = [*self._config.extra_path, *_package_root()]
        if env.get("PYTHONPATH"):
            paths.append(env["PYTHONPATH"])
        env["PYTHONPATH"] = os.pathsep.join(paths)
        env["PYTHONUNBUFFERED"] = "1"
        return env

    def _start(self, source: Path, target: Path, errors: IO[str]) -> subprocess.Popen[str] | None:
        with self._lock:
            if self._cancelled:
                return None
            self._process = subprocess.Popen(
                self._command(source, target),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
                env=self._env(),
            )
            return self._process

    def _follow(self, process: subprocess.Popen[str]) -> str | None:
        """Read progress lines until the worker closes stdout; returns its error line."""
        error = None
        assert process.stdout is not None
        for line in process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                log.debug("umap worker: %s", line.rstrip())
                continue
            if not isinstance(message, dict):
                continue
            if "error" in message:
                error = str(message["error"])
            elif self._progress is not None and not self._cancelled:
                self._progress(str(message.get("phase", "")), float(message.get("fraction", 0)))
        return error


def _package_root() -> Sequence[str]:
    """The directory holding `signet_desktop`, so the child imports this very copy."""
    return [str(Path(__file__).resolve().parents[2])]
