"""Candidates without a vector: embedded for the recall that found them, within a bound.

Vectors follow a remember on a background thread, so for a while (seconds on an idle
machine, longer on a busy one, minutes after an import) some memories have no vector in the
active generation. The semantic channel cannot find those; the lexical and other channels
can. After every channel has run, the semantic channel takes the other channels' candidates
that have no current vector, best rank first, embeds up to `max_texts` of them (batches of
`batch`, no new batch once `budget_ms` has passed) on the recall's own thread, and scores
them against the query like any other vector. Vectors made here are kept in a small cache
(keyed by memory and content hash), so asking again during the backlog costs nothing; the
background thread still writes the canonical rows.

How complete the semantic view was then becomes the response's `vectorCompleteness`
(`completeness`): `complete` when the agent has no memory without a vector; otherwise
`candidates-complete` when every candidate was scored by vector (some embedded here; what
only vector search would have found among the memories still waiting is missed), or
`partial` when some candidates were left without one (the bound, or the embedder failed),
with a note that counts them.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from signet_desktop.embedding.generations import Generation
from signet_desktop.embedding.provider import EmbeddingProvider, validate_vectors
from signet_desktop.embedding.vectors import HAS_CURRENT_VECTOR
from signet_desktop.storage import counters
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres, postgres_twin

log = logging.getLogger(__name__)

# A recall embeds at most this many candidates, in batches of this size, and starts no new
# batch after the budget: the recall's extra latency is the budget plus at most one batch. A
# short text costs ~5 ms of one core (LoCoMo turns: ~210 per CPU-second in batches of 2-4);
# at load ~26 on 2 cores a thread gets ~8% of one, and a batch of 4 took ~240 ms of wall time
# (bench/busy_vectors.py: the stage at p50 172 / p95 479 ms), hence batches of 2.
DEFAULT_MAX_TEXTS = 16
DEFAULT_BATCH = 2
DEFAULT_BUDGET_MS = 100.0
DEFAULT_CACHED = 2048  # vectors made on recall, ~1.5 KB each at 384-d

MISSING_AMONG = f"""
SELECT m.id AS id, m.content AS content, m.content_hash AS content_hash
FROM memories m
WHERE m.id IN (SELECT value FROM json_each(:ids)) AND m.is_deleted = 0
  AND NOT {HAS_CURRENT_VECTOR}
"""
MISSING_AMONG_PG = postgres_twin(MISSING_AMONG)


@dataclass(frozen=True, slots=True)
class GapFill:
    """What one recall did about candidates without a vector."""

    scored: list[tuple[str, float]]  # (memory id, cosine) of the candidates embedded here
    missing: int  # candidates without a current vector
    error: str | None = None  # why embedding stopped early, if the embedder failed

    @property
    def left(self) -> int:
        """Candidates ranked without a vector."""
        return self.missing - len(self.scored)


def agent_missing(conn: Connection, agent_id: str, generation_id: int) -> int:
    """The agent's live memories without a current vector in the generation (the database's
    maintained counters: two index lookups, no pass over the memories)."""
    live = counters.agent_counts(conn, agent_id).live
    return max(0, live - counters.agent_generation_embedded(conn, agent_id, generation_id))


def completeness(strategy_state: str, waiting: int, fill: GapFill | None) -> tuple[str, str | None]:
    """The channel's `vectorCompleteness` and a note, given the agent's memories without a
    vector (`waiting`) and what the recall did about its candidates (`fill`; None: the check
    could not run because no other channel proposed candidates)."""
    if not waiting and (fill is None or not fill.missing):
        return strategy_state, None
    noun = "memory has" if waiting == 1 else "memories have"
    head = f"{waiting} {noun} no vector yet"
    if fill is None:
        return "partial", f"{head}; vector recall does not see them yet, keyword recall does"
    made = len(fill.scored)
    embedded = f"{made} of the candidates among them embedded for this recall" if made else ""
    if fill.left:
        why = f" ({fill.error})" if fill.error else " (the per-recall bound)"
        left = f"{fill.left} candidates ranked by keywords only{why}"
        return "partial", "; ".join(part for part in (head, embedded, left) if part)
    return "candidates-complete", "; ".join(part for part in (head, embedded) if part)


class VectorGaps:
    """Embeds recall candidates that have no vector yet, bounded in count and time."""

    def __init__(
        self,
        embedder: EmbeddingProvider,
        *,
        max_texts: int = DEFAULT_MAX_TEXTS,
        batch: int = DEFAULT_BATCH,
        budget_ms: float = DEFAULT_BUDGET_MS,
        cached: int = DEFAULT_CACHED,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        if max_texts < 0 or batch < 1 or budget_ms < 0 or cached < 0:
            raise ValueError("max_texts, budget_ms and cached must be >= 0, batch >= 1")
        self._embedder = embedder
        self.max_texts = max_texts
        self._batch = batch
        self.budget_ms = budget_ms
        self._keep = cached
        self._clock = clock
        self._cache: OrderedDict[tuple[str, str], npt.NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()

    def fill(
        self,
        conn: Connection,
        generation: Generation,
        query: npt.NDArray[np.float32],
        candidates: Sequence[str],
    ) -> GapFill:
        """Score the candidates (best first) that have no current vector, within the bound."""
        if not candidates:
            return GapFill([], 0)
        started = self._clock()
        params = {"ids": json.dumps(list(candidates)), "generation_id": generation.id}
        sql = MISSING_AMONG_PG if is_postgres(conn) else MISSING_AMONG
        rows = {str(r["id"]): r for r in conn.execute(sql, params).fetchall()}
        todo = [
            (mid, str(rows[mid]["content"]), str(rows[mid]["content_hash"]))
            for mid in candidates
            if mid in rows
        ]
        vectors: dict[str, npt.NDArray[np.float32]] = {}
        uncached = []
        for mid, content, digest in todo:
            hit = self._cached((mid, digest))
            if hit is not None:
                vectors[mid] = hit
            else:
                uncached.append((mid, content, digest))
        error = None
        allowed = uncached[: max(0, self.max_texts)]
        for at in range(0, len(allowed), self._batch):
            if (self._clock() - started) * 1000 >= self.budget_ms:
                break
            part = allowed[at : at + self._batch]
            try:
                raw = self._embedder.embed([content for _, content, _ in part])
                matrix = validate_vectors(
                    raw, generation.dimensions, self._embedder.name, expected_rows=len(part)
                )
            except Exception as exc:  # vectors are derived: the recall answers without them
                log.warning("embedding recall candidates without a vector failed: %s", exc)
                error = f"the embedder failed: {exc}"
                break
            for (mid, _, digest), row in zip(part, matrix, strict=True):
                vector = np.ascontiguousarray(row, dtype=np.float32)
                vectors[mid] = vector
                self._keep_vector((mid, digest), vector)
        scored = [(mid, float(vectors[mid] @ query)) for mid, _, _ in todo if mid in vectors]
        return GapFill(scored, len(todo), error)

    def _cached(self, key: tuple[str, str]) -> npt.NDArray[np.float32] | None:
        with self._lock:
            vector = self._cache.get(key)
            if vector is not None:
                self._cache.move_to_end(key)
            return vector

    def _keep_vector(self, key: tuple[str, str], vector: npt.NDArray[np.float32]) -> None:
        with self._lock:
            self._cache[key] = vector
            while len(self._cache) > self._keep:
                self._cache.popitem(last=False)
