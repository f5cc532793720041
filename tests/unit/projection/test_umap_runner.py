"""The UMAP runner: a real child process running a fast fake reducer by name."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from support.projection_fakes import FAILING, FAST, SLOW, WRONG_SHAPE, config

from signet_desktop.projection.runner import (
    ProjectionCancelled,
    ProjectionFailed,
    RunnerConfig,
    UmapRun,
)


def matrix(count: int = 30, dims: int = 16) -> np.ndarray:
    return np.random.default_rng(3).normal(size=(count, dims)).astype(np.float32)


def test_a_run_returns_framed_coords_edges_and_progress() -> None:
    seen: list[tuple[str, float]] = []
    result = UmapRun(matrix(), 3, config(FAST), progress=lambda p, f: seen.append((p, f))).wait()
    assert result.coords.shape == (30, 3)
    assert result.coords.min() == pytest.approx(-210) and result.coords.max() == pytest.approx(210)
    assert result.edges and all(0 <= a < b < 30 for a, b in result.edges)
    assert [p for p, _ in seen] == ["loading", "layout", "writing", "done"]
    assert [f for _, f in seen] == sorted(f for _, f in seen) and seen[-1][1] == 1.0


def test_the_same_seed_gives_the_same_layout() -> None:
    first = UmapRun(matrix(), 2, config(FAST)).wait()
    second = UmapRun(matrix(), 2, config(FAST)).wait()
    assert np.array_equal(first.coords, second.coords)


@pytest.mark.parametrize(
    ("reducer", "message"),
    [
        (FAILING, "MemoryError: the reducer ran out of memory"),
        (WRONG_SHAPE, "reducer returned shape"),
    ],
)
def test_a_failing_reducer_raises_its_error(reducer: str, message: str) -> None:
    with pytest.raises(ProjectionFailed, match=message):
        UmapRun(matrix(), 2, config(reducer)).wait()


def test_an_unknown_reducer_fails_cleanly() -> None:
    with pytest.raises(ProjectionFailed, match="ModuleNotFoundError"):
        UmapRun(matrix(), 2, RunnerConfig(reducer="no_such_module:reduce")).wait()


def test_cancel_terminates_the_process() -> None:
    started = threading.Event()
    run = UmapRun(matrix(), 2, config(SLOW), progress=lambda p, f: started.set())
    outcome: list[BaseException] = []

    def wait() -> None:
        try:
            run.wait()
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=wait)
    thread.start()
    assert started.wait(20), "the worker never reported progress"
    began = time.monotonic()
    run.cancel()
    thread.join(10)
    assert not thread.is_alive() and time.monotonic() - began < 5
    assert len(outcome) == 1 and isinstance(outcome[0], ProjectionCancelled)
    assert run._process is not None and run._process.returncode is not None


def test_cancel_before_start_never_spawns() -> None:
    run = UmapRun(matrix(), 2, config(SLOW))
    run.cancel()
    with pytest.raises(ProjectionCancelled):
        run.wait()
    assert run._process is None
