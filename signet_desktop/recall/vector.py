"""The semantic channel: query embedding, exact in-memory search (or vec0), filters.

Rule for which vectors a query may meet: only the generation whose (model, dimensions) equal
the configured embedder's, and only once that generation is `active`. While a new model's
generation is still building, the semantic channel is skipped and the result says why
(`vectorCompleteness: "unavailable"`); vectors of two models are never compared.

With sqlite-vec loaded, partitions (generation x agent) up to `exact_max_rows` (200k) are
searched exactly in memory (`recall/matrix.py`: a numpy matrix of the canonical vectors kept
in step with the table; `vectorIndex: "exact-in-memory"`); candidates join `memories`
through the shared filter fragments. Above that, an HNSW graph (`recall/ann.py`, when given)
proposes `ann_candidates`, joined to live rows the same way and rescored exactly from the
canonical float vectors (`vectorIndex: "hnsw-usearch"`); while the graph is being built, the
Hamming distance to every binary code of the partition (`recall/codes.py`) keeps the best
`PREFILTER_CANDIDATES`, rescored the same way (`vectorIndex: "binary-prefilter"`). Both are
approximations, reported as `vectorCompleteness: "approximate"`. With `in_memory`
off, exact search is vec0's float KNN (no SIMD in this build: ~90 ms at 100k x 384). Without
sqlite-vec it scans the newest `fallback_window` canonical vectors and says so
(`vectorCompleteness: "recent-window"`, `searchedWindow`).

Memories without a vector yet (they follow a remember on a background thread) are invisible
to the search itself; the database's counters say how many the agent has, and the outcome's
`fill` lets the engine hand the other channels' candidates back: those without a vector are
embedded within a bound and scored like the rest (`recall/vector_gaps.py`, which also decides
`complete` / `candidates-complete` / `partial`).

As the engine's `semantic` channel it starts the query embedding on the engine's pool before
the other channels run (stage `embed_query`), and waits for it at most `embed_timeout_s`; a
slow or failing embedder leaves the channel unavailable with a note, never the recall failed.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Executor, Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from signet_desktop.domain.recall import ChannelEvidence, RecallFilters
from signet_desktop.embedding.generations import Generation, find_generation
from signet_desktop.embedding.provider import EmbeddingError, EmbeddingProvider
from signet_desktop.embedding.vectors import blob_matrix
from signet_desktop.recall.ann import ANN_INDEX_KIND, AnnIndexes
from signet_desktop.recall.calibration import Calibration, calibration_for
from signet_desktop.recall.channels import (
    ChannelOutcome,
    ChannelRequest,
    Fill,
    Finish,
    StageClock,
)
from signet_desktop.recall.codes import BinaryCodes
from signet_desktop.recall.filters import filter_sql
from signet_desktop.recall.knn import SEMANTIC_TOP_K, exact_knn, nearest
from signet_desktop.recall.matrix import MATRIX_MAX_ROWS, MatrixView, VectorMatrices
from signet_desktop.recall.vector_gaps import VectorGaps, agent_missing, completeness
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres
from signet_desktop.storage.guard import assert_provider_call_allowed

log = logging.getLogger(__name__)

DEFAULT_EMBED_TIMEOUT_S = 5.0
NOT_CONFIGURED_NOTE = "semantic recall is not configured"
EXACT_KNN_MAX_ROWS = MATRIX_MAX_ROWS
PREFILTER_CANDIDATES = 2000
ANN_CANDIDATES = 200  # graph candidates rescored exactly (docs/BENCHMARKS.md, "Approximate index")
ANN_MAX_CANDIDATES = 25_600  # filters thinner than this widen through the binary prefilter
DEFAULT_FALLBACK_WINDOW = 10_000
PARTITION_SIZE_TTL_S = 60.0
# Cosines of all-MiniLM-L6-v2 between unrelated texts (LoCoMo questions against other
# conversations' turns) sit at 0.12 median, 0.28 at the 95th percentile: at or below the floor
# a cosine says nothing, and the channel scores it 0 (docs/RECALL.md, "Calibrated scores").
SEMANTIC_FLOOR = 0.3
# What each strategy searched, as `vectorIndex` reports it.
VECTOR_INDEX = {
    "matrix": "exact-in-memory",
    "exact": "exact-vec0",
    "prefilter": "binary-prefilter",
    "ann": ANN_INDEX_KIND,
    "recent-window": "recent-window",
    "hnsw": "hnsw-pgvector",  # PostgreSQL: the generation's HNSW index, exact order
}

# The live memories behind a list of embedding ids (`:ids`, JSON), under the recall filters.
_BY_EMBEDDING_IDS = """
FROM embeddings e
JOIN memories m ON m.id = e.source_id
WHERE e.id IN (SELECT value FROM json_each(:ids))
  AND +e.source_type = 'memory' AND e.content_hash = m.content_hash AND {filters}
"""
MATRIX_CANDIDATES = "SELECT m.id AS id, e.id AS embedding_id" + _BY_EMBEDDING_IDS
CANDIDATE_ROWS = "SELECT m.id AS id, e.vector AS vector" + _BY_EMBEDDING_IDS

RECENT_WINDOW = """
SELECT m.id AS id, e.vector AS vector
FROM embeddings e
JOIN memories m ON m.id = e.source_id
WHERE e.generation_id = :generation_id AND e.agent_id = :agent_id
  AND e.source_type = 'memory' AND e.content_hash = m.content_hash AND {filters}
ORDER BY e.id DESC
LIMIT :window
"""

PARTITION_SIZE = """
SELECT COUNT(*) FROM embeddings WHERE agent_id = :agent_id AND generation_id = :generation_id
"""


@dataclass(frozen=True, slots=True)
class SemanticHit:
    """A memory id with its semantic evidence (score = `calibrated(cosine)`, raw = cosine)."""

    memory_id: str
    evidence: ChannelEvidence


@dataclass(frozen=True, slots=True)
class SemanticOutcome:
    """The channel's hits and how complete its view of the vectors was."""

    hits: list[SemanticHit]
    # complete | approximate | partial | candidates-complete | recent-window | unavailable
    completeness: str
    searched_window: int | None = None
    note: str | None = None
    strategy: str | None = None  # matrix | exact | ann | prefilter | recent-window
    waiting: int = 0  # the agent's live memories without a vector in the generation
    search_note: str | None = None  # the part of `note` about the search itself


def unavailable(note: str) -> SemanticOutcome:
    """The outcome when the semantic channel cannot run, with the reason a person reads."""
    return SemanticOutcome([], "unavailable", None, note, None)


def channel_outcome(
    outcome: SemanticOutcome, calibration: Calibration | None = None, fill: Fill | None = None
) -> ChannelOutcome:
    """The semantic outcome as the engine reads every channel's (`calibration`: the model's)."""
    return ChannelOutcome(
        outcome.hits,
        available=outcome.completeness != "unavailable",
        completeness=outcome.completeness,
        searched_window=outcome.searched_window,
        note=outcome.note,
        index=VECTOR_INDEX.get(outcome.strategy or ""),
        calibration=calibration,
        fill=fill,
    )


@dataclass(frozen=True, slots=True)
class _Embedded:
    vector: npt.NDArray[np.float32] | None
    duration_ms: float
    error: str | None
    # PostgreSQL: the search already ran on the pool thread (`_embed_and_search`), its time
    found: SemanticOutcome | None = None
    search_ms: float = 0.0
    # SQLite's in-memory matrix: its scan already ran there (`_embed_and_scan`), its time
    scanned: _Scanned | None = None


@dataclass(frozen=True, slots=True)
class _Scanned:
    """The matrix scan done beside BM25: the view it read, its best rows, its time."""

    view: MatrixView
    scored: list[tuple[int, float]]
    scan_ms: float


def _first_count(k: int) -> int:
    """How many of the matrix's best rows the first round joins to live memories."""
    return max(2 * k, k + 20)


def _matrix_rows(
    conn: Connection,
    view: MatrixView,
    query: npt.NDArray[np.float32],
    where: str,
    params: dict[str, object],
    k: int,
    scored: list[tuple[int, float]],
) -> list[tuple[str, float]]:
    """The best `k` live memories within the filters from the view's best rows `scored`;
    filters, deleted and superseded rows thin them, so it widens (4x, rescanning) until `k`
    survive or the view is exhausted."""
    sql = MATRIX_CANDIDATES.format(filters=where)
    count = len(scored)
    while True:
        ids = [embedding_id for embedding_id, _ in scored]
        rows = conn.execute(sql, {**params, "ids": json.dumps(ids)}).fetchall()
        if len(rows) >= k or count >= len(view):
            live = {int(r["embedding_id"]): str(r["id"]) for r in rows}
            ranked = [(live[eid], sim) for eid, sim in scored if eid in live]
            return ranked[:k]
        count *= 4
        scored = view.top(query, count)


@dataclass(frozen=True, slots=True)
class UnconfiguredSemantic:
    """Stands in for the `semantic` channel when none is configured: finds nothing, says so."""

    name: str = "semantic"

    def start(self, conn: Connection, request: ChannelRequest, pool: Executor) -> Finish:
        """Every query: unavailable, with the note."""
        return lambda clock: channel_outcome(unavailable(NOT_CONFIGURED_NOTE))


def calibrated(cosine: float, floor: float = SEMANTIC_FLOOR) -> float:
    """A cosine as the channel's score: 0 up to `floor` (noise), then linear up to 1 at 1."""
    return min(1.0, max(0.0, (cosine - floor) / (1.0 - floor)))


def _hits(ranked: list[tuple[str, float]]) -> list[SemanticHit]:
    return [
        SemanticHit(mid, ChannelEvidence(score=calibrated(sim), rank=i + 1, raw=sim))
        for i, (mid, sim) in enumerate(ranked)
    ]


def _rescore(
    rows: Sequence[Any], query: npt.NDArray[np.float32], dims: int, k: int
) -> list[tuple[str, float]]:
    """Exact cosine of candidate rows against the unit query; top k, best first."""
    if not rows:
        return []
    ids = [str(r["id"]) for r in rows]
    matrix = blob_matrix([bytes(r["vector"]) for r in rows], dims)
    sims = matrix @ query
    order = np.argsort(-sims, kind="stable")[:k]
    return [(ids[i], float(sims[i])) for i in order]


class SemanticChannel:
    """The `semantic` channel: embeds a query and ranks memories by cosine similarity."""

    name = "semantic"

    def __init__(
        self,
        embedder: EmbeddingProvider | None,
        *,
        vec_available: bool,
        fallback_window: int = DEFAULT_FALLBACK_WINDOW,
        exact_max_rows: int = EXACT_KNN_MAX_ROWS,
        prefilter_candidates: int = PREFILTER_CANDIDATES,
        embed_timeout_s: float = DEFAULT_EMBED_TIMEOUT_S,
        gaps: VectorGaps | None = None,
        in_memory: bool = True,
        ann: AnnIndexes | None = None,
        ann_candidates: int = ANN_CANDIDATES,
    ) -> None:
        self.embedder = embedder
        # Embeds the other channels' candidates that have no vector yet (None: never).
        self._gaps = gaps
        self.embed_timeout_s = embed_timeout_s
        self._vec = vec_available
        self._window = fallback_window
        self._exact_max_rows = exact_max_rows
        self._prefilter_candidates = prefilter_candidates
        self._sizes: dict[tuple[str, int], tuple[float, int]] = {}
        self._sizes_lock = threading.Lock()
        self._codes = BinaryCodes()
        # Above `exact_max_rows`: the HNSW graph when given and built, else the prefilter.
        self._ann = ann
        self._ann_candidates = ann_candidates
        # Exact search up to `exact_max_rows`: a numpy matrix, or vec0 KNN when switched off.
        self._matrices = VectorMatrices(exact_max_rows) if in_memory else None

    def loaded_matrix(self, generation: Generation, agent_id: str) -> MatrixView | None:
        """The in-memory vectors of the agent's partition as the last search left them (None:
        not held in memory). Other channels score memories from it instead of their blobs."""
        if self._matrices is None:
            return None
        return self._matrices.loaded(generation, agent_id)

    def generation(self, conn: Connection) -> Generation | str:
        """The generation this embedder's queries may search, or why there is none."""
        if self.embedder is None:
            return "no embedder is configured (embedding.provider: none)"
        model, dims = self.embedder.model, self.embedder.dimensions
        found = find_generation(conn, model, dims)
        if found is None:
            return f"no vectors exist yet for {model} ({dims}-d)"
        if found.status != "active":
            return (
                f"vectors for {model} ({dims}-d) are being rebuilt (generation {found.id} is "
                f"{found.status}); semantic recall resumes when re-embedding completes"
            )
        return found

    def start(self, conn: Connection, request: ChannelRequest, pool: Executor) -> Finish:
        """Find the generation and submit the query embedding to `pool` (caller's thread)."""
        target = self.generation(conn)
        if isinstance(target, str):
            outcome = channel_outcome(unavailable(target))
            return lambda clock: outcome
        # The embedding runs on a pool thread, so the caller's thread is checked here.
        assert_provider_call_allowed("recall query embedding")
        if is_postgres(conn):
            # Its reader takes each statement on a pooled connection of its own, so the
            # vector search follows the embedding on the pool thread while BM25 runs here.
            pending = pool.submit(self._embed_and_search, conn, target, request)
        elif (matrix := self._matrix_view(conn, target, request.agent_id)) is not None:
            # The matrix is refreshed here (SQLite's connection stays on this thread); its
            # scan needs no connection, so it follows the embedding there, beside BM25.
            pending = pool.submit(self._embed_and_scan, request.text, matrix, request.k)
        else:
            pending = pool.submit(self._embed, request.text)

        def finish(clock: StageClock) -> ChannelOutcome:
            outcome, query = self._finish(conn, target, request, pending, clock)
            calibration = calibration_for(target.model)
            fill = None
            if query is not None and self._gaps is not None:
                fill = self._filler(conn, target, query, request.k, outcome, calibration)
            return channel_outcome(outcome, calibration, fill)

        return finish

    def _filler(
        self,
        conn: Connection,
        target: Generation,
        query: npt.NDArray[np.float32],
        k: int,
        outcome: SemanticOutcome,
        calibration: Calibration | None,
    ) -> Fill:
        """The second look (`ChannelOutcome.fill`): candidates without a vector, embedded."""
        gaps = self._gaps
        assert gaps is not None

        def fill(candidates: Sequence[str], clock: StageClock) -> ChannelOutcome:
            if not outcome.waiting or not candidates:  # nothing missing, or nothing to check
                return channel_outcome(outcome, calibration)
            seen = {hit.memory_id for hit in outcome.hits}
            todo = [mid for mid in candidates if mid not in seen]
            with clock.stage("embed_candidates"):
                done = gaps.fill(conn, target, query, todo)
            ranked = [(hit.memory_id, hit.evidence.raw) for hit in outcome.hits]
            ranked = sorted(ranked + done.scored, key=lambda pair: -pair[1])[:k]
            base = "approximate" if outcome.strategy in ("ann", "prefilter") else "complete"
            state, note = completeness(base, outcome.waiting, done)
            notes = "; ".join(part for part in (outcome.search_note, note) if part) or None
            filled = SemanticOutcome(
                _hits(ranked), state, None, notes, outcome.strategy, outcome.waiting
            )
            return channel_outcome(filled, calibration)

        return fill

    def _embed(self, text: str) -> _Embedded:
        started = time.perf_counter()
        try:
            vector = self.embed_query(text)
            return _Embedded(vector, (time.perf_counter() - started) * 1000, None)
        except EmbeddingError as exc:
            log.warning("query embedding failed: %s", exc)
            return _Embedded(None, (time.perf_counter() - started) * 1000, str(exc))

    def _embed_and_search(
        self, conn: Connection, target: Generation, request: ChannelRequest
    ) -> _Embedded:
        embedded = self._embed(request.text)
        if embedded.vector is None:
            return embedded
        started = time.perf_counter()
        found = self.search(
            conn, target, embedded.vector, request.agent_id, request.filters, k=request.k
        )
        ms = (time.perf_counter() - started) * 1000
        return _Embedded(embedded.vector, embedded.duration_ms, None, found, ms)

    def _matrix_view(
        self, conn: Connection, target: Generation, agent_id: str
    ) -> MatrixView | None:
        """The partition's refreshed matrix when `search` would scan it, else None."""
        if not self._vec or self._matrices is None:
            return None
        size = self._partition_size(conn, target, agent_id)
        if size > self._exact_max_rows:
            return None
        return self._matrices.current(conn, target, agent_id, size)

    def _embed_and_scan(self, text: str, view: MatrixView, k: int) -> _Embedded:
        embedded = self._embed(text)
        if embedded.vector is None:
            return embedded
        started = time.perf_counter()
        scored = view.top(embedded.vector, _first_count(k))
        scanned = _Scanned(view, scored, (time.perf_counter() - started) * 1000)
        return _Embedded(embedded.vector, embedded.duration_ms, None, scanned=scanned)

    def _finish(
        self,
        conn: Connection,
        target: Generation,
        request: ChannelRequest,
        pending: Future[_Embedded],
        clock: StageClock,
    ) -> tuple[SemanticOutcome, npt.NDArray[np.float32] | None]:
        """The search's outcome and the query vector (None when the embedder failed)."""
        waited = time.perf_counter()
        try:
            embedded = pending.result(timeout=self.embed_timeout_s)
        except FutureTimeout:
            clock.add("embed_query", (time.perf_counter() - waited) * 1000)
            return unavailable(
                f"the embedder did not answer within {self.embed_timeout_s:g} s; "
                "results are lexical only"
            ), None
        clock.add("embed_query", embedded.duration_ms)
        if embedded.vector is None:
            note = f"the embedder failed ({embedded.error}); results are lexical only"
            return unavailable(note), None
        if embedded.found is not None:
            clock.add(self.name, embedded.search_ms)
            return embedded.found, embedded.vector
        if embedded.scanned is not None:
            started = time.perf_counter()
            found = self._scanned_outcome(conn, target, request, embedded.vector, embedded.scanned)
            ms = (time.perf_counter() - started) * 1000
            clock.add(self.name, embedded.scanned.scan_ms + ms)
            return found, embedded.vector
        with clock.stage(self.name):
            found = self.search(
                conn, target, embedded.vector, request.agent_id, request.filters, k=request.k
            )
        return found, embedded.vector

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """The unit query vector (raises EmbeddingError; never inside a write transaction)."""
        if self.embedder is None:
            raise RuntimeError("no embedder configured")
        return np.ascontiguousarray(self.embedder.embed([text])[0], dtype=np.float32)

    def search(
        self,
        conn: Connection,
        generation: Generation,
        query: npt.NDArray[np.float32],
        agent_id: str,
        filters: RecallFilters,
        k: int = SEMANTIC_TOP_K,
    ) -> SemanticOutcome:
        """Top-k memories by cosine similarity within the agent scope and filters.

        PostgreSQL: the generation's HNSW index answers (`knn.nearest`), exact distance order
        (iterative scan); no in-process matrix, graph file or binary codes there."""
        if is_postgres(conn):
            ranked = nearest(conn, generation, query, agent_id, filters, k)
            return self._counted(conn, generation, ranked, agent_id, "hnsw")
        where, params = filter_sql(agent_id, filters)
        params = {**params, "agent_id": agent_id, "query": query.tobytes()}
        if not self._vec:
            return self._recent_window(conn, generation, query, where, params, k)
        size = self._partition_size(conn, generation, agent_id)
        note = None
        if size > self._exact_max_rows and self._ann is not None:
            found = self._approximate(conn, generation, query, where, params, k, size)
            if not isinstance(found, str):
                return self._counted(conn, generation, found, agent_id, "ann")
            note = found
        if size > self._exact_max_rows and generation.has_bits:
            ranked = self._prefilter(conn, generation, query, where, params, k)
            return self._counted(conn, generation, ranked, agent_id, "prefilter", note)
        if self._matrices is not None and size <= self._exact_max_rows:
            ranked = self._matrix(conn, generation, query, where, params, k, size)
            return self._counted(conn, generation, ranked, agent_id, "matrix")
        ranked = self._exact(conn, generation, where, params, k, size)
        return self._counted(conn, generation, ranked, agent_id, "exact")

    def close(self) -> None:
        """Stop the approximate index's background builds at their next chunk."""
        if self._ann is not None:
            self._ann.close()

    @staticmethod
    def _counted(
        conn: Connection,
        generation: Generation,
        ranked: list[tuple[str, float]],
        agent_id: str,
        strategy: str,
        note: str | None = None,
    ) -> SemanticOutcome:
        """The ranking, `complete` (or `approximate`: the graph or the prefilter may miss a
        vector the exact search would rank) unless some of the agent's memories have no
        vector yet (`partial` until the engine's `fill` looks at the candidates)."""
        waiting = agent_missing(conn, agent_id, generation.id)
        base = "approximate" if strategy in ("ann", "prefilter") else "complete"
        state, waiting_note = completeness(base, waiting, None)
        notes = "; ".join(part for part in (note, waiting_note) if part) or None
        return SemanticOutcome(_hits(ranked), state, None, notes, strategy, waiting, note)

    def _matrix(
        self,
        conn: Connection,
        generation: Generation,
        query: npt.NDArray[np.float32],
        where: str,
        params: dict[str, object],
        k: int,
        size: int,
    ) -> list[tuple[str, float]]:
        assert self._matrices is not None
        view = self._matrices.current(conn, generation, str(params["agent_id"]), size)
        return _matrix_rows(conn, view, query, where, params, k, view.top(query, _first_count(k)))

    def _scanned_outcome(
        self,
        conn: Connection,
        target: Generation,
        request: ChannelRequest,
        query: npt.NDArray[np.float32],
        scanned: _Scanned,
    ) -> SemanticOutcome:
        """`search`'s matrix branch from the scan already done on the pool thread."""
        where, params = filter_sql(request.agent_id, request.filters)
        params = {**params, "agent_id": request.agent_id}
        ranked = _matrix_rows(conn, scanned.view, query, where, params, request.k, scanned.scored)
        return self._counted(conn, target, ranked, request.agent_id, "matrix")

    def _exact(
        self,
        conn: Connection,
        generation: Generation,
        where: str,
        params: dict[str, object],
        k: int,
        size: int,
    ) -> list[tuple[str, float]]:
        return exact_knn(conn, generation, where, params, k, size)

    def _approximate(
        self,
        conn: Connection,
        generation: Generation,
        query: npt.NDArray[np.float32],
        where: str,
        params: dict[str, object],
        k: int,
        size: int,
    ) -> list[tuple[str, float]] | str:
        """The graph's candidates, joined to live rows and rescored exactly; or why the
        prefilter answers instead (the graph is being built, or filters thin it past
        `ANN_MAX_CANDIDATES`)."""
        assert self._ann is not None
        sql = CANDIDATE_ROWS.format(filters=where)
        agent_id = str(params["agent_id"])
        count = max(self._ann_candidates, 2 * k)
        while count <= ANN_MAX_CANDIDATES:
            found = self._ann.search(conn, generation, agent_id, query, count, size)
            if found is None:
                return "the approximate index is being built; the binary prefilter answered"
            ids = [embedding_id for embedding_id, _ in found]
            rows = conn.execute(sql, {**params, "ids": json.dumps(ids)}).fetchall()
            # Filters, deleted and superseded rows thin the candidates: widen until k survive.
            if len(rows) >= k or len(found) < count:
                return _rescore(rows, query, generation.dimensions, k)
            count *= 4
        return "the filters left too few of the index's candidates; the binary prefilter answered"

    def _prefilter(
        self,
        conn: Connection,
        generation: Generation,
        query: npt.NDArray[np.float32],
        where: str,
        params: dict[str, object],
        k: int,
    ) -> list[tuple[str, float]]:
        sql = CANDIDATE_ROWS.format(filters=where)
        candidates = max(self._prefilter_candidates, k)
        while True:
            ids = self._codes.nearest(conn, generation, str(params["agent_id"]), query, candidates)
            rows = conn.execute(sql, {**params, "ids": json.dumps(ids)}).fetchall()
            # Filters may thin the candidates: widen until k survive or the partition is spent.
            if len(rows) >= k or len(ids) < candidates:
                return _rescore(rows, query, generation.dimensions, k)
            candidates *= 4

    def _recent_window(
        self,
        conn: Connection,
        generation: Generation,
        query: npt.NDArray[np.float32],
        where: str,
        params: dict[str, object],
        k: int,
    ) -> SemanticOutcome:
        rows = conn.execute(
            RECENT_WINDOW.format(filters=where),
            {**params, "generation_id": generation.id, "window": self._window},
        ).fetchall()
        ranked = _rescore(rows, query, generation.dimensions, k)
        note = (
            "sqlite-vec is not loaded: semantic recall scanned only the newest "
            f"{self._window} vectors"
        )
        return SemanticOutcome(_hits(ranked), "recent-window", self._window, note, "recent-window")

    def _partition_size(self, conn: Connection, generation: Generation, agent_id: str) -> int:
        """Vectors in the agent's partition, cached briefly (it only picks the strategy)."""
        key = (agent_id, generation.id)
        now = time.monotonic()
        with self._sizes_lock:
            cached = self._sizes.get(key)
        if cached and now - cached[0] < PARTITION_SIZE_TTL_S:
            return cached[1]
        size = int(
            conn.execute(
                PARTITION_SIZE, {"agent_id": agent_id, "generation_id": generation.id}
            ).fetchone()[0]
        )
        with self._sizes_lock:
            self._sizes[key] = (now, size)
        return size
