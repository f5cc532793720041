"""The document worker: `document_ingest` jobs through the generic queue worker.

One job takes one document from `queued` to `done`: extracting (the given text, a fetch, or a
file read, reduced to text by `ingest/extract.py`; the text and a found title are stored),
chunking (`ingest/chunking.py`), embedding (chunk memories written and embedded in batches
through `MemoryService.remember_many`), indexing (links counted, `done`). Nothing here runs
inside a write transaction except the short state changes; fetching, extracting, chunking
and embedding happen between them.

Restarts and retries resume: the stored text is reused, chunking is deterministic, a chunk
memory's `source_id` is `<document id>:<chunk hash>` (so remember_many finds one a killed
attempt already wrote) and links are `INSERT OR IGNORE`; a document ends `done` once with
one memory per distinct chunk. Each batch is written under the document's lock after a
check that the document still exists: a delete (which takes the same lock) cancels the rest.

Stopping: before each batch (`batches`: one embedding call of about half a
second) the handler checks its worker's stop; a stopping worker puts the document back to
`queued` and its job back to pending, and the next start resumes where it left off.

A failed attempt leaves the document `failed` with its error at once; while its job has
attempts left the retry takes it through the states again (`document.finished` says
`retrying`). `SIGNET_DOCUMENT_FAULT=<step>[:<n>]` kills the
process at a named step (crash tests; see `STEPS`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from signet_desktop.config.pipeline import (
    CHUNK_OVERLAP_TOKENS,
    CHUNK_TOKENS,
    DocumentsConfig,
    PipelineV2Config,
)
from signet_desktop.domain.documents import CHUNK_MEMORY_TYPE, CHUNK_SOURCE_TYPE, JOB_TYPE, Document
from signet_desktop.domain.errors import SignetError
from signet_desktop.domain.events import DocumentFinished, DocumentProgress, EventSink
from signet_desktop.embedding.native import DEFAULT_MAX_BATCH_TOKENS
from signet_desktop.embedding.window import model_window
from signet_desktop.ingest import extract as extraction
from signet_desktop.ingest.chunking import Chunk, chunk_text
from signet_desktop.ingest.errors import IngestError, SourceRejected
from signet_desktop.ingest.fetch import FetchSettings, fetch
from signet_desktop.queue import jobs
from signet_desktop.queue.worker import QueueWorker, WorkerSettings, check_stop, stopping
from signet_desktop.safety import local_files
from signet_desktop.service.documents.service import DOCUMENT_ACTOR, DocumentService
from signet_desktop.service.embeddings.batches import DEFAULT_MAX_CHARS
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.service.workers import WorkerDeclaration
from signet_desktop.storage import documents
from signet_desktop.storage.faults import FaultPoints
from signet_desktop.storage.handle import DatabaseHandle

log = logging.getLogger(__name__)

NAME = "documents"
FAULT_ENV = "SIGNET_DOCUMENT_FAULT"
STEPS = ("extracted", "chunked", "batch.written", "batch.linked", "indexing")
# One remember_many call (one embedding call) per batch of chunks: one of the native
# embedder's token-bounded batches (about 2 full-window chunks), under the remember batcher's
# character limit so the call is not split. A quit waits for the batch in flight within the
# worker's 0.8 s stop budget: two batches a call (one per embedder thread) missed it at load 8
# in 2 of 3 runs of the quit-during-ingest test, and the job was abandoned with the database
# closed under it; one batch a call passed 3 of 3.
BATCH_TOKENS = DEFAULT_MAX_BATCH_TOKENS
BATCH_CHARS = DEFAULT_MAX_CHARS
BATCH_CHUNKS = 64
DELETE_YIELD_S = 0.005


class Cancelled(Exception):
    """The document was deleted while its job ran: stop, write nothing more."""


def batches(chunks: Sequence[Chunk]) -> list[list[Chunk]]:
    """Consecutive chunks in batches within BATCH_TOKENS (with [CLS]/[SEP]), BATCH_CHARS and
    BATCH_CHUNKS; a chunk over a limit alone (one sized in characters only) is its own batch."""
    out: list[list[Chunk]] = []
    current: list[Chunk] = []
    tokens = chars = 0
    for chunk in chunks:
        size = chunk.tokens + 2
        if current and (
            tokens + size > BATCH_TOKENS
            or chars + len(chunk.text) > BATCH_CHARS
            or len(current) >= BATCH_CHUNKS
        ):
            out.append(current)
            current, tokens, chars = [], 0, 0
        current.append(chunk)
        tokens += size
        chars += len(chunk.text)
    if current:
        out.append(current)
    return out


def faults_from_env() -> FaultPoints:
    """The fault point `SIGNET_DOCUMENT_FAULT` names, if any (a hit kills the process)."""
    return FaultPoints.from_variable(FAULT_ENV)


@dataclass(frozen=True, slots=True)
class IngestSettings:
    """What one ingest may fetch and how it chunks."""

    fetch: FetchSettings
    chunk_size: int
    chunk_overlap: int
    chunk_tokens: int = CHUNK_TOKENS
    chunk_overlap_tokens: int = CHUNK_OVERLAP_TOKENS

    @classmethod
    def from_config(cls, config: DocumentsConfig) -> IngestSettings:
        return cls(
            fetch=FetchSettings(
                max_bytes=config.max_content_bytes,
                timeout_s=config.fetch_timeout_ms / 1000,
                max_redirects=config.max_redirects,
                allow_private=config.allow_private_networks,
            ),
            chunk_size=config.chunk_size,
            chunk_overlap=config.chunk_overlap,
            chunk_tokens=config.chunk_tokens,
            chunk_overlap_tokens=config.chunk_overlap_tokens,
        )


class DocumentIngest:
    """The `document_ingest` handler: one job, one document (see the module docstring)."""

    def __init__(
        self,
        db: DatabaseHandle,
        service: DocumentService,
        settings: IngestSettings,
        *,
        faults: FaultPoints | None = None,
        lease_ms: int = jobs.DEFAULT_LEASE_MS,
    ) -> None:
        self._db = db
        self._service = service
        self.settings = settings
        self._faults = faults or FaultPoints()
        self._lease_ms = lease_ms

    def __call__(self, job: jobs.Job) -> Mapping[str, Any]:
        """Ingest the job's document; raises (after recording the error) when it fails."""
        document_id = job.document_id or str(job.payload.get("documentId", ""))
        found = documents.get_any(self._db.reader(), document_id)
        if found is None or found.status == "deleted":
            return {"documentId": document_id, "cancelled": True}
        if found.status == "done":
            return {"documentId": document_id, "skipped": "done"}
        try:
            return self._ingest(found, job)
        except Cancelled:
            log.info("document %s was deleted while it was ingested; stopped", document_id)
            return {"documentId": document_id, "cancelled": True}
        except Exception as exc:
            if not stopping():  # stopping, the job goes back (`released`): not a failure
                self._record_failure(found, job, exc)
            raise

    def _ingest(self, document: Document, job: jobs.Job) -> Mapping[str, Any]:
        self._advance(document, "extracting")
        # A file is read with the roots of whoever submitted it (the local user or a token).
        text = self._text(document, local=job.payload.get("reader") != "remote")
        self._renew(job)
        self._faults.hit("extracted")
        check_stop()
        chunks = self._chunks(text)
        if not chunks:  # only control characters or whitespace once normalised
            raise SourceRejected("the document has no text")
        self._faults.hit("chunked")
        self._advance(document, "embedding", total=len(chunks))
        linked = self._write_chunks(document, chunks, job)
        self._advance(document, "indexing", done=len(chunks), total=len(chunks))
        self._faults.hit("indexing")
        with self._db.write() as conn:
            memory_count = len(
                {memory_id for _, memory_id, _ in documents.linked_chunks(conn, document.id)}
            )
            if not documents.set_done(
                conn, document.id, chunk_count=len(chunks), memory_count=memory_count
            ):
                raise Cancelled
        self._service.publish(
            DocumentFinished(
                agent_id=document.agent_id,
                document_id=document.id,
                status="done",
                chunk_count=len(chunks),
            )
        )
        return {"documentId": document.id, "chunks": len(chunks), "linked": linked}

    def _chunks(self, text: str) -> list[Chunk]:
        """The text's chunks, each within the embedder's window (in the MiniLM tokenizer's
        tokens) and the character limits."""
        settings = self.settings
        return chunk_text(
            text,
            settings.chunk_size,
            settings.chunk_overlap,
            tokens=settings.chunk_tokens,
            overlap_tokens=settings.chunk_overlap_tokens,
            counter=model_window(),
        )

    # -- extracting -----------------------------------------------------------------------

    def _text(self, document: Document, *, local: bool) -> str:
        """The document's text: stored already (given, or by an earlier attempt), else read."""
        stored = documents.raw_content(self._db.reader(), document.id)
        if stored is not None:
            with self._db.write() as conn:
                if not documents.set_status(conn, document.id, "chunking"):
                    raise Cancelled
            self._progress(document, "chunking")
            return stored
        body, media, charset, name = self._source(document, local)
        extracted = extraction.extract(body, media, charset=charset)
        title = extracted.title or (Path(name).name if name else None)
        with self._db.write() as conn:
            stored_ok = documents.set_content(
                conn,
                document.id,
                text=extracted.text,
                content_hash=hashlib.sha256(body).hexdigest(),
                content_type=extracted.content_type,
                title=title,
            )
        if not stored_ok:
            raise Cancelled
        self._progress(document, "chunking")
        return extracted.text

    def _source(self, document: Document, local: bool) -> tuple[bytes, str, str | None, str | None]:
        """(bytes, media type, charset, file name) of a URL or file document."""
        url = document.source_url or ""
        if document.source_type == "url":
            fetched = fetch(url, self.settings.fetch)
            media = extraction.media_type_of(fetched.body, fetched.content_type)
            return fetched.body, media, fetched.charset, None
        if document.source_type == "file":
            path = Path(unquote(urlsplit(url).path))
            roots = self._service.limits.file_roots.for_caller(local)
            body = _read_file(path, roots, self.settings.fetch.max_bytes)
            return (
                body,
                extraction.media_type_of(body, document.content_type, path.name),
                None,
                str(path),
            )
        raise SourceRejected(f"document {document.id} has no text to ingest")

    # -- chunks ---------------------------------------------------------------------------

    def _write_chunks(self, document: Document, chunks: Sequence[Chunk], job: jobs.Job) -> int:
        """Write and link the chunks not linked yet, a batch at a time; returns links added.

        Each batch's link transaction also renews the job's lease, so a document that takes
        longer than one lease (thousands of chunks) is never released as stale while it runs.
        """
        done = {h for _, _, h in documents.linked_chunks(self._db.reader(), document.id)}
        todo = [chunk for chunk in chunks if chunk.content_hash not in done]
        added = 0
        finished = len(chunks) - len(todo)
        for batch in batches(todo):
            check_stop()
            while self._service.deleting(document.id):  # let a waiting delete take the lock
                time.sleep(DELETE_YIELD_S)
            with self._service.lock(document.id):
                current = documents.get_any(self._db.reader(), document.id)
                if current is None or current.status == "deleted":
                    raise Cancelled
                outcomes = self._service.memories.remember_many(
                    [self._request(document, current.title, chunk) for chunk in batch],
                    DOCUMENT_ACTOR,
                )
                self._faults.hit("batch.written")
                links = [(c.index, o.memory.id) for c, o in zip(batch, outcomes, strict=True)]
                with self._db.write() as conn:
                    added += documents.link_chunks(conn, document.id, links)
                    jobs.renew(conn, job, lease_ms=self._lease_ms)
                self._faults.hit("batch.linked")
            finished += len(batch)
            self._progress(document, "embedding", done=finished, total=len(chunks))
        return added

    def _request(self, document: Document, title: str | None, chunk: Chunk) -> RememberRequest:
        return RememberRequest(
            content=chunk.text,
            agent_id=document.agent_id,
            type=CHUNK_MEMORY_TYPE,
            project=document.project,
            source_type=CHUNK_SOURCE_TYPE,
            source_id=f"{document.id}:{chunk.content_hash}",
            metadata={"document": {"id": document.id, "title": title, "chunkIndex": chunk.index}},
            parse_prefixes=False,  # a chunk that begins "critical:" is text, not an instruction
        )

    # -- state ----------------------------------------------------------------------------

    def _renew(self, job: jobs.Job) -> None:
        if job.lease_token is not None:
            with self._db.write() as conn:
                jobs.renew(conn, job, lease_ms=self._lease_ms)

    def _advance(
        self, document: Document, status: str, *, done: int = 0, total: int | None = None
    ) -> None:
        with self._db.write() as conn:
            if not documents.set_status(conn, document.id, status):
                raise Cancelled
        self._progress(document, status, done=done, total=total)

    def _progress(
        self, document: Document, status: str, *, done: int = 0, total: int | None = None
    ) -> None:
        self._service.publish(
            DocumentProgress(
                agent_id=document.agent_id,
                document_id=document.id,
                status=status,
                chunks_done=done,
                chunks_total=total,
            )
        )

    def released(self, job: jobs.Job) -> None:
        """Its job was given back mid-ingest (a stop): the document is `queued` again, and
        the next start resumes it where it left off."""
        document_id = job.document_id or str(job.payload.get("documentId", ""))
        with self._db.write() as conn:
            requeued = documents.requeue(conn, document_id)
            found = documents.get_any(conn, document_id) if requeued else None
        if found is not None:
            self._progress(found, "queued")

    def _record_failure(self, document: Document, job: jobs.Job, exc: Exception) -> None:
        final = job.attempts >= job.max_attempts
        message = str(exc) or type(exc).__name__
        try:
            with self._db.write() as conn:
                recorded = documents.set_failed(conn, document.id, message[:2000])
        except Exception:  # the job's own failure is what must be recorded; log this one
            log.exception("recording the failure of document %s failed", document.id)
            return
        if recorded:
            self._service.publish(
                DocumentFinished(
                    agent_id=document.agent_id,
                    document_id=document.id,
                    status="failed",
                    error=message,
                    retrying=not final,
                )
            )


def _read_file(path: Path, roots: Sequence[Path], limit: int) -> bytes:
    """The file's bytes, opened and then checked on the descriptor (roots, credential stores):
    a file swapped for a symlink since the submit is refused, never read."""
    try:
        with local_files.open_file(str(path), roots) as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > limit:
                raise SourceRejected(
                    f"{path.name} is {size:,} bytes; the limit is {limit:,} "
                    "(memory.pipelineV2.documents.maxContentBytes)"
                )
            body = handle.read(limit + 1)
    except SignetError as exc:
        raise SourceRejected(f"{exc.code}: {exc.message}") from None
    except OSError as exc:
        raise SourceRejected(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(body) > limit:
        raise SourceRejected(f"{path.name} grew past the limit of {limit:,} bytes")
    return body


def build_worker(
    db: DatabaseHandle,
    handler: DocumentIngest,
    *,
    settings: WorkerSettings,
    events: EventSink | None = None,
) -> QueueWorker:
    """A queue worker over `document_ingest` jobs running `handler`."""
    return QueueWorker(
        db,
        name=NAME,
        job_types=(JOB_TYPE,),
        handler=handler,
        events=events,
        settings=settings,
        permanent=(SourceRejected,),  # empty, binary, too large, 404...: retrying cannot help
        expected=(IngestError,),  # a fetch that timed out or did not resolve: its message
        released=handler.released,
    )


def declaration(
    db: DatabaseHandle, service: DocumentService, config: PipelineV2Config, *, events: EventSink
) -> WorkerDeclaration:
    """The document worker as the daemon hosts it: one instance (one document at a time).

    Leases last `worker.leaseTimeoutMs`, the idle poll is `worker.pollMs`; the fault point
    comes from the environment (unset in production).
    """
    handler = DocumentIngest(
        db,
        service,
        IngestSettings.from_config(config.documents),
        faults=faults_from_env(),
        lease_ms=config.worker.lease_timeout_ms,
    )
    settings = WorkerSettings(
        lease_ms=config.worker.lease_timeout_ms, poll_s=config.worker.poll_ms / 1000
    )
    return WorkerDeclaration(
        name=NAME,
        job_types=(JOB_TYPE,),
        factory=lambda: build_worker(db, handler, settings=settings, events=events),
    )
