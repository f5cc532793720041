"""Reducers the UMAP worker process runs: `(matrix, *, dimensions, seed, progress) -> coords`.

Only the worker process (`umap_worker.py`) imports this module's heavy dependency: `import
umap` compiles numba code for tens of seconds the first time, so it must never happen in the
GUI or the daemon process. `progress(phase, fraction)` reports how far the reduction got;
fractions rise monotonically from 0 to 1 across phases (loading, neighbours, graph, layout,
writing), each moved only by umap's own signals (`phases.py`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from signet_desktop.projection.phases import Bar, Epochs, Messages, Progress, load

Reducer = Callable[..., npt.NDArray[np.floating]]

DEFAULT_REDUCER = "signet_desktop.projection.reducers:umap_reduce"
N_NEIGHBORS = 15
MIN_DIST = 0.1


def umap_reduce(
    matrix: npt.NDArray[np.floating], *, dimensions: int, seed: int, progress: Progress
) -> npt.NDArray[np.floating]:
    """UMAP (cosine metric, 15 neighbours, min_dist 0.1) of the rows to `dimensions`."""
    bar = Bar(progress)
    load(bar)  # the 15-40 s imports (numba compiles), in this process only, step by step
    import umap  # type: ignore[import-untyped]  # loaded above

    count = matrix.shape[0]
    kwargs: dict[str, Any] = {
        "n_components": dimensions,
        "n_neighbors": max(2, min(N_NEIGHBORS, count - 1)),
        "min_dist": MIN_DIST,
        "metric": "cosine",
        "random_state": seed,
        "n_jobs": 1,  # random_state forces one thread anyway; say so and skip the warning
        # Spectral init needs more points than components + 1 neighbours; tiny sets go random.
        "init": "spectral" if count > 4 * (dimensions + 1) else "random",
        "verbose": True,  # its phase lines go to `Messages`, not to our stdout protocol
        "tqdm_kwds": {
            "disable": False,
            "file": Epochs(bar),
            "bar_format": "{n}/{total}\n",
            "mininterval": 0.25,
        },
    }
    reducer = umap.UMAP(**kwargs)
    with contextlib.redirect_stdout(Messages(bar)):
        fitted = reducer.fit_transform(np.asarray(matrix, dtype=np.float32))
    coords: npt.NDArray[np.floating] = fitted
    return coords
