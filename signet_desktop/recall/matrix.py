"""An in-memory float32 matrix of each partition's canonical vectors, for exact semantic search.

sqlite-vec's float KNN on this build has no SIMD (~90 ms at 100k x 384); one BLAS
matrix-vector product over the same vectors in numpy takes ~8 ms. So up to
`MATRIX_MAX_ROWS` vectors per (generation, agent) the semantic channel scores every vector
exactly here; the canonical `embeddings` table stays the source and sqlite-vec the derived
mirror the spec names.

The copy is kept in step the way `codes.py` keeps the binary codes: embedding ids only grow (a
changed vector is a new row), so before each search the rows with a higher id are appended
(one index seek on `idx_embeddings_agent_generation`, usually empty) into a buffer with
spare capacity, so an append never copies the whole matrix. Rows whose embedding was deleted
or superseded linger until the periodic reload; they cost a candidate slot, never a wrong
answer, because candidates are joined back to live memories with a matching content hash.

Memory: 4 bytes x dimensions per vector (~154 MB per 100k MiniLM vectors), plus its int8 codes
(1 byte x dimensions and 12 bytes of scale and bounds), loaded on the first search of a
partition, never for an empty workspace.

From `SCREEN_MIN_ROWS` rows on, a search screens the int8 codes first and rescores exactly
only the rows that can still make the top (`screen.py`: a bound per row proves the rest
cannot): 100k x 384 real MiniLM vectors, 40 best: 2.6 ms p50 / 3.3 p95 on one core, against
6.8 for the float32 scan (which an earlier build split over two threads: ~3.9 ms wall, both
cores). The result is the same exact top `count` (ties ordered by row), never an
approximation.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from signet_desktop.embedding.generations import Generation
from signet_desktop.recall.screen import CodedRows, code_rows, screened_top
from signet_desktop.storage.connect import Connection

MATRIX_MAX_ROWS = 200_000
RELOAD_AFTER_S = 600.0
_MIN_CAPACITY = 1024
LOAD_CHUNK = 4096
SCREEN_MIN_ROWS = 4096  # below this the float32 scan alone is as fast


def _best(
    vectors: npt.NDArray[np.float32], query: npt.NDArray[np.float32], count: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Rows and cosines of the `count` best rows of `vectors`, unordered."""
    sims = vectors @ query
    if count < len(sims):
        chosen = np.argpartition(-sims, count - 1)[:count]
    else:
        chosen = np.arange(len(sims))
    return chosen.astype(np.int64), sims[chosen]


NEWER_VECTORS = """
SELECT id, vector FROM embeddings
WHERE agent_id = :agent_id AND generation_id = :generation_id AND id > :after
ORDER BY id
"""


@dataclass(frozen=True, slots=True)
class MatrixView:
    """A consistent snapshot: the first `len(ids)` rows of the buffer (and of their codes;
    a view without codes scans the float32 rows alone)."""

    ids: npt.NDArray[np.int64]
    vectors: npt.NDArray[np.float32]
    coded: CodedRows | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def top(self, query: npt.NDArray[np.float32], count: int) -> list[tuple[int, float]]:
        """Embedding ids of the `count` best cosines (unit vectors: dot products), best first."""
        rows = len(self.ids)
        if not rows or count <= 0:
            return []
        if self.coded is not None and rows >= SCREEN_MIN_ROWS:
            chosen, sims = screened_top(self.vectors, self.coded, query, count)
        else:
            chosen, sims = _best(self.vectors, query, count)
        order = np.lexsort((chosen, -sims))[:count]  # best cosine first, then the earlier row
        return [(int(self.ids[chosen[i]]), float(sims[i])) for i in order]

    def cosines(
        self, embedding_ids: Sequence[int], query: npt.NDArray[np.float32]
    ) -> dict[int, float]:
        """Cosines of the given embeddings that this view holds (others are left out).

        Ids only grow and are appended in order, so the view's ids are sorted: one binary
        search per id, then one product for all of them.
        """
        if not len(self.ids) or not embedding_ids:
            return {}
        wanted = np.asarray(embedding_ids, dtype=np.int64)
        rows = np.searchsorted(self.ids, wanted)
        inside = rows < len(self.ids)
        found = inside.copy()
        found[inside] = self.ids[rows[inside]] == wanted[inside]
        if not found.any():
            return {}
        sims = self.vectors[rows[found]] @ query
        return {int(e): float(s) for e, s in zip(wanted[found], sims, strict=True)}


class VectorBuffer:
    """A growable buffer of one partition's vectors (appends under the owner's lock)."""

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions
        self.ids = np.zeros(0, dtype=np.int64)
        self.vectors = np.zeros((0, dimensions), dtype=np.float32)
        self.coded = code_rows(self.vectors)
        self.size = 0
        self.max_id = -1
        self.loaded_at = time.monotonic()

    def reserve(self, rows: int) -> None:
        """Room for `rows` vectors in total (one allocation; never shrinks)."""
        if rows <= len(self.ids):
            return
        grown_ids = np.zeros(rows, dtype=np.int64)
        grown = np.empty((rows, self.dimensions), dtype=np.float32)
        grown_ids[: self.size] = self.ids[: self.size]
        grown[: self.size] = self.vectors[: self.size]
        coded = CodedRows.empty(rows, self.dimensions)
        coded.put(0, self.coded.head(self.size))
        self.ids, self.vectors, self.coded = grown_ids, grown, coded

    def append(self, ids: list[int], blobs: list[bytes]) -> None:
        count = len(ids)
        if not count:
            return
        needed = self.size + count
        if needed > len(self.ids):
            self.reserve(max(_MIN_CAPACITY, needed, int(len(self.ids) * 1.5)))
        block = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(count, self.dimensions)
        self.vectors[self.size : needed] = block
        self.coded.put(self.size, code_rows(block))
        self.ids[self.size : needed] = ids
        self.size = needed
        self.max_id = ids[-1]

    def view(self) -> MatrixView:
        # Rows past `size` may be written by a later append; the snapshot never sees them.
        size = self.size
        return MatrixView(self.ids[:size], self.vectors[:size], self.coded.head(size))


class VectorMatrices:
    """Per (generation, agent) vector matrices, refreshed incrementally; thread-safe."""

    def __init__(self, max_rows: int = MATRIX_MAX_ROWS) -> None:
        self.max_rows = max_rows
        self._parts: dict[tuple[int, str], VectorBuffer] = {}
        self._lock = threading.Lock()

    def current(
        self, conn: Connection, generation: Generation, agent_id: str, expected_rows: int = 0
    ) -> MatrixView:
        """The partition's vectors as of now (loads or appends what is new first).

        A first load reserves `expected_rows` plus a tenth and reads in chunks, so loading
        100k vectors holds ~170 MB, not the matrix plus every row's bytes at once.
        """
        key = (generation.id, agent_id)
        with self._lock:
            part = self._parts.get(key)
            if part is None or time.monotonic() - part.loaded_at > RELOAD_AFTER_S:
                part = VectorBuffer(generation.dimensions)
                part.reserve(expected_rows + expected_rows // 10)
                self._parts[key] = part
            cursor = conn.execute(
                NEWER_VECTORS,
                {"agent_id": agent_id, "generation_id": generation.id, "after": part.max_id},
            )
            while rows := cursor.fetchmany(LOAD_CHUNK):
                part.append([int(r[0]) for r in rows], [bytes(r[1]) for r in rows])
            return part.view()

    def loaded(self, generation: Generation, agent_id: str) -> MatrixView | None:
        """The partition's vectors as last refreshed, without reading the database (None:
        not loaded). Fresh enough for rows a search just ranked; a newer row is simply absent.
        """
        with self._lock:
            part = self._parts.get((generation.id, agent_id))
            return part.view() if part is not None else None

    def drop(self, generation_id: int | None = None) -> None:
        """Forget loaded partitions (all, or one generation's): the next search reloads."""
        with self._lock:
            for key in [k for k in self._parts if generation_id in (None, k[0])]:
                del self._parts[key]

    def loaded_rows(self) -> int:
        """Vectors held in memory across partitions (for status and the RSS report)."""
        with self._lock:
            return sum(part.size for part in self._parts.values())
