"""PCA and the trivial layouts: shapes for 0, 1, 2 and N points, the frame, determinism."""

from __future__ import annotations

import time

import numpy as np
import pytest

from signet_desktop.projection.layout import SCALE, normalise, pca_layout, trivial_layout


def clustered(per: int, dims: int = 64, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Three tight clusters around random unit centroids; returns (matrix, labels)."""
    rng = np.random.default_rng(seed)
    centroids = rng.normal(size=(3, dims))
    rows = np.concatenate([c + 0.05 * rng.normal(size=(per, dims)) for c in centroids])
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype(np.float32), np.repeat(np.arange(3), per)


@pytest.mark.parametrize("dimensions", [2, 3])
@pytest.mark.parametrize("count", [0, 1, 2, 3, 50])
def test_shapes(count: int, dimensions: int) -> None:
    matrix, _ = clustered(50)
    coords = pca_layout(matrix[:count], dimensions)
    assert coords.shape == (count, dimensions)
    assert np.isfinite(coords).all()


def test_one_and_two_points_are_placed_not_reduced() -> None:
    assert trivial_layout(1, 2).tolist() == [[0.0, 0.0]]  # type: ignore[union-attr]
    two = trivial_layout(2, 3)
    assert two is not None and two[:, 0].tolist() == [-SCALE / 4, SCALE / 4]
    assert trivial_layout(3, 2) is None


def test_pca_fills_the_frame_and_separates_clusters() -> None:
    matrix, labels = clustered(40)
    coords = pca_layout(matrix, 2)
    assert coords.min() == pytest.approx(-SCALE / 2) and coords.max() == pytest.approx(SCALE / 2)
    centres = np.array([coords[labels == k].mean(axis=0) for k in range(3)])
    spread = max(np.linalg.norm(coords[labels == k] - centres[k], axis=1).mean() for k in range(3))
    gaps = [np.linalg.norm(centres[a] - centres[b]) for a, b in ((0, 1), (0, 2), (1, 2))]
    assert min(gaps) > 3 * spread


def test_pca_is_deterministic_and_order_follows_rows() -> None:
    matrix, _ = clustered(20)
    first, second = pca_layout(matrix, 2), pca_layout(matrix.copy(), 2)
    assert np.array_equal(first, second)
    flipped = pca_layout(matrix[::-1], 2)
    assert np.allclose(flipped[::-1], first, atol=1e-6)


def test_identical_vectors_stay_at_the_centre() -> None:
    matrix = np.ones((5, 8), dtype=np.float32)
    assert np.array_equal(pca_layout(matrix, 2), np.zeros((5, 2)))
    assert normalise(np.array([[1.0, 5.0], [3.0, 5.0]])).tolist() == [[-210.0, 0.0], [210.0, 0.0]]


def test_fewer_informative_directions_than_dimensions() -> None:
    matrix = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0]], dtype=np.float32)  # rank 2 after centring
    coords = pca_layout(matrix, 3)
    assert coords.shape == (3, 3) and np.allclose(coords[:, 2], 0.0)


def test_ten_thousand_points_take_well_under_a_second() -> None:
    """A sanity bound, not a benchmark (bench/map_projection.py measures)."""
    matrix = np.random.default_rng(1).normal(size=(10_000, 384)).astype(np.float32)
    started = time.perf_counter()
    pca_layout(matrix, 2)
    assert time.perf_counter() - started < 5.0
