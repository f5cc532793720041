"""Documents: text, a URL or a file turned into `document_chunk` memories in the background.

A document row moves through visible states `queued -> extracting -> chunking -> embedding ->
indexing -> done`, or `failed` (with its error; the job retries within its budget), or
`deleted`. Here "extracting" means obtaining the text (fetch, read, HTML/PDF to text), not the
retired semantic fact extraction.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from signet_desktop.domain.errors import InvalidInput, check_match

SOURCE_TYPES = ("text", "url", "file")
STATUSES = (
    "queued",
    "extracting",
    "chunking",
    "embedding",
    "indexing",
    "done",
    "failed",
    "deleted",
)
ACTIVE_STATUSES = ("queued", "extracting", "chunking", "embedding", "indexing")
JOB_TYPE = "document_ingest"
CHUNK_MEMORY_TYPE = "document_chunk"
CHUNK_SOURCE_TYPE = "document"
DEFAULT_LIST_LIMIT = 50
MAX_LIST_LIMIT = 500
MAX_TITLE_CHARS = 500
MAX_METADATA_CHARS = 16_384
_DOCUMENT_ID = re.compile(r"doc_[0-9a-f]{32}")


def check_document_id(value: object) -> str:
    """A document id as the service makes them (`doc_<32 hex>`); anything else is refused."""
    return check_match(
        value, _DOCUMENT_ID, "document id must look like doc_<32 hex>", "document_id_invalid"
    )


def check_status(value: str | None) -> str | None:
    """A listing's status filter: one of STATUSES, or None for every live document."""
    if value is None or value in STATUSES:
        return value
    raise InvalidInput(f"status must be one of {', '.join(STATUSES)}", code="status_invalid")


@dataclass(frozen=True, slots=True)
class DocumentRequest:
    """`POST /api/documents` as the edges hand it over (types already checked).

    `content` for `text`, `url` for `url`, `path` for `file`; `title` and `content_type` are
    optional (a fetched `<title>` or the file name fills an empty title).
    """

    source_type: str
    content: str | None = None
    url: str | None = None
    path: str | None = None
    title: str | None = None
    content_type: str | None = None
    connector_id: str | None = None
    project: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DocumentTicket:
    """What a submit answers: the document, its state, and whether it already existed."""

    id: str
    status: str
    deduplicated: bool = False


@dataclass(frozen=True, slots=True)
class JobState:
    """The document's latest ingest job: its state and retry budget."""

    id: str
    status: str
    attempts: int
    max_attempts: int
    run_after: str | None
    error: str | None


@dataclass(frozen=True, slots=True)
class Document:
    """One document row (without its raw content), plus its latest job when it has one."""

    id: str
    agent_id: str
    project: str | None
    source_type: str
    source_url: str | None
    content_type: str | None
    content_hash: str | None
    title: str | None
    status: str
    error: str | None
    connector_id: str | None
    chunk_count: int
    memory_count: int
    metadata: Mapping[str, Any]
    created_at: str
    updated_at: str
    completed_at: str | None
    deleted_at: str | None
    job: JobState | None = None


@dataclass(frozen=True, slots=True)
class DocumentChunk:
    """One chunk of a document: its memory, position and text."""

    memory_id: str
    chunk_index: int
    content: str
    content_hash: str
    created_at: str
    is_deleted: bool


@dataclass(frozen=True, slots=True)
class DeleteOutcome:
    """A delete: the document's state before, and how many chunk memories it soft-deleted."""

    id: str
    previous_status: str
    memories_deleted: int
