"""What the Documents pane shows, computed without Qt: the pipeline strip, rows and detail."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from signet_desktop.domain.documents import Document, DocumentChunk

STAGES = ("queued", "extracting", "chunking", "embedding", "indexing", "done")
CHUNK_PREVIEW_CHARS = 160


@dataclass(frozen=True, slots=True)
class Stage:
    """One step of the strip: its label and `done`, `current`, `todo` or `failed`."""

    label: str
    state: str


@dataclass(frozen=True, slots=True)
class Progress:
    """Where a document is: its status and, while embedding/indexing, chunks done of total."""

    status: str
    chunks_done: int = 0
    chunks_total: int | None = None
    retrying: bool = False


def progress_of(document: Document) -> Progress:
    """A listed document's progress: a queued one with an error (or a spent attempt) is
    waiting for its job's next attempt."""
    spent = document.job is not None and document.job.attempts > 0
    retrying = document.status == "queued" and (bool(document.error) or spent)
    return Progress(document.status, retrying=retrying)


def stages(progress: Progress) -> list[Stage]:
    """queued ▸ extracting ▸ chunking ▸ embedding ▸ indexing ▸ done, the current one marked;
    a failed document ends in `failed` instead of `done`."""
    status = progress.status
    if status == "failed":
        return [Stage(s, "todo") for s in STAGES[:-1]] + [Stage("failed", "failed")]
    if status == "deleted":
        return [Stage(s, "todo") for s in STAGES[:-1]] + [Stage("deleted", "failed")]
    at = STAGES.index(status) if status in STAGES else 0
    found = []
    for n, name in enumerate(STAGES):
        label = name
        if n == at and name in ("embedding", "indexing") and progress.chunks_total:
            label = f"{name} {progress.chunks_done}/{progress.chunks_total}"
        if n == at and name == "queued" and progress.retrying:
            label = "queued ↻"  # waiting for the job's next attempt
        state = "done" if n < at or status == "done" else "current" if n == at else "todo"
        found.append(Stage(label, state))
    return found


def title_of(document: Document) -> str:
    """The title, else the URL's last path part or host, else the file name, else the id."""
    if document.title:
        return document.title
    if document.source_url:
        parts = urlsplit(document.source_url)
        tail = parts.path.rstrip("/").rsplit("/", 1)[-1]
        return tail or parts.netloc or document.source_url
    return document.id


def source_text(document: Document) -> str:
    """`url · docs.example.com`, `file · notes.md`, or `text`."""
    if document.source_type == "url" and document.source_url:
        return f"url · {urlsplit(document.source_url).netloc}"
    if document.source_type == "file" and document.source_url:
        return f"file · {document.source_url.rsplit('/', 1)[-1]}"
    return document.source_type


def chunks_text(document: Document) -> str:
    n = document.chunk_count
    return f"{n} chunk" + ("" if n == 1 else "s") if n or document.status == "done" else ""


def meta_text(document: Document) -> str:
    """The row's second line: source, chunks, project."""
    folder = "from a folder source" if document.connector_id else ""
    parts = [source_text(document), chunks_text(document), document.project or "", folder]
    return " · ".join(p for p in parts if p)


def count_text(documents: list[Document]) -> str:
    """`3 documents · 1 working · 1 failed`."""
    n = len(documents)
    parts = [f"{n} document" + ("" if n == 1 else "s")]
    working = sum(d.status not in ("done", "failed", "deleted") for d in documents)
    failed = sum(d.status == "failed" for d in documents)
    if working:
        parts.append(f"{working} working")
    if failed:
        parts.append(f"{failed} failed")
    return " · ".join(parts)


def detail_lines(document: Document) -> list[tuple[str, str]]:
    """Label/value lines of the detail panel (empty values left out)."""
    job = document.job
    attempts = f"{job.attempts} of {job.max_attempts} ({job.status})" if job else ""
    lines = [
        ("Source", document.source_url or document.source_type),
        ("Type", document.content_type or ""),
        ("Status", document.status),
        ("Chunks", str(document.chunk_count) if document.chunk_count else ""),
        ("Memories", str(document.memory_count) if document.memory_count else ""),
        ("Project", document.project or ""),
        ("Ingest job", attempts),
        ("Next attempt", job.run_after if job and job.status == "pending" else ""),
        ("Added", document.created_at),
        ("Finished", document.completed_at or ""),
        ("Document", document.id),
    ]
    return [(label, value or "") for label, value in lines if value]


def chunk_text(chunk: DocumentChunk) -> str:
    """`#3  first words of the chunk…` (one line)."""
    flat = " ".join(chunk.content.split())
    if len(flat) > CHUNK_PREVIEW_CHARS:
        flat = flat[: CHUNK_PREVIEW_CHARS - 1] + "…"
    return f"#{chunk.chunk_index + 1}  {flat}"
