"""Document ingest over a real service and database: text, files, failures, scope, delete."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path

import pytest

from signet_desktop.api.views import event_json
from signet_desktop.domain.documents import DocumentRequest
from signet_desktop.domain.errors import InvalidInput, NotFound, SignetError
from signet_desktop.domain.events import DocumentFinished
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.embedding.provider import Vectors
from signet_desktop.embedding.window import model_window
from signet_desktop.service.facade import SignetService
from tests.support.documents import (
    config,
    count,
    drain,
    job_of,
    make_service,
    make_worker,
)

PARAGRAPH = "Signet keeps memories local. Each chunk becomes a memory. Recall finds it again."


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SignetService]:
    svc = make_service(tmp_path / "ws")
    yield svc
    svc.close()


def long_text(paragraphs: int) -> str:
    return "\n\n".join(f"Paragraph {n}. {PARAGRAPH}" for n in range(paragraphs))


def test_text_document_ends_done_with_linked_chunk_memories(service: SignetService) -> None:
    events = service.events.subscribe(agent_id=None)
    ticket = service.documents.submit(
        "default", DocumentRequest("text", content=long_text(80), title="Guide")
    )
    assert ticket.status == "queued" and not ticket.deduplicated
    assert drain(make_worker(service)) == 1
    document = service.documents.get("default", ticket.id)
    assert document.status == "done" and document.error is None
    assert document.chunk_count >= 3 and document.memory_count == document.chunk_count
    assert document.job is not None and document.job.status == "completed"
    chunks = service.documents.chunks("default", ticket.id)
    assert [c.chunk_index for c in chunks] == list(range(document.chunk_count))
    memory = service.memories.get("default", chunks[1].memory_id)
    assert memory.type == "document_chunk"
    assert memory.metadata["document"] == {"id": ticket.id, "title": "Guide", "chunkIndex": 1}
    statuses = [
        d.event.status  # type: ignore[attr-defined]
        for d in events.drain()
        if d.event.kind.startswith("document.")
    ]
    assert statuses[0] == "queued" and statuses[-1] == "done"
    assert {"extracting", "chunking", "embedding", "indexing"} <= set(statuses)


def test_same_content_or_url_is_deduplicated_per_agent(service: SignetService) -> None:
    first = service.documents.submit("default", DocumentRequest("text", content="alpha beta"))
    again = service.documents.submit("default", DocumentRequest("text", content="alpha beta"))
    other = service.documents.submit("other", DocumentRequest("text", content="alpha beta"))
    assert again.deduplicated and again.id == first.id
    assert not other.deduplicated and other.id != first.id
    url = service.documents.submit("default", DocumentRequest("url", url="http://x.test/a#top"))
    same = service.documents.submit("default", DocumentRequest("url", url="http://x.test/a"))
    assert same.deduplicated and same.id == url.id
    service.documents.delete("default", first.id, "redo")
    assert not service.documents.submit(
        "default", DocumentRequest("text", content="alpha beta")
    ).deduplicated


@pytest.mark.parametrize(
    ("request_", "code"),
    [
        (DocumentRequest("pdf", content="x"), "source_type_invalid"),
        (DocumentRequest("text", content="   "), "content_empty"),
        (DocumentRequest("text", content="a\x00b"), "content_binary"),
        (DocumentRequest("text", content="x" * 2049), "content_too_large"),
        (DocumentRequest("url", url="ftp://example.com/x"), "url_scheme"),
        (DocumentRequest("url", url="file:///etc/passwd"), "url_scheme"),
        (DocumentRequest("file", path="relative.txt"), "path_invalid"),
        (DocumentRequest("file", path="/etc/hostname"), "path_not_allowed"),
        (DocumentRequest("file", path="/tmp/signet-no-such-file.txt"), "path_not_found"),
        (DocumentRequest("text", content="x", title="t" * 501), "title_invalid"),
        (DocumentRequest("text", content="x", connector_id="con_missing"), "connector_not_found"),
    ],
)
def test_bad_requests_are_refused_and_write_nothing(
    tmp_path: Path, request_: DocumentRequest, code: str
) -> None:
    service = make_service(tmp_path / "ws", config(maxContentBytes=2048))
    try:
        with pytest.raises(SignetError) as refused:  # InvalidInput, Forbidden outside roots
            service.documents.submit("default", request_)
        assert refused.value.code == code
        assert count(service, "SELECT COUNT(*) FROM documents") == 0
        assert count(service, "SELECT COUNT(*) FROM memory_jobs") == 0
    finally:
        service.close()


def test_another_agent_cannot_read_list_or_delete(service: SignetService) -> None:
    ticket = service.documents.submit("alice", DocumentRequest("text", content=long_text(5)))
    drain(make_worker(service))
    with pytest.raises(NotFound):
        service.documents.get("bob", ticket.id)
    with pytest.raises(NotFound):
        service.documents.chunks("bob", ticket.id)
    with pytest.raises(NotFound):
        service.documents.delete("bob", ticket.id, "not mine")
    assert service.documents.list("bob") == []
    assert [d.id for d in service.documents.list("alice")] == [ticket.id]
    assert service.documents.get("alice", ticket.id).status == "done"


def test_files_markdown_html_and_pdf(service: SignetService, tmp_path: Path) -> None:
    markdown = tmp_path / "notes.md"
    markdown.write_text("# Release notes\n\n" + long_text(3), encoding="utf-8")
    html = tmp_path / "page.html"
    html.write_text(
        "<html><head><title>The Page</title><style>p{}</style><script>var x=1;</script></head>"
        f"<body><nav>Home | About</nav><article><h1>Heading</h1><p>{PARAGRAPH}</p>"
        f"<p>{PARAGRAPH} Again.</p></article></body></html>",
        encoding="utf-8",
    )
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(make_pdf("Quarterly report text inside a PDF page."))
    tickets = [
        service.documents.submit("default", DocumentRequest("file", path=str(p)))
        for p in (markdown, html, pdf)
    ]
    drain(make_worker(service))
    docs = [service.documents.get("default", t.id) for t in tickets]
    assert [d.status for d in docs] == ["done", "done", "done"], [d.error for d in docs]
    assert [d.title for d in docs] == ["Release notes", "The Page", "report.pdf"]
    assert [d.content_type for d in docs] == ["text/markdown", "text/html", "application/pdf"]
    html_text = " ".join(c.content for c in service.documents.chunks("default", docs[1].id))
    assert "Signet keeps memories local" in html_text
    assert "var x" not in html_text and "p{}" not in html_text
    pdf_text = service.documents.chunks("default", docs[2].id)[0].content
    assert "Quarterly report" in pdf_text


@pytest.mark.parametrize(
    ("name", "body", "message"),
    [
        ("blob.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 10, "binary data"),
        ("empty.txt", b"", "no text"),
        ("big.txt", b"word " * 4_200_000, "the limit is"),  # 21 MB
        ("broken.pdf", b"%PDF-1.4\n1 0 obj << /Type /Catalog >>\ngarbage", "PDF"),
    ],
)
def test_unusable_files_fail_with_their_error_and_are_not_retried(
    service: SignetService, tmp_path: Path, name: str, body: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(body)
    ticket = service.documents.submit("default", DocumentRequest("file", path=str(path)))
    worker = make_worker(service)
    assert worker.run_job() is not None
    final = service.documents.get("default", ticket.id)
    assert final.status == "failed" and message in (final.error or "")
    # The source itself is unusable: a retry cannot help, so the one attempt is the last.
    assert final.job is not None and final.job.status == "dead" and final.job.attempts == 1
    assert worker.run_job() is None  # nothing left to lease
    assert count(service, "SELECT COUNT(*) FROM document_memories") == 0


def test_a_fetch_that_may_pass_is_retried_and_logged_as_its_message_without_a_traceback(
    service: SignetService, caplog: pytest.LogCaptureFixture
) -> None:
    """Connection refused is an expected failure (FetchFailed): one log line, no traceback."""
    with socket.socket() as probe:  # a local port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/notes.txt"
    ticket = service.documents.submit("default", DocumentRequest("url", url=url))
    with caplog.at_level(logging.WARNING):
        assert make_worker(service).run_job() is not None
    failed = service.documents.get("default", ticket.id)
    assert failed.job is not None and failed.job.status == "pending"  # retried later
    [told] = [r for r in caplog.records if r.name == "signet_desktop.queue.worker"]
    assert told.exc_info is None, "an expected fetch failure logged a traceback"


def test_text_of_control_characters_only_fails_as_empty(service: SignetService) -> None:
    ticket = service.documents.submit("default", DocumentRequest("text", content="\x07\x08 \x1b"))
    make_worker(service).run_job()
    document = service.documents.get("default", ticket.id)
    assert document.status == "failed" and document.error == "the document has no text"


def test_identical_chunks_in_one_document_are_kept_once(service: SignetService) -> None:
    block = "x" * 150 + ". " + "Boilerplate footer repeated on every page."
    text = "\n\n".join(
        [f"Unique opening {n}. {PARAGRAPH} {'y' * 1900}" if n % 2 else block for n in range(6)]
    )
    ticket = service.documents.submit("default", DocumentRequest("text", content=text))
    drain(make_worker(service))
    chunks = service.documents.chunks("default", ticket.id)
    assert len({c.content_hash for c in chunks}) == len(chunks)
    assert sum(1 for c in chunks if "Boilerplate footer" in c.content) == 1


def test_delete_soft_deletes_chunks_but_not_ones_another_document_shares(
    service: SignetService,
) -> None:
    shared = long_text(4)
    a = service.documents.submit("default", DocumentRequest("text", content=shared, title="a"))
    b = service.documents.submit(
        "default", DocumentRequest("text", content=shared + "\n\nOnly in b.", title="b")
    )
    drain(make_worker(service))
    in_b = {c.memory_id for c in service.documents.chunks("default", b.id)}
    outcome = service.documents.delete("default", a.id, "obsolete")
    assert outcome.previous_status == "done"
    for chunk in service.documents.chunks("default", a.id):
        assert chunk.is_deleted == (chunk.memory_id not in in_b)
    assert service.documents.get("default", a.id).status == "deleted"
    assert service.documents.list("default", status="deleted")[0].id == a.id
    with pytest.raises(NotFound):
        service.documents.delete("default", a.id, "again")


def test_deleting_a_queued_document_cancels_its_job(service: SignetService) -> None:
    ticket = service.documents.submit("default", DocumentRequest("text", content=long_text(5)))
    service.documents.delete("default", ticket.id, "never mind")
    job = service.documents.get("default", ticket.id).job
    assert job is not None and job.status == "cancelled"
    assert drain(make_worker(service)) == 0
    assert count(service, "SELECT COUNT(*) FROM memories") == 0


class GatedEmbedder(HashEmbedder):
    """Blocks one call (the first by default) until released: a delete arrives mid-embedding."""

    def __init__(self, gate: int = 1) -> None:
        super().__init__(64)
        self.calls = 0
        self.gate = gate
        self.entered = threading.Event()
        self.release = threading.Event()

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls += 1
        if self.calls == self.gate:
            self.entered.set()
            assert self.release.wait(10)
        return super().embed(texts)


def test_delete_during_embedding_cancels_the_rest_and_recreates_nothing(tmp_path: Path) -> None:
    embedder = GatedEmbedder()
    service = make_service(tmp_path / "ws", config(chunkSize=200, chunkOverlap=0), embedder)
    try:
        text = "\n\n".join(f"Paragraph {n}: {PARAGRAPH} {'z' * 80}" for n in range(200))
        ticket = service.documents.submit("default", DocumentRequest("text", content=text))
        worker = make_worker(service, config(chunkSize=200, chunkOverlap=0))
        run = threading.Thread(target=worker.run_job)
        run.start()
        assert embedder.entered.wait(10)
        deleting = threading.Thread(
            target=service.documents.delete, args=("default", ticket.id, "stop")
        )
        deleting.start()
        deleting.join(0.3)
        assert deleting.is_alive()  # waits for the batch in flight
        embedder.release.set()
        deleting.join(10)
        run.join(10)
        document = service.documents.get("default", ticket.id)
        assert document.status == "deleted"
        assert document.job is not None and document.job.status == "completed"
        live = count(
            service,
            "SELECT COUNT(*) FROM memories WHERE type = 'document_chunk' AND is_deleted = 0",
        )
        links = count(service, "SELECT COUNT(*) FROM document_memories")
        chunk_memories = count(
            service, "SELECT COUNT(*) FROM memories WHERE type = 'document_chunk'"
        )
        assert live == 0
        assert 0 < links == chunk_memories < 150  # one batch written, the rest cancelled
    finally:
        service.close()


def make_pdf(text: str) -> bytes:
    """A one-page PDF with `text` in Helvetica (built by hand: pypdf reads, it does not typeset)."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def test_each_batch_renews_the_job_lease(tmp_path: Path) -> None:
    """A document longer than one lease keeps its job: every linked batch extends the lease."""
    embedder = GatedEmbedder(gate=3)  # block once the first batch was linked
    cfg = config(chunkSize=200, chunkOverlap=0)
    service = make_service(tmp_path / "ws", cfg, embedder)
    try:
        text = "\n\n".join(f"Paragraph {n}: {PARAGRAPH} {'z' * 80}" for n in range(200))
        ticket = service.documents.submit("default", DocumentRequest("text", content=text))
        worker = make_worker(service, cfg, lease_ms=600_000, queue_lease_ms=2000)
        run = threading.Thread(target=worker.run_job)
        run.start()
        assert embedder.entered.wait(10)
        job = service.documents.get("default", ticket.id).job
        assert job is not None and job.status == "leased"
        leased = job_of(service, ticket.id)
        assert leased.leased_at is not None and leased.lease_expires_at is not None
        assert _seconds(leased.lease_expires_at) - _seconds(leased.leased_at) > 60  # not 2 s
        embedder.release.set()
        run.join(20)
        assert service.documents.get("default", ticket.id).status == "done"
    finally:
        service.close()


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def test_document_events_are_the_agents_and_a_refused_submit_publishes_none(
    service: SignetService,
) -> None:
    alice = service.events.subscribe(agent_id="alice")
    bob = service.events.subscribe(agent_id="bob")
    with pytest.raises(InvalidInput):
        service.documents.submit("alice", DocumentRequest("text", content=""))
    assert alice.drain() == []
    ticket = service.documents.submit("alice", DocumentRequest("text", content=long_text(3)))
    drain(make_worker(service))
    kinds = [d.event.kind for d in alice.drain() if d.event.kind.startswith("document.")]
    assert kinds[0] == "document.progress" and kinds[-1] == "document.finished"
    assert not [d for d in bob.drain() if d.event.kind.startswith("document.")]
    finished = DocumentFinished(agent_id="alice", document_id=ticket.id, status="done")
    assert event_json(finished)["documentId"] == ticket.id


def test_a_chunk_that_looks_like_remember_shorthand_is_stored_as_written(
    service: SignetService,
) -> None:
    text = "critical: [ops,db]: this line is quoted from a runbook, not an instruction"
    ticket = service.documents.submit("default", DocumentRequest("text", content=text))
    assert drain(make_worker(service)) == 1
    (chunk,) = service.documents.chunks("default", ticket.id)
    memory = service.memories.get("default", chunk.memory_id)
    assert memory.content == text
    assert not memory.pinned and memory.importance == 0.5 and memory.tags == ()


def test_chunk_memories_fit_the_embedders_window_by_default(service: SignetService) -> None:
    # 2,000-character chunks were ~450 tokens, of which the model reads 256: the default now
    # sizes chunks in its tokens, so every character of a chunk is in its vector.
    words = " ".join(f"https://example.org/item/{n}?tab=details" for n in range(400))
    ticket = service.documents.submit(
        "default", DocumentRequest("text", content=long_text(60) + "\n\n" + words)
    )
    drain(make_worker(service))
    window = model_window()
    chunks = service.documents.chunks("default", ticket.id)
    assert len(chunks) > 10
    for chunk in chunks:
        text = service.memories.get("default", chunk.memory_id).content
        assert window.count(text) + 2 <= 256
