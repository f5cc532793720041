"""The `rerank` post-fusion stage: the top N rescored as passages (a memory with its neighbours).

Offline: no network and no model beyond the configured embedder. A turn of a conversation
rarely answers a question alone (the reply names the thing, the question names the person),
so each of the fused top `top_n` hits is judged as a **passage**: the memory with the live
memories around it in its session (`recall/passages.py`): its neighbours (the previous and
next one, as the context stage finds them) and, up to `width` steps away, the outer turns.
Two passage signals are blended into the score:

    coverage = sum(idf(t) * held(t) for the query's terms t) / sum(idf(t))
               held(t) = 1 when the memory or a neighbour holds t, else `outer_weight` when an
               outer turn does, else 0
    passage  = normalise(v_self + neighbour_weight * (v_previous + v_next))   (stored vectors)
    rescored = (1 - wc - wv) * score + wc * coverage + wv * calibrated(cosine(query, passage))

Terms are the lexical channel's query tokens (stop words dropped) with a light suffix fold on
both sides, weighted by the FTS index's own IDF (`recall.lexical.idf`), less the words a
question asks *with* rather than *about* (`QUESTION_SCAFFOLD`: "which database does billing
use?" is about billing's database; counting `use` ranked "Use idempotency keys ... billing API"
first); `calibrated` is the semantic channel's noise-floor mapping. A memory holds a term when
one of its words folds to the term's stem (every word of it, however long). Nothing is
embedded at query time but the query.
Why these signals: the fused score already holds each memory's own BM25 and cosine, so
Signet's `0.7 * score + 0.3 * cosine(query, memory)` only re-weights what fusion weighed (it
lowered both recall@10 and MRR on the LoCoMo dev split); what fusion cannot see is the
passage. An exchange often runs longer than three turns (a question, a short reply, the
detail), so a term two turns away is evidence too, if weaker: `width` 2, `outer_weight` 0.5
(the vector stays memory + neighbours: wider measured worse). A memory with no session
neighbours has no passage: its blend is its fused score (`NO_PASSAGE`), since its own terms
and vector are exactly what fusion weighed, and weighing them again (coverage 0.3 against
vector 0.1) re-ranked purely semantic answers below memories sharing one word with the
question. Numbers: docs/RECALL.md, "Reranking and graph-aware recall on LoCoMo", "A wider
passage" and "Relevance: weak hits and the hooks' threshold".

The blend only **orders** the top N: the hit ranked k-th by it takes the fused score the k-th
hit had, so the top N keep their place ahead of the rest (left exactly as fused) and the
score scale later stages, the flat-share cut and `min_score` see is fusion's. (Letting the
blend replace the score let traversal-only hits outside the top N overtake reranked direct
matches when the final cut sorted again: graph-aware recall@10 0.690 -> 0.653.) Every hit it
moved records a `HitAdjustment` (factor = new / old score, the blend and both signals); a hit
that kept its rank keeps its score and records nothing.

Bounded: one query embedding (the semantic channel's, when its embedder keeps recent query
vectors; else one on the stage's own thread, waited for at most the budget), one session-order
read for every step of `width`, one read of the passages' texts and one of the memories' and
their neighbours' vectors, and the capped FTS document counts (IDF) of the query terms the
lexical channel did not count for this recall (`ChannelRequest.term_counts`), taken together;
the deadline is checked before them. When the budget (`timeout_ms`) runs out
there, the top N keep their scores and order and each carries an adjustment of factor 1 that
says so. An unconfigured, failing or slow embedder (waited for until the deadline) costs only
the vector signal, which the reason says. It reads only, never inside a write transaction,
and only the caller's agent's rows.

On by default (`memory.pipelineV2.reranker.enabled`); `configured_rerank` builds it.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np
import numpy.typing as npt

from signet_desktop.config.pipeline import RerankerConfig
from signet_desktop.embedding.generations import Generation
from signet_desktop.embedding.priority import request_pool
from signet_desktop.embedding.provider import EmbeddingError
from signet_desktop.embedding.vectors import sent_vector_twin, stored_vector
from signet_desktop.recall.channels import ChannelRequest, StageClock
from signet_desktop.recall.fusion import FusedHit
from signet_desktop.recall.lexical import POSTINGS_BUDGET, fts_rows, idf
from signet_desktop.recall.passages import Window, session_windows
from signet_desktop.recall.sanitize import query_tokens, words
from signet_desktop.recall.stages import adjusted, reordered
from signet_desktop.recall.term_counts import TermCounts
from signet_desktop.recall.vector import SEMANTIC_FLOOR, calibrated
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres, postgres_twin
from signet_desktop.storage.guard import assert_provider_call_allowed

log = logging.getLogger(__name__)

STAGE_NAME = "rerank"
DEFAULT_TOP_N = 20
DEFAULT_TIMEOUT_MS = 2000
DEFAULT_COVERAGE_WEIGHT = 0.3
DEFAULT_VECTOR_WEIGHT = 0.1
DEFAULT_NEIGHBOUR_WEIGHT = 1.0
DEFAULT_WIDTH = 2  # steps each side whose memories' terms count (1: the neighbours only)
DEFAULT_OUTER_WEIGHT = 0.5  # what a term only a memory 2+ steps away holds counts
# A memory alone in its session has no passage: its terms and vector are what fusion weighed.
NO_PASSAGE = "no session neighbours: ranked by its fused score (nothing to add to fusion)"

# The passages' live texts in the caller's agent scope.
PASSAGE_ROWS = """
SELECT id, content FROM memories
WHERE id IN (SELECT value FROM json_each(:ids)) AND +agent_id = :agent_id AND +is_deleted = 0
"""
_SUFFIXES = ("ing", "ies", "ed", "es", "s")
MIN_STEM = 3
# Question scaffolding: not what the question is about, so not a term a passage must cover
# (BM25 still matches them). On the LoCoMo dev split dropping them changed no metric.
QUESTION_SCAFFOLD = frozenset({"use", "uses", "used", "using"})

# The passages' live canonical vectors of one generation, in the caller's agent scope.
PASSAGE_VECTORS = """
SELECT m.id AS id, e.vector AS vector
FROM embeddings e
JOIN memories m ON m.id = e.source_id
WHERE e.source_type = 'memory' AND e.source_id IN (SELECT value FROM json_each(:ids))
  AND +e.generation_id = :generation_id AND +e.agent_id = :agent_id
  AND +m.agent_id = :agent_id AND +m.is_deleted = 0 AND e.content_hash = m.content_hash
"""
PASSAGE_ROWS_PG = postgres_twin(PASSAGE_ROWS)
PASSAGE_VECTORS_PG = sent_vector_twin(PASSAGE_VECTORS)


class QueryVectors(Protocol):
    """What the stage needs of the semantic side (`recall.vector.SemanticChannel` has both)."""

    def generation(self, conn: Connection) -> Generation | str:
        """The generation the embedder's queries may meet, or why there is none."""
        ...

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """The unit query vector (raises EmbeddingError)."""
        ...


def configured_rerank(
    config: RerankerConfig, vectors: QueryVectors | None
) -> tuple[PassageReranker, ...]:
    """The stages `memory.pipelineV2.reranker` asks for: the reranker when enabled, else none.

    `vectors` None (no embedder configured): the reranker runs on term coverage alone.
    """
    if not config.enabled:
        return ()
    return (PassageReranker(vectors, top_n=config.top_n, timeout_ms=config.timeout_ms),)


@dataclass(frozen=True, slots=True)
class _Vectors:
    query: npt.NDArray[np.float32] | None
    stored: Mapping[str, npt.NDArray[np.float32]]
    missing: str | None  # why there is no vector signal


class PassageReranker:
    """The `rerank` stage (see the module docstring); implements `PostFusionStage`."""

    name = STAGE_NAME

    def __init__(
        self,
        vectors: QueryVectors | None,
        *,
        top_n: int = DEFAULT_TOP_N,
        timeout_ms: int = DEFAULT_TIMEOUT_MS,
        coverage_weight: float = DEFAULT_COVERAGE_WEIGHT,
        vector_weight: float = DEFAULT_VECTOR_WEIGHT,
        neighbour_weight: float = DEFAULT_NEIGHBOUR_WEIGHT,
        width: int = DEFAULT_WIDTH,
        outer_weight: float = DEFAULT_OUTER_WEIGHT,
        floor: float = SEMANTIC_FLOOR,
        term_counts: TermCounts | None = None,
        now: Callable[[], float] = time.perf_counter,
    ) -> None:
        if top_n < 1:
            raise ValueError("top_n must be at least 1")
        if timeout_ms <= 0:
            raise ValueError("timeout_ms must be positive")
        if width < 0 or not 0 <= outer_weight <= 1:
            raise ValueError("width must be >= 0 and outer_weight within [0, 1]")
        weights = (coverage_weight, vector_weight)
        if min(weights) < 0 or sum(weights) > 1 or neighbour_weight < 0 or not 0 <= floor < 1:
            raise ValueError(
                "coverage_weight and vector_weight must be >= 0 with a sum <= 1, "
                "neighbour_weight >= 0 and floor within [0, 1)"
            )
        self._vectors = vectors
        self.top_n = top_n
        self.timeout_ms = timeout_ms
        self.coverage_weight = coverage_weight
        self.vector_weight = vector_weight
        self.neighbour_weight = neighbour_weight
        self.width = width
        self.outer_weight = outer_weight
        self.floor = floor
        self._term_counts = term_counts or TermCounts()
        self._clock = now  # seconds; tests pass one that jumps past the deadline
        self._pool: ThreadPoolExecutor | None = request_pool(1, "recall-rerank")
        self._lock = threading.Lock()

    def close(self) -> None:
        """Stop the stage's embedding thread (a pending query embedding is abandoned)."""
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = None

    def apply(
        self,
        conn: Connection,
        request: ChannelRequest,
        hits: list[FusedHit],
        clock: StageClock,
    ) -> list[FusedHit]:
        """Rescore the top `top_n` of `hits` (best first), leave the rest as they came."""
        head, tail = hits[: self.top_n], hits[self.top_n :]
        if not head:
            return list(hits)
        deadline = self._clock() + self.timeout_ms / 1000
        pending = self._start_query(conn, request.text) if self.vector_weight else None
        ids = [hit.memory_id for hit in head]
        windows = session_windows(conn, request.agent_id, ids, self.width)
        passage_ids = list(dict.fromkeys(i for w in windows.values() for i in w.ids))
        held = self._terms_held(conn, request, passage_ids, deadline)
        if held is None:
            if isinstance(pending, tuple):
                pending[1].cancel()
            budget = f"not reranked: the {self.timeout_ms} ms rerank budget ran out"
            return _untouched(head, budget) + tail
        near = dict.fromkeys(i for w in windows.values() for i in (w.memory_id, *w.near))
        vectors = self._passage_vectors(conn, request.agent_id, list(near), pending, deadline)
        blends = [self._blend(hit, windows[hit.memory_id], held, vectors) for hit in head]
        return _reordered(head, blends) + tail

    def _start_query(
        self, conn: Connection, text: str
    ) -> tuple[Generation, Future[npt.NDArray[np.float32]]] | str:
        """Submit the query embedding (checked on the caller's thread), or why not."""
        if self._vectors is None:
            return "no embedder is configured"
        target = self._vectors.generation(conn)
        if isinstance(target, str):
            return target
        # The semantic channel embedded this text moments ago: reuse its vector when its
        # embedder keeps recent ones (`recall.query_vectors.RecentQueryVectors.peek`).
        peek = getattr(getattr(self._vectors, "embedder", None), "peek", None)
        known = peek(text) if callable(peek) else None
        if isinstance(known, np.ndarray):
            done: Future[npt.NDArray[np.float32]] = Future()
            done.set_result(known)
            return target, done
        assert_provider_call_allowed("rerank query embedding")
        with self._lock:
            if self._pool is None:  # closed, then used again
                self._pool = request_pool(1, "recall-rerank")
            return target, self._pool.submit(self._vectors.embed_query, text)

    def _terms_held(
        self, conn: Connection, request: ChannelRequest, passage_ids: Sequence[str], deadline: float
    ) -> _Coverage | None:
        """Each query term's IDF and which terms each passage memory holds (None: out of time)."""
        total_rows = fts_rows(conn, term_counts=self._term_counts)
        weights: dict[str, float] = {}
        terms = [t for t in query_tokens(request.keyword_text) if t not in QUESTION_SCAFFOLD]
        # The lexical channel's plan counted these terms moments ago; count only the rest.
        known = request.term_counts
        unknown = [term for term in dict.fromkeys(terms) if term not in known]
        if self._clock() > deadline:
            return None
        counts = {**self._term_counts.counts(conn, unknown, POSTINGS_BUDGET + 1), **known}
        for term in dict.fromkeys(terms):
            documents = counts[term]
            weight = idf(documents, max(total_rows, documents))
            weights[_stem(term)] = max(weight, weights.get(_stem(term), 0.0))
        rows = conn.execute(
            PASSAGE_ROWS_PG if is_postgres(conn) else PASSAGE_ROWS,
            {"ids": json.dumps(list(passage_ids)), "agent_id": request.agent_id},
        ).fetchall()
        holds = {str(r["id"]): _stems_held(str(r["content"]), weights) for r in rows}
        return _Coverage(weights, holds)

    def _passage_vectors(
        self,
        conn: Connection,
        agent_id: str,
        passage_ids: Sequence[str],
        pending: tuple[Generation, Future[npt.NDArray[np.float32]]] | str | None,
        deadline: float,
    ) -> _Vectors:
        if pending is None:
            return _Vectors(None, {}, "vector weight 0")
        if isinstance(pending, str):
            return _Vectors(None, {}, pending)
        generation, future = pending
        try:
            query = future.result(timeout=max(0.0, deadline - self._clock()))
        except FutureTimeout:
            future.cancel()
            return _Vectors(None, {}, f"the query embedding took over {self.timeout_ms} ms")
        except EmbeddingError as exc:
            log.warning("rerank query embedding failed: %s", exc)
            return _Vectors(None, {}, f"the embedder failed ({exc})")
        query = np.ascontiguousarray(query, dtype=np.float32)
        if query.shape != (generation.dimensions,) or not np.all(np.isfinite(query)):
            return _Vectors(None, {}, "the embedder returned an unusable query vector")
        postgres = is_postgres(conn)
        rows = conn.execute(
            PASSAGE_VECTORS_PG if postgres else PASSAGE_VECTORS,
            {
                "ids": json.dumps(list(passage_ids)),
                "generation_id": generation.id,
                "agent_id": agent_id,
            },
        ).fetchall()
        stored = {}
        for row in rows:
            vector = stored_vector(row["vector"], sent=postgres)
            if vector.shape == query.shape:
                stored[str(row["id"])] = vector
        return _Vectors(query, stored, None)

    def _blend(
        self,
        hit: FusedHit,
        window: Window,
        held: _Coverage,
        vectors: _Vectors,
    ) -> tuple[float, str]:
        """The hit's passage blend and the reason that explains it."""
        if not window.near and not window.outer and hit.memory_id in held.holds:
            return hit.score, NO_PASSAGE
        passage = [hit.memory_id, *window.near]
        coverage = held.coverage(passage, window.outer, self.outer_weight)
        cosine = self._passage_cosine(passage, vectors)
        wc, wv = self.coverage_weight, self.vector_weight
        parts = [f"{wc:g}*term coverage {coverage:.2f}"]
        if cosine is None:
            wv = 0.0  # no vector signal: the blend is score and coverage only
            why = vectors.missing or "the memory has no vector yet"
            parts.append(f"no passage cosine ({why})")
        else:
            parts.append(f"{wv:g}*passage cosine {cosine:.3f}")
        rescored = (1 - wc - wv) * hit.score + wc * coverage
        if cosine is not None:
            rescored += wv * calibrated(cosine, self.floor)
        passage_note = f"memory + {len(window.near)} session neighbours"
        if window.outer:
            count = len(window.outer)
            steps = f"2-{self.width}" if self.width > 2 else "2"
            passage_note += (
                f"; terms only the {count} {'memory' if count == 1 else 'memories'} {steps} "
                f"steps away hold count {self.outer_weight:g}"
            )
        reason = f"{1 - wc - wv:g}*score + " + " + ".join(parts) + f" ({passage_note})"
        return rescored, f"ranked by {rescored:.3f} = {reason}"

    def _passage_cosine(self, passage: Sequence[str], vectors: _Vectors) -> float | None:
        """cos(query, normalised memory vector + neighbour_weight * neighbours'), or None."""
        own = vectors.stored.get(passage[0])
        if vectors.query is None or own is None:
            return None
        summed = own.astype(np.float64)
        for memory_id in passage[1:]:
            vector = vectors.stored.get(memory_id)
            if vector is not None:
                summed = summed + self.neighbour_weight * vector
        norm = float(np.linalg.norm(summed))
        return float(summed @ vectors.query / norm) if norm > 0 else 0.0


@dataclass(frozen=True, slots=True)
class _Coverage:
    """The query terms' IDF weights and which terms each passage memory holds."""

    weights: Mapping[str, float]
    holds: Mapping[str, set[str]]

    def coverage(
        self, passage: Sequence[str], outer: Sequence[str] = (), outer_weight: float = 0.0
    ) -> float:
        """IDF share of the query's terms `passage` holds, in [0, 1].

        A term no memory of `passage` holds but one of `outer` does counts `outer_weight`.
        """
        total = sum(self.weights.values())
        if total <= 0:
            return 0.0
        held = set().union(*(self.holds.get(memory_id, set()) for memory_id in passage))
        farther = set().union(*(self.holds.get(memory_id, set()) for memory_id in outer)) - held
        share = sum(w for term, w in self.weights.items() if term in held)
        share += outer_weight * sum(w for term, w in self.weights.items() if term in farther)
        return share / total


@lru_cache(maxsize=65536)
def _stem(token: str) -> str:
    """A light suffix fold (the same on both sides): `parties`, `partying` -> `part`-ish stems.

    Not Porter: it only has to map a query word and a memory word of one family together.
    """
    for suffix in _SUFFIXES:
        if token.endswith(suffix) and len(token) - len(suffix) >= MIN_STEM:
            return token[: -len(suffix)]
    return token


@lru_cache(maxsize=4096)
def _forms(stem: str) -> tuple[str, ...]:
    """The words `_stem` folds to `stem`: itself and itself plus one of the suffixes."""
    return tuple(w for w in (stem, *(stem + suffix for suffix in _SUFFIXES)) if _stem(w) == stem)


def _stems_held(content: str, stems: Iterable[str]) -> set[str]:
    """Which of `stems` some word of `content` folds to (no stemming of every word).

    Every form of a stem contains the stem, so a memory whose lowercased text does not
    contain a stem cannot hold it: most passage memories are settled without splitting words.
    """
    lowered = content.lower()
    inside = [stem for stem in stems if stem in lowered]
    if not inside:
        return set()
    present = words(lowered)
    return {stem for stem in inside if any(form in present for form in _forms(stem))}


def _reordered(head: Sequence[FusedHit], blends: Sequence[tuple[float, str]]) -> list[FusedHit]:
    """`head` sorted by blend; the hit at each rank takes the fused score that rank had.

    So the top N keep the score scale fusion gave them: a hit outside the top N, or a later
    stage that sorts again, meets the same scores as without the reranker, only in a new order.
    A hit whose score this leaves as it was (its rank kept) records nothing, as stages do.
    """
    ranks = sorted(range(len(head)), key=lambda i: (-blends[i][0], i))
    return reordered(head, ranks, STAGE_NAME, [reason for _, reason in blends])


def _untouched(hits: Sequence[FusedHit], reason: str) -> list[FusedHit]:
    """`hits` with their scores kept and an adjustment of factor 1 that says why."""
    return [adjusted(hit, STAGE_NAME, 1.0, reason) for hit in hits]
