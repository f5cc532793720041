"""An HNSW index (usearch) per partition beyond the exact range, kept beside the database.

Partitions (generation x agent) above the exact range are searched through an HNSW graph over
compact copies of the canonical vectors (int8 by default: each vector is first scaled so its
largest component is 1, which cosine ignores and int8 then uses in full). The graph proposes
candidates; the semantic channel joins them to live rows through the recall filters and
rescores them exactly from the canonical float32 vectors (`recall/vector.py`).

The graph is built from the `embeddings` table on a background thread at lowered priority,
reading through its own connection (never inside a write transaction), written beside the
database (`recall/ann_file.py`: temp name, fsync, rename, a stamp with the generation, the
highest embedding id covered and a CRC-32) and memory-mapped read-only, so its pages are
file-backed and reclaimable. Until it is ready the channel uses the binary prefilter.

Kept in step with the write path the way `matrix.py` is: embedding ids only grow (a changed
vector is a new row), so before each search the rows newer than the file are appended to a
small exact buffer (the delta, searched by one matrix product and merged with the graph's
candidates). Deleted or superseded vectors stay in the graph until the next rebuild; they cost
a candidate slot, never a wrong answer, because every candidate is joined to a live memory
with a matching content hash. When the delta outgrows `refresh_rows` or the dead share passes
`DEAD_SHARE`, the graph is updated in the background (loaded, dead keys removed, new rows
added, written again) and swapped in. A missing, torn or stale file, or a new generation, is
rebuilt from scratch; a failed write (disk full) is retried after `RETRY_AFTER_S`.

Opening a partition's file (its CRC is checked: ~670 ms at 1M vectors) happens outside the
indexes' lock, one opener per partition (the others asking for it wait for that one), so a
partition's first recall never waits behind another partition's open.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from signet_desktop.embedding.generations import Generation
from signet_desktop.embedding.priority import lower_current_thread
from signet_desktop.recall.ann_file import (
    OpenedIndex,
    open_index,
    partition_paths,
    remove_stale_files,
    usearch_index,
    write_index,
)
from signet_desktop.recall.matrix import VectorBuffer
from signet_desktop.storage.connect import Connection

if TYPE_CHECKING:
    from usearch.index import Index

log = logging.getLogger(__name__)

ANN_INDEX_KIND = "hnsw-usearch"
SCALAR = "i8"
CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = 64
REFRESH_ROWS = 20_000  # delta rows that start a background update of the graph
DEAD_SHARE = 0.1  # deleted share of the graph that starts one
RETRY_AFTER_S = 60.0
READ_CHUNK = 4096

PARTITION_ROWS = """
SELECT id, vector FROM embeddings
WHERE agent_id = :agent_id AND generation_id = :generation_id AND id > :after
ORDER BY id
"""
CHUNK_ROWS = PARTITION_ROWS + "LIMIT :chunk\n"
PARTITION_IDS = """
SELECT id FROM embeddings WHERE agent_id = :agent_id AND generation_id = :generation_id
"""
PARTITION_MAX_ID = """
SELECT MAX(id) FROM embeddings WHERE agent_id = :agent_id AND generation_id = :generation_id
"""


def scaled(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Rows scaled so the largest component is 1: same cosines, int8's whole range used."""
    peak = np.abs(vectors).max(axis=-1, keepdims=True)
    out: npt.NDArray[np.float32] = np.divide(
        vectors, peak, out=np.zeros_like(vectors), where=peak > 0
    )
    return out


@dataclass(slots=True)
class _State:
    """One partition: its graph (once built), the exact delta newer than it, build state."""

    dimensions: int
    opened: OpenedIndex | None = None
    delta: VectorBuffer = field(init=False)
    max_id: int = -1
    building: bool = False
    failed_at: float | None = None
    reason: str = "not opened yet"

    def __post_init__(self) -> None:
        self.delta = VectorBuffer(self.dimensions)


@dataclass(frozen=True, slots=True)
class AnnStatus:
    """One partition's index as status reports it."""

    generation_id: int
    agent_id: str
    ready: bool
    indexed: int  # vectors in the graph being served (0 until one is ready)
    delta: int  # vectors newer than the graph, searched exactly beside it
    building: bool
    reason: str  # why no graph is served ("" when one is)
    scalar: str | None  # how the served graph stores vectors (None: none served)
    file_bytes: int | None  # the served graph's file size


class AnnIndexes:
    """Per (generation, agent) HNSW graphs on disk, opened on first search; thread-safe."""

    def __init__(
        self,
        directory: Path,
        connect: Callable[[], Connection],
        *,
        scalar: str = SCALAR,
        refresh_rows: int = REFRESH_ROWS,
        build_threads: int = 1,
        expansion_search: int = EXPANSION_SEARCH,
    ) -> None:
        self.directory = directory
        self._connect = connect  # the calling thread's reader (the build thread gets its own)
        self._scalar = scalar
        self._refresh_rows = refresh_rows
        self._build_threads = build_threads
        self._expansion_search = expansion_search
        self._states: dict[tuple[int, str], _State] = {}
        self._opening: dict[tuple[int, str], threading.Event] = {}  # set when the open is done
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._stop = threading.Event()

    def search(
        self,
        conn: Connection,
        generation: Generation,
        agent_id: str,
        query: npt.NDArray[np.float32],
        count: int,
        live_rows: int,
    ) -> list[tuple[int, float]] | None:
        """Embedding ids of about the `count` nearest vectors (approximate cosine), best
        first; None while the partition's graph is not ready (a build is under way)."""
        state = self._state(conn, generation, agent_id)
        with self._lock:
            if state.opened is None:
                self._schedule(generation, agent_id, state)
                return None
            self._catch_up(conn, generation, agent_id, state)
            opened, delta = state.opened, state.delta.view()
            indexed = opened.stamp.count + len(delta)
            outgrown = len(delta) > max(self._refresh_rows, opened.stamp.count // 20)
            if outgrown or indexed - live_rows > DEAD_SHARE * indexed:
                self._schedule(generation, agent_id, state)
        matches = opened.index.search(scaled(query), count)
        found = [
            (int(k), 1.0 - float(d)) for k, d in zip(matches.keys, matches.distances, strict=True)
        ]
        found += delta.top(query, count)
        found.sort(key=lambda pair: -pair[1])
        return found[:count]

    def _state(self, conn: Connection, generation: Generation, agent_id: str) -> _State:
        """The partition's state, opening its file on first use outside the lock (one opener
        per partition; the others wait for it). Other generations' states are dropped."""
        key = (generation.id, agent_id)
        while True:
            with self._lock:
                state = self._states.get(key)
                if state is not None:
                    return state
                opening = self._opening.get(key)
                if opening is None:
                    opening = self._opening[key] = threading.Event()
                    break
            opening.wait()  # another thread opens it; then look again
        try:
            state = self._opened(conn, generation, agent_id)
            with self._lock:
                for other in [k for k in self._states if k[0] != generation.id]:
                    del self._states[other]
                self._states[key] = state
        finally:
            with self._lock:
                del self._opening[key]
            opening.set()
        return state

    def _opened(self, conn: Connection, generation: Generation, agent_id: str) -> _State:
        """A new state for the partition from its file, if that is sound and current."""
        state = _State(generation.dimensions)
        opened = self._open(generation, agent_id)
        newest = conn.execute(PARTITION_MAX_ID, _params(generation, agent_id)).fetchone()[0]
        if isinstance(opened, str):
            state.reason = opened
        elif opened.stamp.max_embedding_id > (newest if newest is not None else -1):
            state.reason = "the index covers vectors this database does not have (stale)"
        else:
            state.opened, state.max_id, state.reason = opened, opened.stamp.max_embedding_id, ""
        if state.reason:
            log.info("ANN index of %s/%s: %s; rebuilding", generation.id, agent_id, state.reason)
        return state

    def _catch_up(
        self, conn: Connection, generation: Generation, agent_id: str, state: _State
    ) -> None:
        """Append vectors newer than the graph and the delta (one index seek, usually empty)."""
        cursor = conn.execute(
            PARTITION_ROWS, {**_params(generation, agent_id), "after": state.max_id}
        )
        while rows := cursor.fetchmany(READ_CHUNK):
            state.delta.append([int(r[0]) for r in rows], [bytes(r[1]) for r in rows])
            state.max_id = int(rows[-1][0])

    def _schedule(self, generation: Generation, agent_id: str, state: _State) -> None:
        """Start a background build unless one runs or the last failed moments ago."""
        if state.building or self._stop.is_set():
            return
        if state.failed_at is not None and time.monotonic() - state.failed_at < RETRY_AFTER_S:
            return
        state.building = True
        threading.Thread(
            target=self._build,
            args=(generation, agent_id, state),
            name=f"ann-build-g{generation.id}",
            daemon=True,  # a kill mid-build leaves only a temporary file, removed later
        ).start()

    def _build(self, generation: Generation, agent_id: str, state: _State) -> None:
        lower_current_thread()
        started = time.perf_counter()
        try:
            opened = self._write(generation, agent_id, state.opened)
        except Exception as exc:  # disk full, a closed database: keep serving what we have
            log.warning("ANN index build of %s/%s failed: %s", generation.id, agent_id, exc)
            with self._lock:
                state.building, state.failed_at, state.reason = False, time.monotonic(), str(exc)
                self._idle.notify_all()
            return
        with self._lock:
            if opened is not None:
                self._swap(state, opened)
            state.building = False
            self._idle.notify_all()
        if opened is not None:  # None: stopped by close
            log.info(
                "ANN index of %s/%s: %s vectors in %.1f s",
                generation.id, agent_id, opened.stamp.count, time.perf_counter() - started,
            )  # fmt: skip

    def _swap(self, state: _State, opened: OpenedIndex) -> None:
        """Serve the new graph; keep in the delta only what is newer than it."""
        old = state.delta.view()
        newer = old.ids > opened.stamp.max_embedding_id
        state.delta = VectorBuffer(state.dimensions)
        if newer.any():
            rows = old.vectors[newer]
            state.delta.append([int(i) for i in old.ids[newer]], [r.tobytes() for r in rows])
        state.opened, state.failed_at, state.reason = opened, None, ""
        state.max_id = max(state.max_id, opened.stamp.max_embedding_id)

    def _write(
        self, generation: Generation, agent_id: str, base: OpenedIndex | None
    ) -> OpenedIndex | None:
        """Build (or update `base`) from the canonical rows, persist it, map it; None if
        stopped. Runs on the build thread with that thread's own reader connection."""
        conn = self._connect()
        params = _params(generation, agent_id)
        index, after = self._new_index(generation.dimensions), -1
        if base is not None:
            index_path, _ = partition_paths(self.directory, generation.id, agent_id)
            restored = usearch_index().restore(str(index_path), view=False)
            if restored is not None:
                live = np.fromiter(
                    (int(r[0]) for r in conn.execute(PARTITION_IDS, params)), np.int64
                )
                keys = np.asarray(restored.keys, dtype=np.uint64)
                dead = keys[~np.isin(keys.astype(np.int64), live)]
                if len(dead):
                    restored.remove(dead)
                index, after = restored, base.stamp.max_embedding_id
        max_id = after
        # One short statement per chunk: a build of minutes holds no read snapshot that long
        # (it would keep the WAL from checkpointing); rows added meanwhile are simply included.
        while rows := conn.execute(
            CHUNK_ROWS, {**params, "after": max_id, "chunk": READ_CHUNK}
        ).fetchall():
            if self._stop.is_set():
                return None
            keys_block = np.array([int(r[0]) for r in rows], dtype=np.uint64)
            block = np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype=np.float32)
            index.add(keys_block, scaled(block.reshape(len(rows), -1)), threads=self._build_threads)
            max_id = int(rows[-1][0])
        write_index(index, self.directory, generation.id, agent_id, max_id)
        del index
        remove_stale_files(self.directory, generation.id)
        opened = self._open(generation, agent_id)
        if isinstance(opened, str):
            raise OSError(f"the index just written does not open: {opened}")
        return opened

    def _open(self, generation: Generation, agent_id: str) -> OpenedIndex | str:
        opened = open_index(self.directory, generation.id, agent_id, generation.dimensions)
        if not isinstance(opened, str):
            opened.index.expansion_search = self._expansion_search  # type: ignore[misc]  # a setter
        return opened

    def _new_index(self, dimensions: int) -> Index:
        return usearch_index()(
            ndim=dimensions,
            metric="cos",
            dtype=self._scalar,
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
            expansion_search=self._expansion_search,
        )

    def wait(self, timeout: float = 30.0) -> bool:
        """Block until no build runs (tests, benches); False on timeout."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while any(s.building for s in self._states.values()):
                left = deadline - time.monotonic()
                if left <= 0 or not self._idle.wait(left):
                    return False
        return True

    def statuses(self) -> list[AnnStatus]:
        """Every partition a search has opened since start, as status reports it."""
        with self._lock:
            return [
                AnnStatus(
                    generation_id=gen,
                    agent_id=agent,
                    ready=s.opened is not None,
                    indexed=s.opened.stamp.count if s.opened is not None else 0,
                    delta=len(s.delta.view()),
                    building=s.building,
                    reason=s.reason,
                    scalar=s.opened.stamp.scalar if s.opened is not None else None,
                    file_bytes=s.opened.stamp.size if s.opened is not None else None,
                )
                for (gen, agent), s in self._states.items()
            ]

    def close(self) -> None:
        """Stop builds at their next chunk (their temporary files are removed at next open)."""
        self._stop.set()


def _params(generation: Generation, agent_id: str) -> dict[str, object]:
    return {"agent_id": agent_id, "generation_id": generation.id}
