"""The remember path's vectors: inline (prepare + attach) or following the write in batches.

Inline: `prepare` calls the embedder outside any transaction, bounded by a deadline; a
failure or a timeout gives None and is logged. `attach` runs inside the remember transaction
and never calls a provider: it writes the canonical row and its vec0 mirror row, or queues an
`embedding_backfill` job for the tracker when there is no vector.

Following (the daemon's remember path): `follow` hands committed memories to the
micro-batcher (`service/embeddings/batches.py`), whose thread calls `store_batch`; `store_now`
runs the same batches on the caller's thread (`remember_many`). A batch is embedded in one
provider call outside any transaction and written in one short transaction, always into this
embedder's own generation; a batch the embedder refuses becomes backfill jobs.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import AbstractContextManager
from dataclasses import dataclass

from signet_desktop.domain.events import DiscardEvents, EventSink, MemoriesEmbedded
from signet_desktop.domain.memory import Memory
from signet_desktop.embedding.generations import Generation
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.priority import request_pool
from signet_desktop.embedding.provider import EmbeddingError, EmbeddingProvider, validate_vectors
from signet_desktop.embedding.tracker import BACKFILL_JOB, memories_for_jobs
from signet_desktop.embedding.vectors import PendingVector, VectorWrite, embed_writes, vector_blob
from signet_desktop.queue import jobs
from signet_desktop.queue.worker import JobInterrupted, run_interruptibly
from signet_desktop.service.embeddings.batches import VectorBatcher, split_batches
from signet_desktop.storage import memories
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.guard import assert_provider_call_allowed
from signet_desktop.storage.handle import DatabaseHandle

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
        db: DatabaseHandle | None = None,
        autostart: bool = True,
        events: EventSink | None = None,
    ) -> None:
        if (embedder.model, embedder.dimensions) != (generation.model, generation.dimensions):
            raise ValueError("the generation does not belong to this embedder")
        self._index = index
        self._db = db
        self._events = events or DiscardEvents()
        self._model = generation.model
        self._embedder = embedder
        self._generation = generation
        self._timeout_s = prepare_timeout_s
        self._pool = request_pool(1, "remember-embed")
        self.batcher = VectorBatcher(self.store_batch, autostart=autostart)

    def close(self) -> None:
        """Finish queued vectors briefly, then stop the threads (in-flight work is abandoned)."""
        self.batcher.close()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def follow(self, memories_: Sequence[Memory]) -> None:
        """Queue vectors for committed memories; the batcher thread embeds them."""
        self.batcher.submit([PendingVector.of(memory) for memory in memories_])

    def store_now(self, memories_: Sequence[Memory]) -> set[str]:
        """Embed and store these memories' vectors now, in the batcher's batches; the ids done."""
        done: set[str] = set()
        items = [PendingVector.of(memory) for memory in memories_]
        for batch in split_batches(items, self.batcher.max_items, self.batcher.max_chars):
            done |= self.store_batch(batch, check=False)
        return done

    def store_batch(self, items: Sequence[PendingVector], *, check: bool = True) -> set[str]:
        """One batch: one provider call, one write; backfill jobs if the embedder refuses it.

        With `check`, memories deleted or embedded meanwhile (the tracker's scan also finds
        not-yet-embedded memories) are left out first. Returns the ids that got a vector.
        """
        assert_provider_call_allowed("embedding remembered memories")
        todo = self._still_missing(items) if check else list(items)
        if not todo:
            return set()
        try:
            # A stopping queue worker (document ingest) leaves without waiting for the call:
            # nothing is written for this batch, and the tracker embeds the memories later.
            writes = run_interruptibly(lambda: self._embed_batch(todo))
        except JobInterrupted:
            raise
        except Exception as exc:  # a provider bug must not cost the memories: vectors are derived
            log.warning(
                "embedding a batch of %d memories failed (%s); backfill jobs queued", len(todo), exc
            )
            with self._db_write() as conn:
                for item in todo:
                    self._queue_backfill(conn, item.agent_id, item.memory_id, "batch failed")
            return set()
        with self._db_write() as conn:
            self._index.store(conn, self._generation, writes)
            memories.set_embedding_model(conn, [w.source_id for w in writes], self._model)
        self._publish_embedded(writes)
        return {w.source_id for w in writes}

    def _publish_embedded(self, writes: Sequence[VectorWrite]) -> None:
        """After the commit: one `memory.embedded` per agent of the batch."""
        by_agent: dict[str, list[str]] = {}
        for write in writes:
            by_agent.setdefault(write.agent_id, []).append(write.source_id)
        for agent_id, ids in by_agent.items():
            self._events.publish(
                MemoriesEmbedded(
                    agent_id=agent_id, memory_ids=tuple(ids), generation=self._generation.id
                )
            )

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

    def _embed_batch(self, items: Sequence[PendingVector]) -> list[VectorWrite]:
        return embed_writes(self._embedder, self._generation.dimensions, items)

    def _still_missing(self, items: Sequence[PendingVector]) -> list[PendingVector]:
        """The items still live and without a current vector (the tracker's own query)."""
        params = {
            "generation_id": self._generation.id,
            "ids": json.dumps([item.memory_id for item in items]),
        }
        reader = self._database().reader()
        rows = reader.execute(memories_for_jobs(reader), params).fetchall()
        keep = {str(r["id"]) for r in rows if not r["is_deleted"] and not r["embedded"]}
        return [item for item in items if item.memory_id in keep]

    def _database(self) -> DatabaseHandle:
        if self._db is None:
            raise RuntimeError("vectors that follow the write need the database (db=)")
        return self._db

    def _db_write(self) -> AbstractContextManager[Connection]:
        return self._database().write()

    @staticmethod
    def _queue_backfill(conn: Connection, agent_id: str, memory_id: str, reason: str) -> None:
        jobs.enqueue(
            conn,
            BACKFILL_JOB,
            agent_id=agent_id,
            memory_id=memory_id,
            payload={"reason": reason},
            dedupe_memory=True,
        )

    def attach(self, conn: Connection, memory: Memory, prepared: object | None) -> bool:
        """Store the vector inside the remember transaction, or queue a backfill job."""
        if isinstance(prepared, PreparedVector):
            write = VectorWrite(memory.agent_id, memory.id, memory.content_hash, prepared.blob)
            self._index.store(conn, prepared.generation, [write])
            memories.set_embedding_model(conn, [memory.id], prepared.generation.model)
            return True
        self._queue_backfill(conn, memory.agent_id, memory.id, "embedder unavailable at remember")
        return False
