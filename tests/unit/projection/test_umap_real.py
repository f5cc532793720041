"""The one run of the real umap-learn (its first import compiles numba code: tens of seconds)."""

from __future__ import annotations

import numpy as np
import pytest

from signet_desktop.projection.runner import RunnerConfig, UmapRun


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_real_umap_separates_three_topics() -> None:
    rng = np.random.default_rng(7)
    centroids = rng.normal(size=(3, 64))
    rows = np.concatenate([c + 0.15 * rng.normal(size=(60, 64)) for c in centroids])
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    labels = np.repeat(np.arange(3), 60)
    phases: list[str] = []
    result = UmapRun(rows, 2, RunnerConfig(), progress=lambda p, f: phases.append(p)).wait()
    coords = result.coords
    assert coords.shape == (180, 2) and np.isfinite(coords).all()
    assert {"loading", "neighbours", "layout"} <= set(phases)
    centres = np.array([coords[labels == k].mean(axis=0) for k in range(3)])
    spread = max(np.linalg.norm(coords[labels == k] - centres[k], axis=1).mean() for k in range(3))
    gaps = [np.linalg.norm(centres[a] - centres[b]) for a, b in ((0, 1), (0, 2), (1, 2))]
    assert min(gaps) > 2 * spread
