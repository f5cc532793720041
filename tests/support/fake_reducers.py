"""Fast reducers behind the UMAP worker's interface (`support.projection_fakes` names them).

The worker process imports one of these by name for every run, so this module imports numpy
and nothing of the app: importing the facade in each child cost more than the run itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

Progress = Callable[[str, float], None]


def fast_reduce(
    matrix: npt.NDArray[np.floating], *, dimensions: int, seed: int, progress: Progress
) -> npt.NDArray[np.float64]:
    """A seeded random projection, reporting three phases like the real one."""
    progress("loading", 0.0)
    rng = np.random.default_rng(seed)
    basis = rng.normal(size=(matrix.shape[1], dimensions))
    progress("layout", 0.5)
    out: npt.NDArray[np.float64] = np.asarray(matrix, dtype=np.float64) @ basis
    return out


def slow_reduce(
    matrix: npt.NDArray[np.floating], *, dimensions: int, seed: int, progress: Progress
) -> npt.NDArray[np.float64]:
    """Reports progress, then takes a minute (tests cancel it)."""
    progress("layout", 0.2)
    time.sleep(60)
    return np.zeros((matrix.shape[0], dimensions))


def failing_reduce(
    matrix: npt.NDArray[np.floating], *, dimensions: int, seed: int, progress: Progress
) -> npt.NDArray[np.float64]:
    raise MemoryError("the reducer ran out of memory")


def wrong_shape_reduce(
    matrix: npt.NDArray[np.floating], *, dimensions: int, seed: int, progress: Progress
) -> npt.NDArray[np.float64]:
    return np.zeros((matrix.shape[0] + 1, dimensions))
