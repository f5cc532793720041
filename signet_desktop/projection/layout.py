"""Layouts of the embedding space: PCA at once (numpy), trivial placements for 0-2 points.

Every layout, PCA here or UMAP from the worker, is scaled into the same frame Signet's
dashboard uses (each axis spans [-SCALE/2, SCALE/2]), so switching method keeps the map in
place. PCA goes through the (d x d) covariance and `eigh`: 10k x 384 takes tens of
milliseconds, far below the one-second target, and never needs more memory than the matrix.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

SCALE = 420.0  # Signet normalises projections to [-210, 210] on every axis
DIMENSIONS = (2, 3)

Coords = npt.NDArray[np.float64]


def check_dimensions(dimensions: int) -> int:
    """2 or 3; anything else is a programming error at this level (the service checks input)."""
    if dimensions not in DIMENSIONS:
        raise ValueError(f"dimensions must be 2 or 3, not {dimensions!r}")
    return dimensions


def trivial_layout(count: int, dimensions: int) -> Coords | None:
    """Where 0, 1 or 2 points go (no reduction is meaningful); None for 3 or more."""
    check_dimensions(dimensions)
    if count == 0:
        return np.zeros((0, dimensions), dtype=np.float64)
    if count == 1:
        return np.zeros((1, dimensions), dtype=np.float64)
    if count == 2:
        coords = np.zeros((2, dimensions), dtype=np.float64)
        coords[:, 0] = (-SCALE * 0.25, SCALE * 0.25)
        return coords
    return None


def pca_layout(matrix: npt.NDArray[np.floating], dimensions: int = 2) -> Coords:
    """The first `dimensions` principal components of the rows, scaled into the map frame.

    Deterministic: each component's sign is chosen so its largest loading is positive. A
    space with fewer informative directions than `dimensions` leaves the rest at 0.
    """
    check_dimensions(dimensions)
    count = matrix.shape[0]
    trivial = trivial_layout(count, dimensions)
    if trivial is not None:
        return trivial
    data = np.asarray(matrix, dtype=np.float64)
    centred = data - data.mean(axis=0)
    covariance = centred.T @ centred
    values, vectors = np.linalg.eigh(covariance)  # ascending
    order = np.argsort(values)[::-1][:dimensions]
    components = vectors[:, order]
    signs = np.sign(components[np.abs(components).argmax(axis=0), range(components.shape[1])])
    components = components * np.where(signs == 0, 1.0, signs)
    coords = np.zeros((count, dimensions), dtype=np.float64)
    coords[:, : components.shape[1]] = centred @ components
    return normalise(coords)


def normalise(coords: npt.NDArray[np.floating]) -> Coords:
    """Each axis min-max scaled to [-SCALE/2, SCALE/2]; a flat axis stays at 0."""
    data = np.asarray(coords, dtype=np.float64)
    if data.shape[0] == 0:
        return data.copy()
    low, high = data.min(axis=0), data.max(axis=0)
    span = high - low
    flat = span <= 1e-12
    scaled = (data - low) / np.where(flat, 1.0, span) - 0.5
    scaled[:, flat] = 0.0
    out: Coords = scaled * SCALE
    return out
