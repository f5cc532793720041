"""The traversal channel: memories the knowledge graph connects to the entities a query names.

Focal entities are the agent's active entities (names or aliases, `canonical_entity_name`)
that the query names: its proper-noun phrases (`graph/mentions.py: candidates`, the longest
match wins) and its lower-case words (for single-word names such as `postgres`). Another
agent's entities are never looked up: every read is scoped to the query's agent. From them
`graph/traversal.py` walks aspects, claims, mentions and dependency hops within the bounds;
the reached memories are joined to live rows through the same filter fragments as the other
channels, so scope, deletion and filters hold exactly as for BM25.

Score in [0, 1], Signet's rule with our calibrated cosine:

    score = 0.7 * calibrated(cosine(query, memory)) + 0.3 * importance   (the memory has a vector)
    score = 0.7 * path_weight * 0.8 ** hops         + 0.3 * importance   (no query vector or none)

The query vector is the one the semantic channel made (`recall/query_vectors.py`: peeked,
never embedded twice, never waited for); the memories' vectors are the rows of the semantic
channel's in-memory matrix (`recall/matrix.py`), so scoring reads no vector blob unless the
matrix does not hold a row. `path_weight` is the product of the edge strengths
times the claim's confidence (1 for a mention). Evidence carries the path; a walk cut short
by its time budget or a bound says so in the outcome's note ("traversal partial: ..."), never
as an error. No focal entity: the channel did not apply (unavailable, no note), and recall is
the flat hybrid exactly.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from signet_desktop.domain.entities import canonical_entity_name
from signet_desktop.domain.recall import ChannelEvidence
from signet_desktop.domain.traversal import (
    GraphAspect,
    GraphClaim,
    GraphEdge,
    GraphEntity,
    TraversalSummary,
)
from signet_desktop.embedding.generations import Generation
from signet_desktop.embedding.vectors import sent_vector_twin, stored_vector
from signet_desktop.graph.mentions import candidates
from signet_desktop.graph.traversal import Reached, TraversalBounds, Walk, walk
from signet_desktop.recall.channels import ChannelOutcome, ChannelRequest, Finish, StageClock
from signet_desktop.recall.filters import filter_sql
from signet_desktop.recall.query_vectors import RecentQueryVectors
from signet_desktop.recall.sanitize import query_tokens
from signet_desktop.recall.vector import SemanticChannel, calibrated
from signet_desktop.storage import graph_reads as reads
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres, postgres_twin

MAX_FOCAL_ENTITIES = 8
COSINE_SHARE = 0.7
IMPORTANCE_SHARE = 0.3
HOP_DECAY = 0.8
_WORD = re.compile(r"[^\W_][\w.+#&'-]*[\w+#]|[^\W_]", re.UNICODE)

CANDIDATES = """
SELECT m.id AS id, m.importance AS importance, e.id AS embedding_id
FROM memories m
LEFT JOIN embeddings e ON e.source_type = 'memory' AND e.source_id = m.id
    AND e.generation_id = :generation_id AND e.content_hash = m.content_hash
WHERE m.id IN (SELECT value FROM json_each(:ids)) AND {filters}
"""

VECTORS = """
SELECT id, vector AS vector FROM embeddings
WHERE id IN (SELECT value FROM json_each(:ids)) AND agent_id = :agent_id
"""
# PostgreSQL: the ids as a JSON array's text elements, cast back to the key's type.
CANDIDATES_PG = postgres_twin(CANDIDATES)
VECTORS_PG = sent_vector_twin(VECTORS, "vector").replace(
    "SELECT value FROM", "SELECT value::bigint FROM"
)

Row = tuple[str, float, int | None]  # memory id, importance, its embedding's id (if any)


@dataclass(frozen=True, slots=True)
class TraversalHit:
    """A memory the graph reached, with its traversal evidence (path included)."""

    memory_id: str
    evidence: ChannelEvidence


@dataclass(frozen=True, slots=True)
class TraversalOutcome(ChannelOutcome):
    """The channel's outcome plus what the walk did (`meta.traversal`)."""

    summary: TraversalSummary | None = None


def focal_names(text: str) -> list[str]:
    """Canonical names a query may mean: its proper-noun phrases, then its lower-case words."""
    names = [c.canonical for c in candidates(text)]
    lower = " ".join(w for w in _WORD.findall(text) if w == w.lower())
    names += [canonical_entity_name(word) for word in query_tokens(lower)]
    return list(dict.fromkeys(name for name in names if name))


def focal_entities(
    conn: Connection, agent_id: str, text: str, limit: int = MAX_FOCAL_ENTITIES
) -> list[GraphEntity]:
    """The agent's active entities the query names (longest phrase first), at most `limit`."""
    names = focal_names(text)
    if not names:
        return []
    found = reads.entities_named(conn, agent_id, names, limit)
    ordered = [found[name] for name in names if name in found]
    return list({entity.id: entity for entity in ordered}.values())[:limit]


class ConnectionReader:
    """`graph.traversal.GraphReader` over one connection, scoped to one agent."""

    def __init__(self, conn: Connection, agent_id: str) -> None:
        self._conn = conn
        self._agent = agent_id

    def aspects_with_claims(
        self, entity_ids: Sequence[str], per_entity: int, per_aspect: int, min_confidence: float
    ) -> Sequence[tuple[GraphAspect, Sequence[GraphClaim]]]:
        return reads.aspects_with_claims(
            self._conn,
            self._agent,
            entity_ids,
            per_entity=per_entity,
            per_aspect=per_aspect,
            min_confidence=min_confidence,
        )

    def edges(
        self, entity_ids: Sequence[str], min_strength: float, min_confidence: float, per_entity: int
    ) -> Sequence[GraphEdge]:
        return reads.dependencies_of(
            self._conn,
            self._agent,
            entity_ids,
            min_strength=min_strength,
            min_confidence=min_confidence,
            per_entity=per_entity,
        )

    def mentioned_in(
        self, entity_ids: Sequence[str], per_entity: int
    ) -> Mapping[str, Sequence[str]]:
        return reads.mentioned_in(self._conn, self._agent, entity_ids, per_entity)


def path_score(found: Reached, importance: float) -> float:
    """The score without a vector: the path's weight, decayed per hop, and importance."""
    return COSINE_SHARE * found.weight * HOP_DECAY**found.hops + IMPORTANCE_SHARE * importance


def vector_score(cosine: float, importance: float) -> float:
    """Signet's traversal score with the semantic channel's calibrated cosine."""
    return COSINE_SHARE * calibrated(cosine) + IMPORTANCE_SHARE * importance


@dataclass(frozen=True, slots=True)
class _Walked:
    """What `start` found: the focal entities, the walk and the reached live rows."""

    focal: list[GraphEntity]
    walk: Walk
    generation: Generation | None
    rows: list[Row]
    walk_ms: float
    request: ChannelRequest
    conn: Connection  # the engine's reader for this recall, used again in `finish`


class TraversalChannel:
    """The `traversal` channel (see the module docstring)."""

    name = "traversal"

    def __init__(
        self,
        bounds: TraversalBounds | None = None,
        *,
        semantic: SemanticChannel | None = None,
        vectors: RecentQueryVectors | None = None,
    ) -> None:
        self.bounds = bounds or TraversalBounds()
        self._semantic = semantic
        self._vectors = vectors

    def start(self, conn: Connection, request: ChannelRequest, pool: Executor) -> Finish:
        """Resolve the focal entities, walk the graph and read the reached rows now, on the
        caller's thread while the semantic channel's query embedding runs on the pool (the
        walk needs no vector); score them in `finish`, with that vector.

        Here rather than on the pool: with two cores, a third busy thread beside BM25 and the
        embedding slowed both more than it saved (docs/BENCHMARKS.md, issue 14).
        """
        walked = self._walk(conn, request)
        return lambda clock: self._finish(walked, clock)

    def _walk(self, conn: Connection, request: ChannelRequest) -> _Walked | None:
        """Focal entities, the bounded walk and the reached live rows (None: no focal entity)."""
        started = time.perf_counter()
        focal = focal_entities(conn, request.agent_id, request.text)
        if not focal:
            return None
        walked = walk(ConnectionReader(conn, request.agent_id), focal, self.bounds)
        generation = self._generation(conn)
        rows = self._rows(conn, request, list(walked.reached), generation)
        walk_ms = (time.perf_counter() - started) * 1000
        return _Walked(focal, walked, generation, rows, walk_ms, request, conn)

    def _finish(self, found: _Walked | None, clock: StageClock) -> ChannelOutcome:
        if found is None:
            return TraversalOutcome((), available=False)
        clock.add(f"{self.name}.walk", found.walk_ms)  # overlapping the embedding and BM25
        with clock.stage(self.name):
            return self._run(found)

    def _run(self, found: _Walked) -> TraversalOutcome:
        walked, focal = found.walk, found.focal
        query = self._query_vector(found.generation, found.request.text)
        cosines = self._cosines(found, query) if query is not None else {}
        scored: list[tuple[float, str, float]] = []
        for memory_id, importance, embedding_id in found.rows:
            reached = walked.reached[memory_id]
            cosine = cosines.get(embedding_id) if embedding_id is not None else None
            if cosine is not None:
                scored.append((vector_score(cosine, importance), memory_id, cosine))
            else:
                scored.append((path_score(reached, importance), memory_id, reached.weight))
        scored.sort(key=lambda item: (-item[0], item[1]))
        hits = [
            TraversalHit(
                memory_id,
                ChannelEvidence(
                    score=min(1.0, max(0.0, score)),
                    rank=rank,
                    raw=raw,
                    path=walked.reached[memory_id].path,
                ),
            )
            for rank, (score, memory_id, raw) in enumerate(scored[: found.request.k], start=1)
        ]
        summary = TraversalSummary(
            partial=walked.partial,
            focal_entities=tuple(focal),
            paths=len(walked.reached),
            reasons=tuple(walked.reasons),
        )
        note = f"traversal partial: {'; '.join(walked.reasons)}" if walked.partial else None
        return TraversalOutcome(hits, note=note, summary=summary)

    def _generation(self, conn: Connection) -> Generation | None:
        """The generation whose vectors the semantic channel's query vector can meet."""
        if self._semantic is None or self._vectors is None:
            return None
        generation = self._semantic.generation(conn)
        return generation if isinstance(generation, Generation) else None

    def _query_vector(
        self, generation: Generation | None, text: str
    ) -> npt.NDArray[np.float32] | None:
        """The semantic channel's query vector (peeked: never embedded twice, never waited for)."""
        if generation is None or self._vectors is None:
            return None
        query = self._vectors.peek(text)
        return query if query is not None and len(query) == generation.dimensions else None

    def _rows(
        self,
        conn: Connection,
        request: ChannelRequest,
        ids: list[str],
        generation: Generation | None,
    ) -> list[Row]:
        """Live memories among `ids` in the query's scope and filters, with the id of their
        current vector (not the vector: `_cosines` reads it from memory when it can)."""
        if not ids:
            return []
        postgres = is_postgres(conn)
        where, params = filter_sql(request.agent_id, request.filters, postgres=postgres)
        params = {
            **params,
            "ids": json.dumps(ids),
            "generation_id": generation.id if generation is not None else -1,
        }
        seen: dict[str, Row] = {}
        sql = CANDIDATES_PG if postgres else CANDIDATES
        for row in conn.execute(sql.format(filters=where), params):
            embedding_id = row["embedding_id"]
            seen.setdefault(
                row["id"],
                (
                    row["id"],
                    float(row["importance"]),
                    None if embedding_id is None else int(embedding_id),
                ),
            )
        return list(seen.values())

    def _cosines(self, found: _Walked, query: npt.NDArray[np.float32]) -> dict[int, float]:
        """Cosine with the query of each reached row's vector, by embedding id.

        From the semantic channel's in-memory matrix (the search that just ran refreshed
        it), so no vector blob is read; a row the matrix does not hold yet (or no matrix: vec0
        or the binary prefilter searched) is read from the canonical table.
        """
        wanted = [row[2] for row in found.rows if row[2] is not None]
        if not wanted or found.generation is None:
            return {}
        view = (
            self._semantic.loaded_matrix(found.generation, found.request.agent_id)
            if self._semantic is not None
            else None
        )
        cosines = view.cosines(wanted, query) if view is not None else {}
        missing = [embedding_id for embedding_id in wanted if embedding_id not in cosines]
        if missing:
            params = {"ids": json.dumps(missing), "agent_id": found.request.agent_id}
            postgres = is_postgres(found.conn)
            for row in found.conn.execute(VECTORS_PG if postgres else VECTORS, params):
                vector = stored_vector(row["vector"], sent=postgres)
                if len(vector) == len(query):
                    cosines[int(row["id"])] = float(vector @ query)
        return cosines
