"""The remember path's vector port: embed before the write transaction, attach inside it.

`prepare` calls the embedder outside any transaction, bounded by a deadline; a failure or a
timeout gives None and is logged. `attach` runs inside the remember transaction and never
calls a provider: it writes the canonical row and its vec0 mirror row, or queues an
`embedding_backfill` job for the tracker when there is no vector.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass

from signet_desktop.domain.memory import Memory
from signet_desktop.embedding.generations import Generation
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.provider import EmbeddingError, EmbeddingProvider, validate_vectors
from signet_desktop.embedding.tracker import BACKFILL_JOB
from signet_desktop.embedding.vectors import VectorWrite, vector_blob
from signet_desktop.queue import jobs
from signet_desktop.storage import memories
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.guard import assert_provider_call_allowed

log = logging.getLogger(__name__)

DEFAULT_PREPARE_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class PreparedVector:
    """A checked vector for one text, tied to the generation it belongs to."""

    generation: Generation
    blob: bytes


class EmbeddingVectors:
    """`MemoryVectors` over an embedder and the vector index."""

    def __init__(
        self,
        index: VectorIndex,
        embedder: EmbeddingProvider,
        generation: Generation,
        *,
        prepare_timeout_s: float = DEFAULT_PREPARE_TIMEOUT_S,
    ) -> None:
        if (embedder.model, embedder.dimensions) != (generation.model, generation.dimensions):
            raise ValueError("the generation does not belong to this embedder")
        self._index = index
        self._embedder = embedder
        self._generation = generation
        self._timeout_s = prepare_timeout_s
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="remember-embed")

    def close(self) -> None:
        """Stop the embedding thread (an embedding in flight is abandoned)."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def prepare(self, text: str) -> PreparedVector | None:
        """The text's vector, or None when the embedder fails or misses the deadline."""
        # The embedding runs on a pool thread, so check the caller's thread here.
        assert_provider_call_allowed("embedding a memory")
        future = self._pool.submit(self._embed, text)
        try:
            return future.result(timeout=self._timeout_s)
        except FutureTimeout:
            log.warning(
                "embedder %s did not answer within %.1f s; the memory is saved and a "
                "backfill job queued",
                self._embedder.name,
                self._timeout_s,
            )
        except EmbeddingError as exc:
            log.warning("embedding failed (%s); the memory is saved and a backfill job queued", exc)
        except Exception:  # a provider bug must not cost the memory: vectors are derived
            log.exception("embedder raised unexpectedly; the memory is saved, backfill queued")
        return None

    def _embed(self, text: str) -> PreparedVector:
        dims = self._generation.dimensions
        raw = self._embedder.embed([text])
        matrix = validate_vectors(raw, dims, self._embedder.name, expected_rows=1)
        return PreparedVector(self._generation, vector_blob(matrix[0], dims))

    def attach(self, conn: Connection, memory: Memory, prepared: object | None) -> bool:
        """Store the vector inside the remember transaction, or queue a backfill job."""
        if isinstance(prepared, PreparedVector):
            write = VectorWrite(memory.agent_id, memory.id, memory.content_hash, prepared.blob)
            self._index.store(conn, prepared.generation, [write])
            memories.set_embedding_model(conn, [memory.id], prepared.generation.model)
            return True
        jobs.enqueue(
            conn,
            BACKFILL_JOB,
            agent_id=memory.agent_id,
            memory_id=memory.id,
            payload={"reason": "embedder unavailable at remember"},
            dedupe_memory=True,
        )
        return False
