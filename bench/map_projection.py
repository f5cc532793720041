"""The embedding map's layouts: PCA on the GUI side's budget, UMAP off the GUI thread.

    uv run python bench/map_projection.py [--points 10000] [--dims 384] [--topics 12]
                                         [--repeats 5] [--skip-umap]

Vectors are synthetic and clustered like a workspace of topics: `--topics` centroids drawn
from a standard normal in `--dims` dimensions, each point a centroid plus N(0, 0.35²) noise per
coordinate (topic sizes vary 1:3), rows L2-normalised as the embedders store them, float32.
Rows:
- PCA (`projection/layout.py: pca_layout`, what the Map pane shows at once): best and median
  of `--repeats` runs at 1k, 5k and `--points` points. Target ≤ 1 s at 10k.
- Reading the points back (`projection/source.py: load_vectors`) from a real database at
  `--points` rows, since the pane pays that too.
- UMAP through the real runner (`projection/runner.py`): a separate process, as the app runs
  it; wall time split into the child's phases (first progress line = Python + numpy start,
  `import umap` with numba compile, the neighbour graph, the layout epochs). The GUI thread
  never waits on any of it. Also the neighbourhood purity of both layouts (share of each
  point's 10 nearest layout neighbours that share its topic), to say what UMAP buys.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from signet_desktop.embedding.generations import register_generation
from signet_desktop.embedding.vectors import VectorWrite, store_vectors
from signet_desktop.projection.layout import pca_layout
from signet_desktop.projection.runner import RunnerConfig, UmapRun
from signet_desktop.projection.source import load_vectors
from signet_desktop.storage.database import open_database

NOISE = 0.35


def clustered(points: int, dims: int, topics: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(matrix, topic labels): see the module docstring for how they are made."""
    rng = np.random.default_rng(seed)
    centroids = rng.normal(size=(topics, dims))
    weights = rng.uniform(1, 3, size=topics)
    labels = rng.choice(topics, size=points, p=weights / weights.sum())
    rows = centroids[labels] + rng.normal(scale=NOISE, size=(points, dims))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype(np.float32), labels


def timed(fn: object, repeats: int) -> list[float]:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()  # type: ignore[operator]
        samples.append(time.perf_counter() - started)
    return samples


def row(name: str, samples: list[float]) -> None:
    print(f"{name:<44} {min(samples):>8.3f} {statistics.median(samples):>9.3f}")


def purity(coords: npt.NDArray[np.floating], labels: np.ndarray, k: int = 10) -> float:
    """Mean share of each point's k nearest layout neighbours with the same topic (sampled)."""
    rng = np.random.default_rng(1)
    sample = rng.choice(len(coords), size=min(1000, len(coords)), replace=False)
    scores = []
    for i in sample:
        distances = np.linalg.norm(coords - coords[i], axis=1)
        neighbours = np.argsort(distances)[1 : k + 1]
        scores.append(float(np.mean(labels[neighbours] == labels[i])))
    return float(np.mean(scores))


def read_back(matrix: np.ndarray, repeats: int) -> list[float]:
    """load_vectors over a real database holding `matrix` as one agent's memories."""
    with tempfile.TemporaryDirectory() as tmp:
        db = open_database(Path(tmp) / "bench.db", with_vec=False)
        now = "2026-01-01T00:00:00.000Z"
        with db.write() as conn:
            generation = register_generation(
                conn, provider="bench", model="bench", dimensions=matrix.shape[1]
            )
            for i in range(matrix.shape[0]):
                conn.execute(
                    "INSERT INTO memories (id, agent_id, type, content, normalized_content, "
                    "content_hash, tags, created_at, updated_at) "
                    "VALUES (:id, 'default', 'fact', :c, :c, :h, '[]', :t, :t)",
                    {"id": f"m{i}", "c": f"memory {i}", "h": f"h{i}", "t": now},
                )
            writes = (
                VectorWrite("default", f"m{i}", f"h{i}", matrix[i].tobytes())
                for i in range(matrix.shape[0])
            )
            store_vectors(conn, generation, writes, mirror=False)
        samples = timed(lambda: load_vectors(db.reader(), generation, "default"), repeats)
        db.close()
    return samples


def umap_run(matrix: np.ndarray) -> tuple[np.ndarray, dict[str, float], float]:
    """The real runner: coords, seconds at which each phase was first reported, wall time."""
    started = time.perf_counter()
    phases: dict[str, float] = {}

    def progress(phase: str, fraction: float) -> None:
        phases.setdefault(phase, time.perf_counter() - started)

    result = UmapRun(matrix, 2, RunnerConfig(), progress=progress).wait()
    return result.coords, phases, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=10_000)
    parser.add_argument("--dims", type=int, default=384)
    parser.add_argument("--topics", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-umap", action="store_true")
    args = parser.parse_args()
    matrix, labels = clustered(args.points, args.dims, args.topics)
    print(f"map projection: {args.points} x {args.dims} float32, {args.topics} topics,")
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start\n")
    header = f"{'step':<44} {'best s':>8} {'median s':>9}"
    print(header)
    print("-" * len(header))
    for count in sorted({1000, 5000, args.points}):
        if count > args.points:
            continue
        samples = timed(lambda n=count: pca_layout(matrix[:n], 2), args.repeats)
        row(f"PCA, {count:,} points", samples)
    samples = read_back(matrix, max(1, args.repeats // 2))
    row(f"read {args.points:,} points back (load_vectors)", samples)
    pca = pca_layout(matrix, 2)
    print(f"\nneighbourhood purity (10-NN share of same topic): PCA {purity(pca, labels):.3f}")
    if args.skip_umap:
        return
    coords, phases, wall = umap_run(matrix)
    print(f"UMAP purity: {purity(coords, labels):.3f}\n")
    print(f"{'UMAP (worker process, off the GUI thread)':<44} {'at s':>8}")
    print("-" * 53)
    for phase in ("loading", "neighbours", "layout", "done"):
        if phase in phases:
            print(f"{'  first ' + phase + ' report':<44} {phases[phase]:>8.1f}")
    print(f"{f'UMAP, {args.points:,} points, wall':<44} {wall:>8.1f}")
    print(f"\nload average {os.getloadavg()[0]:.2f} at end (other work on the machine skews rows)")


if __name__ == "__main__":
    main()
