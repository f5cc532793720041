"""The UMAP worker process: `python -m signet_desktop.projection.umap_worker IN OUT [options]`.

Reads an (n, d) float32 matrix from `IN` (.npy), runs the reducer named by `--reducer`
(`module:function`, default the real UMAP), scales the result into the map frame, adds the
k-nearest-neighbour edges Signet's dashboard draws, and writes `coords` and `edges` to `OUT`
(.npz). Progress goes to stdout as one JSON object per line (`{"phase", "fraction"}`); a
failure is a final `{"error": ...}` line and exit status 1. The parent (`runner.py`) reads
the lines and cancels by terminating the process, so nothing here needs a stop flag.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from typing import TextIO

import numpy as np
import numpy.typing as npt

from signet_desktop.projection.layout import normalise
from signet_desktop.projection.phases import WRITING
from signet_desktop.projection.reducers import DEFAULT_REDUCER

EDGE_NEIGHBOURS = 4  # Signet's KNN_K


class Protocol:
    """The parent's pipe (stdout as `run` found it, kept while a reducer redirects stdout)."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def emit(self, message: dict[str, object]) -> None:
        """One progress line for the parent."""
        self._out.write(json.dumps(message) + "\n")
        self._out.flush()

    def progress(self, phase: str, fraction: float) -> None:
        self.emit({"phase": phase, "fraction": round(min(max(fraction, 0.0), 1.0), 4)})


def load_reducer(spec: str) -> object:
    """The function `module:function` names."""
    module_name, _, function = spec.partition(":")
    if not module_name or not function:
        raise ValueError(f"reducer must be module:function, not {spec!r}")
    return getattr(importlib.import_module(module_name), function)


def knn_edges(coords: npt.NDArray[np.float64], k: int = EDGE_NEIGHBOURS) -> list[list[int]]:
    """Undirected edges from each point to its k nearest neighbours in the layout."""
    count = coords.shape[0]
    if count < 2:
        return []
    from scipy.spatial import cKDTree  # type: ignore[import-untyped]  # umap-learn needs scipy

    _, neighbours = cKDTree(coords).query(coords, k=min(k + 1, count))
    edges = {
        (min(i, int(j)), max(i, int(j)))
        for i, row in enumerate(np.atleast_2d(neighbours))
        for j in row
        if int(j) != i
    }
    return [list(edge) for edge in sorted(edges)]


def run(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="umap_worker")
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--dimensions", type=int, default=2, choices=(2, 3))
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--reducer", default=DEFAULT_REDUCER)
    args = parser.parse_args(argv)
    pipe = Protocol(sys.stdout)
    emit, progress = pipe.emit, pipe.progress
    try:
        matrix = np.load(args.input)
        reducer = load_reducer(args.reducer)
        raw = reducer(  # type: ignore[operator]
            matrix, dimensions=args.dimensions, seed=args.seed, progress=progress
        )
        progress("writing", WRITING)
        coords = np.asarray(raw, dtype=np.float64)
        if coords.shape != (matrix.shape[0], args.dimensions) or not np.isfinite(coords).all():
            raise ValueError(f"reducer returned shape {coords.shape}, or non-finite values")
        coords = normalise(coords)
        edges = np.asarray(knn_edges(coords), dtype=np.int64).reshape(-1, 2)
        np.savez(args.output, coords=coords, edges=edges)
    except Exception as exc:  # the parent shows this line to the user
        emit({"error": f"{type(exc).__name__}: {exc}"})
        return 1
    emit({"phase": "done", "fraction": 1.0})
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
