"""Reducers the UMAP worker process runs: `(matrix, *, dimensions, seed, progress) -> coords`.

Only the worker process (`umap_worker.py`) imports this module's heavy dependency: `import
umap` compiles numba code for tens of seconds the first time, so it must never happen in the
GUI or the daemon process. `progress(phase, fraction)` reports how far the reduction got;
fractions rise monotonically from 0 to 1 across phases (loading, neighbours, graph, layout,
writing), each moved only by umap's own signals (`phases.py`).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from signet_desktop.projection.phases import Bar, Epochs, Messages, Progress, load

Reducer = Callable[..., npt.NDArray[np.floating]]

DEFAULT_REDUCER = "signet_desktop.projection.reducers:umap_reduce"
N_NEIGHBORS = 15
MIN_DIST = 0.1
EPOCH_STEP = 10  # the layout's bar moves every 10 of its 200-500 epochs
# Packages whose numba functions a reduction calls; most are not declared `cache=True`.
COMPILED_PACKAGES = ("umap", "pynndescent")


def umap_reduce(
    matrix: npt.NDArray[np.floating], *, dimensions: int, seed: int, progress: Progress
) -> npt.NDArray[np.floating]:
    """UMAP (cosine metric, 15 neighbours, min_dist 0.1) of the rows to `dimensions`."""
    bar = Bar(progress)
    load(bar)  # the 15-40 s imports (numba compiles), in this process only, step by step
    import umap  # type: ignore[import-untyped]  # loaded above

    cache_compiled(COMPILED_PACKAGES)
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
            # A line every EPOCH_STEP epochs however fast they run: a time interval gave one
            # jump when the layout, compiled once and loaded from numba's cache, took 0.2 s.
            "mininterval": 0,
            "miniters": EPOCH_STEP,
        },
    }
    reducer = umap.UMAP(**kwargs)
    with contextlib.redirect_stdout(Messages(bar)):
        fitted = reducer.fit_transform(np.asarray(matrix, dtype=np.float32))
    coords: npt.NDArray[np.floating] = fitted
    return coords


def cache_compiled(packages: Sequence[str]) -> int:
    """Keep what numba compiles for the loaded modules of `packages` in its on-disk cache.

    umap's own functions (the neighbour graph, the layout) are jitted without `cache=True`,
    so every map compiled them again on its first call: ~15 s of a small map's run. With the
    cache on, a later run on this machine loads them instead (numba keeps them beside the
    package, or under its user cache directory when that is read-only, and compiles again
    when the package's source changes). How many functions it turned on; a function numba
    finds no place to cache for is compiled per run, as before.
    """
    from numba.core.registry import CPUDispatcher

    seen: set[int] = set()
    for name, module in list(sys.modules.items()):
        if module is None or name.partition(".")[0] not in packages:
            continue
        for value in list(vars(module).values()):
            if isinstance(value, CPUDispatcher) and id(value) not in seen:
                try:
                    value.enable_caching()
                except RuntimeError:  # nowhere to keep it (no source file, nothing writable)
                    continue
                seen.add(id(value))
    return len(seen)
