"""Reducers the UMAP worker process runs: `(matrix, *, dimensions, seed, progress) -> coords`.

Only the worker process (`umap_worker.py`) imports this module's heavy dependency: `import
umap` compiles numba code for tens of seconds the first time, so it must never happen in the
GUI or the daemon process. `progress(phase, fraction)` reports how far the reduction got;
fractions rise monotonically from 0 to 1 across phases.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

Progress = Callable[[str, float], None]
Reducer = Callable[..., npt.NDArray[np.floating]]

DEFAULT_REDUCER = "signet_desktop.projection.reducers:umap_reduce"
N_NEIGHBORS = 15
MIN_DIST = 0.1
# Phase shares of the whole bar: loading UMAP (numba compile on a first run), the
# nearest-neighbour graph, then the layout epochs, which tqdm reports one by one.
LOAD_SHARE, GRAPH_SHARE = 0.15, 0.25
_COUNTS = re.compile(r"(\d+)/(\d+)")


class _EpochStream:
    """A file object for tqdm: turns its `n/total` lines into epoch progress."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress

    def write(self, text: str) -> int:
        match = _COUNTS.search(text)
        if match is not None and int(match.group(2)) > 0:
            done = int(match.group(1)) / int(match.group(2))
            self._progress(
                "layout", LOAD_SHARE + GRAPH_SHARE + (1 - LOAD_SHARE - GRAPH_SHARE) * done
            )
        return len(text)

    def flush(self) -> None:
        return None


def umap_reduce(
    matrix: npt.NDArray[np.floating], *, dimensions: int, seed: int, progress: Progress
) -> npt.NDArray[np.floating]:
    """UMAP (cosine metric, 15 neighbours, min_dist 0.1) of the rows to `dimensions`."""
    progress("loading", 0.0)
    import umap  # type: ignore[import-untyped]  # the 15-40 s import, in this process only

    count = matrix.shape[0]
    progress("neighbours", LOAD_SHARE)
    kwargs: dict[str, Any] = {
        "n_components": dimensions,
        "n_neighbors": max(2, min(N_NEIGHBORS, count - 1)),
        "min_dist": MIN_DIST,
        "metric": "cosine",
        "random_state": seed,
        "n_jobs": 1,  # random_state forces one thread anyway; say so and skip the warning
        # Spectral init needs more points than components + 1 neighbours; tiny sets go random.
        "init": "spectral" if count > 4 * (dimensions + 1) else "random",
        "verbose": False,
        "tqdm_kwds": {
            "disable": False,
            "file": _EpochStream(progress),
            "bar_format": "{n}/{total}\n",
            "mininterval": 0.25,
        },
    }
    reducer = umap.UMAP(**kwargs)
    coords: npt.NDArray[np.floating] = reducer.fit_transform(np.asarray(matrix, dtype=np.float32))
    return coords
