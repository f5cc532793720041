"""The one run of the real umap-learn (its first import compiles numba code: tens of seconds):
it separates three topics, and its worker process reports every phase, rising."""

from __future__ import annotations

import numpy as np
import pytest

from signet_desktop.projection import phases
from signet_desktop.projection.runner import RunnerConfig, UmapRun


@pytest.mark.slow
@pytest.mark.timeout(600)  # a first run compiles numba code: minutes on a loaded machine
def test_real_umap_separates_three_topics() -> None:
    rng = np.random.default_rng(7)
    centroids = rng.normal(size=(3, 64))
    rows = np.concatenate([c + 0.15 * rng.normal(size=(60, 64)) for c in centroids])
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    labels = np.repeat(np.arange(3), 60)
    seen: list[tuple[str, float]] = []
    result = UmapRun(rows, 2, RunnerConfig(), progress=lambda p, f: seen.append((p, f))).wait()
    coords = result.coords
    assert coords.shape == (180, 2) and np.isfinite(coords).all()
    assert_phases_rise(seen)
    centres = np.array([coords[labels == k].mean(axis=0) for k in range(3)])
    spread = max(np.linalg.norm(coords[labels == k] - centres[k], axis=1).mean() for k in range(3))
    gaps = [np.linalg.norm(centres[a] - centres[b]) for a, b in ((0, 1), (0, 2), (1, 2))]
    assert min(gaps) > 2 * spread


def assert_phases_rise(seen: list[tuple[str, float]]) -> None:
    """Every phase in order, each once, the fraction never going back; imports and epochs
    move the bar in steps (not one jump per phase)."""
    names = [p for p, _ in seen]
    order = ["loading", "neighbours", "graph", "layout", "writing", "done"]
    assert [n for i, n in enumerate(names) if i == 0 or names[i - 1] != n] == order, names
    fractions = [f for _, f in seen]
    assert fractions == sorted(fractions)
    loading = {f for p, f in seen if p == "loading"}
    assert len(loading) == len(phases.LOAD_STEPS) + 1  # 0 and one step per finished import
    assert len({f for p, f in seen if p == "layout"}) >= 3  # epochs, not one jump
