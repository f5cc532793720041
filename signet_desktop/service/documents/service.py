"""Documents: submit text, a URL or a file for ingest; read, list and delete them, scoped by agent.

`submit` validates everything before writing, then in one transaction inserts the `queued`
document and its `document_ingest` job (`queue/jobs.py`); the document worker
(`service/documents/worker.py`) does the rest in the background. A second submit of the same
URL, or of the same content (sha256 of the source bytes), for the same agent answers the
existing document with `deduplicated`.

`delete` marks the document `deleted` and soft-deletes the chunk memories only it links, in
one transaction, under the document's lock: the worker holds that lock while it writes a batch
of chunks, and checks the document under it before each batch, so after `delete` returns no
chunk memory or link of that document is ever written again: a pending job is cancelled in
the same transaction, a running one stops at its next check and completes as cancelled.
"""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from signet_desktop.config.pipeline import DocumentsConfig
from signet_desktop.domain import scope
from signet_desktop.domain.documents import (
    DEFAULT_LIST_LIMIT,
    JOB_TYPE,
    MAX_LIST_LIMIT,
    MAX_METADATA_CHARS,
    MAX_TITLE_CHARS,
    SOURCE_TYPES,
    DeleteOutcome,
    Document,
    DocumentChunk,
    DocumentRequest,
    DocumentTicket,
    check_document_id,
    check_status,
)
from signet_desktop.domain.errors import InvalidInput, NotFound
from signet_desktop.domain.events import (
    DiscardEvents,
    DocumentFinished,
    DocumentProgress,
    EventSink,
)
from signet_desktop.domain.memory import Actor
from signet_desktop.queue import jobs
from signet_desktop.safety import local_files
from signet_desktop.safety.local_files import FileRoots
from signet_desktop.service.memories.service import MemoryService
from signet_desktop.storage import documents
from signet_desktop.storage.handle import DatabaseHandle

MAX_URL_CHARS = 4096
MAX_CHUNK_PAGE = 1000
LOCK_STRIPES = 64
DOCUMENT_ACTOR = Actor(changed_by="document-ingest", actor_type="system")


@dataclass(frozen=True, slots=True)
class DocumentLimits:
    """What the service accepts: byte limit, chunking, retry budget, where files may live."""

    max_content_bytes: int
    chunk_size: int
    chunk_overlap: int
    max_attempts: int = jobs.DEFAULT_MAX_ATTEMPTS
    file_roots: FileRoots = field(default_factory=FileRoots)

    @classmethod
    def from_config(
        cls,
        config: DocumentsConfig,
        *,
        max_attempts: int,
        file_roots: Sequence[Path],
        configured_roots: Sequence[Path] = (),
    ) -> DocumentLimits:
        """`file_roots` are the local user's defaults; `configured_roots` is `files.roots`."""
        return cls(
            max_content_bytes=config.max_content_bytes,
            chunk_size=config.chunk_size,
            chunk_overlap=config.chunk_overlap,
            max_attempts=max_attempts,
            file_roots=FileRoots.of(configured_roots, file_roots),
        )


def default_file_roots(workspace: Path) -> tuple[Path, ...]:
    """Where the local user's `file` paths may be: the home directory, /tmp, the workspace."""
    return (Path.home(), Path("/tmp"), workspace)


class DocumentService:
    """Document ingest for every agent over one database; every call is scoped to an agent."""

    def __init__(
        self,
        db: DatabaseHandle,
        memories: MemoryService,
        limits: DocumentLimits,
        *,
        events: EventSink | None = None,
    ) -> None:
        self._db = db
        self.memories = memories
        self.limits = limits
        self._events: EventSink = events or DiscardEvents()
        self._locks = tuple(threading.Lock() for _ in range(LOCK_STRIPES))
        self._deleting: set[str] = set()
        self._deleting_lock = threading.Lock()

    @property
    def max_request_bytes(self) -> int:
        """The HTTP body limit of POST /api/documents: the content limit plus JSON's escapes."""
        return self.limits.max_content_bytes * 2 + 64 * 1024

    # -- operations -----------------------------------------------------------------------

    def submit(
        self, agent_id: str, request: DocumentRequest, *, local: bool = True
    ) -> DocumentTicket:
        """Queue a document for ingest; the existing one (`deduplicated`) for a repeat.

        Refuses (InvalidInput, nothing written): an unknown source type, empty or oversized
        text, text with NUL bytes, a URL that is not http(s), a file path that is relative,
        missing or not a regular file, a long title or big metadata; (Forbidden) a file
        outside the roots the caller may read (`local`: the machine's own user) or in a
        credential store. The worker checks the file again as it opens it.
        """
        agent_id = scope.check_agent_id(agent_id)
        checked = self._check(request)
        source_url, digest, content = _source_of(checked, self.limits, local)
        connector = checked.connector_id
        if connector is not None and not documents.connector_exists(
            self._db.reader(), agent_id, connector
        ):
            raise InvalidInput(f"connector {connector} not found", code="connector_not_found")
        found = documents.find_live(
            self._db.reader(), agent_id, content_hash=digest, url=source_url
        )
        if found is not None:
            return DocumentTicket(found.id, found.status, deduplicated=True)
        document_id = f"doc_{uuid.uuid4().hex}"
        with self._db.write() as conn:
            found = documents.find_live(conn, agent_id, content_hash=digest, url=source_url)
            if found is not None:
                return DocumentTicket(found.id, found.status, deduplicated=True)
            documents.insert_document(
                conn,
                document_id,
                agent_id=agent_id,
                project=checked.project,
                source_type=checked.source_type,
                source_url=source_url,
                content_type=checked.content_type,
                content_hash=digest,
                title=checked.title,
                raw_content=content,
                connector_id=checked.connector_id,
                metadata=checked.metadata,
            )
            jobs.enqueue(
                conn,
                JOB_TYPE,
                agent_id=agent_id,
                document_id=document_id,
                payload={"documentId": document_id, "reader": "local" if local else "remote"},
                max_attempts=self.limits.max_attempts,
            )
        self._events.publish(
            DocumentProgress(agent_id=agent_id, document_id=document_id, status="queued")
        )
        return DocumentTicket(document_id, "queued")

    def get(self, agent_id: str, document_id: str) -> Document:
        """One document of this agent with its latest job; NotFound for another agent's."""
        agent_id = scope.check_agent_id(agent_id)
        document_id = check_document_id(document_id)
        conn = self._db.reader()
        found = documents.get_document(conn, agent_id, document_id)
        if found is None:
            raise NotFound(f"document {document_id} not found", code="document_not_found")
        return replace(found, job=documents.latest_job(conn, document_id))

    def list(
        self, agent_id: str, *, status: str | None = None, limit: int = DEFAULT_LIST_LIMIT
    ) -> list[Document]:
        """The agent's documents newest first: live ones, or only those in `status`."""
        agent_id = scope.check_agent_id(agent_id)
        if not 1 <= limit <= MAX_LIST_LIMIT:
            raise InvalidInput(f"limit must be 1..{MAX_LIST_LIMIT}", code="bad_limit")
        return documents.list_documents(
            self._db.reader(), agent_id, status=check_status(status), limit=limit
        )

    def chunks(
        self, agent_id: str, document_id: str, *, limit: int = MAX_CHUNK_PAGE, offset: int = 0
    ) -> Sequence[DocumentChunk]:
        """The document's chunks in order, each with its memory id and text."""
        self.get(agent_id, document_id)
        if not 1 <= limit <= MAX_CHUNK_PAGE or offset < 0:
            raise InvalidInput(f"limit must be 1..{MAX_CHUNK_PAGE}", code="bad_paging")
        return documents.chunks_page(self._db.reader(), document_id, limit=limit, offset=offset)

    def delete(
        self,
        agent_id: str,
        document_id: str,
        reason: str | None = None,
        *,
        actor: Actor | None = None,
    ) -> DeleteOutcome:
        """Delete the document and soft-delete the chunk memories only it links.

        Work in flight is cancelled (see the module docstring); a deleted document is
        NotFound to a second delete. Chunks an other live document also links stay.
        """
        agent_id = scope.check_agent_id(agent_id)
        document_id = check_document_id(document_id)
        actor = actor or DOCUMENT_ACTOR
        scope.check_actor(actor)
        why = (reason or "").strip()[:500] or "document deleted"
        seen = documents.get_document(self._db.reader(), agent_id, document_id)
        if seen is None or seen.status == "deleted":
            raise NotFound(f"document {document_id} not found", code="document_not_found")
        with self._announced(document_id), self.lock(document_id), self._db.write() as conn:
            found = documents.get_document(conn, agent_id, document_id)
            if found is None or found.status == "deleted":
                raise NotFound(f"document {document_id} not found", code="document_not_found")
            documents.set_deleted(conn, agent_id, document_id, None)
            job = documents.latest_job(conn, document_id)
            if job is not None and job.status == "pending":  # a running one stops by itself
                jobs.cancel(conn, job.id, now=datetime.now(UTC), reason="document deleted")
            owned = documents.owned_memory_ids(conn, document_id)
            for memory_id in owned:
                self.memories.forget(agent_id, memory_id, reason=why, force=True, actor=actor)
        self._events.publish(
            DocumentFinished(agent_id=agent_id, document_id=document_id, status="deleted")
        )
        return DeleteOutcome(document_id, found.status, len(owned))

    # -- for the worker -------------------------------------------------------------------

    @contextmanager
    def lock(self, document_id: str) -> Iterator[None]:
        """The document's lock: a delete and a worker's batch of chunk writes never overlap."""
        stripe = self._locks[zlib.crc32(document_id.encode()) % LOCK_STRIPES]
        with stripe:
            yield

    def deleting(self, document_id: str) -> bool:
        """Is a delete of this document waiting for its lock? (The worker then lets it in.)"""
        with self._deleting_lock:
            return document_id in self._deleting

    @contextmanager
    def _announced(self, document_id: str) -> Iterator[None]:
        # Locks are not fair: without this, a worker releasing and retaking the lock between
        # batches could keep a delete waiting for many batches.
        with self._deleting_lock:
            self._deleting.add(document_id)
        try:
            yield
        finally:
            with self._deleting_lock:
                self._deleting.discard(document_id)

    def publish(self, event: DocumentProgress | DocumentFinished) -> None:
        """Publish a document event (the worker's, after its commits)."""
        self._events.publish(event)

    def _check(self, request: DocumentRequest) -> DocumentRequest:
        if request.source_type not in SOURCE_TYPES:
            raise InvalidInput(
                f"source_type must be one of {', '.join(SOURCE_TYPES)}", code="source_type_invalid"
            )
        title = (request.title or "").strip() or None
        if title is not None and (len(title) > MAX_TITLE_CHARS or "\x00" in title):
            raise InvalidInput(f"title is longer than {MAX_TITLE_CHARS}", code="title_invalid")
        try:
            metadata = json.dumps(dict(request.metadata), ensure_ascii=False)
        except (TypeError, ValueError):
            raise InvalidInput("metadata must be a JSON object", code="metadata_invalid") from None
        if len(metadata) > MAX_METADATA_CHARS:
            raise InvalidInput(
                f"metadata is larger than {MAX_METADATA_CHARS:,} characters",
                code="metadata_too_large",
            )
        content_type = (request.content_type or "").strip().lower() or None
        if content_type is not None and len(content_type) > 200:
            raise InvalidInput("content_type is too long", code="content_type_invalid")
        return replace(request, title=title, content_type=content_type)


def _source_of(
    request: DocumentRequest, limits: DocumentLimits, local: bool
) -> tuple[str | None, str | None, str | None]:
    """(source_url, content hash, raw content) the submit stores, after checking the source."""
    if request.source_type == "text":
        text = request.content
        if text is None or not text.strip():
            raise InvalidInput("content is empty", code="content_empty")
        if "\x00" in text:
            raise InvalidInput("content contains a NUL byte (binary data?)", code="content_binary")
        raw = text.encode("utf-8", errors="surrogatepass")
        if len(raw) > limits.max_content_bytes:
            raise InvalidInput(
                f"content is {len(raw):,} bytes; the limit is {limits.max_content_bytes:,} "
                "(memory.pipelineV2.documents.maxContentBytes)",
                code="content_too_large",
            )
        return None, hashlib.sha256(raw).hexdigest(), text
    if request.source_type == "url":
        return check_url(request.url), None, None
    roots = limits.file_roots.for_caller(local)
    path = local_files.check_path(request.path, roots)
    return path.as_uri(), _file_hash(path, roots, limits.max_content_bytes), None


def check_url(url: str | None) -> str:
    """An absolute http(s) URL with a host, without its fragment (the dedupe key)."""
    if not url or len(url) > MAX_URL_CHARS:
        raise InvalidInput("url is required (at most 4096 characters)", code="url_invalid")
    try:
        parts = urlsplit(url.strip())
        _ = parts.port
    except ValueError:
        raise InvalidInput("url is not a valid URL", code="url_invalid") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise InvalidInput("only http(s) URLs with a host can be fetched", code="url_scheme")
    return urlunsplit((parts.scheme.lower(), parts.netloc, parts.path or "/", parts.query, ""))


def _file_hash(path: Path, roots: Sequence[Path], limit: int) -> str | None:
    """sha256 of the file's bytes (opened through the roots check); None when it is over the
    limit (the worker says so)."""
    digest = hashlib.sha256()
    size = 0
    try:
        with local_files.open_file(str(path), roots) as handle:
            while block := handle.read(1 << 20):
                size += len(block)
                if size > limit:
                    return None
                digest.update(block)
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}", code="path_unreadable") from None
    return digest.hexdigest()
