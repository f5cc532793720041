"""/api/documents over HTTP: submit, follow, chunks, recall attribution, delete, scope, limits."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from http_helpers import make_client, row_counts

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.service.facade import SignetService
from tests.support.documents import config, drain, make_service, make_worker
from tests.support.loopback_web import LoopbackWeb, serving

pytestmark = pytest.mark.anyio

TEXT = "\n\n".join(
    f"Section {n}. The billing service stores invoices in PostgreSQL and retries webhooks."
    for n in range(60)
)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SignetService]:
    svc = make_service(tmp_path / "ws")
    yield svc
    svc.close()


@pytest.fixture
async def client(service: SignetService) -> AsyncIterator[httpx.AsyncClient]:
    async with make_client(create_app(service, HttpSettings())) as c:
        yield c


@pytest.fixture(scope="module")
def web() -> Iterator[LoopbackWeb]:
    with serving() as server:
        yield server


async def submit(
    client: httpx.AsyncClient, agent: str = "default", **body: object
) -> httpx.Response:
    return await client.post("/api/documents", json=body, headers={"x-signet-agent-id": agent})


async def test_text_document_lifecycle(client: httpx.AsyncClient, service: SignetService) -> None:
    created = await submit(client, source_type="text", content=TEXT, title="Billing notes")
    assert created.status_code == 201, created.text
    ticket = created.json()
    assert ticket["status"] == "queued" and "deduplicated" not in ticket
    again = await submit(client, source_type="text", content=TEXT)
    assert again.status_code == 200 and again.json() == {**ticket, "deduplicated": True}
    drain(make_worker(service))
    detail = (await client.get(f"/api/documents/{ticket['id']}")).json()
    assert detail["status"] == "done" and detail["title"] == "Billing notes"
    assert detail["chunk_count"] >= 2 and detail["job"]["status"] == "completed"
    listed = (await client.get("/api/documents", params={"status": "done"})).json()
    assert [d["id"] for d in listed["documents"]] == [ticket["id"]]
    chunks = (await client.get(f"/api/documents/{ticket['id']}/chunks")).json()["chunks"]
    assert [c["chunk_index"] for c in chunks] == list(range(detail["chunk_count"]))
    recall = await client.post("/api/memory/recall", json={"query": "invoices PostgreSQL webhooks"})
    hit = recall.json()["results"][0]
    assert hit["type"] == "document_chunk"
    assert hit["document"]["id"] == ticket["id"] and hit["document"]["title"] == "Billing notes"
    assert isinstance(hit["document"]["chunkIndex"], int)
    deleted = await client.delete(f"/api/documents/{ticket['id']}", params={"reason": "stale"})
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["memories_deleted"] == detail["chunk_count"]
    gone = await client.get(f"/api/documents/{ticket['id']}/chunks")
    assert all(c["is_deleted"] for c in gone.json()["chunks"])
    assert (await client.get("/api/documents")).json()["documents"] == []


async def test_another_agent_cannot_read_list_or_delete(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    ticket = (await submit(client, "alice", source_type="text", content=TEXT)).json()
    drain(make_worker(service))
    bob = {"x-signet-agent-id": "bob"}
    for path in (f"/api/documents/{ticket['id']}", f"/api/documents/{ticket['id']}/chunks"):
        response = await client.get(path, headers=bob)
        assert response.status_code == 404 and response.json()["code"] == "document_not_found"
    assert (await client.get("/api/documents", headers=bob)).json()["documents"] == []
    refused = await client.delete(f"/api/documents/{ticket['id']}", headers=bob)
    assert refused.status_code == 404
    alice = await client.get(
        f"/api/documents/{ticket['id']}", headers={"x-signet-agent-id": "alice"}
    )
    assert alice.json()["status"] == "done"


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"source_type": "text", "content": ""}, 400, "content_empty"),
        ({"source_type": "url", "url": "javascript:alert(1)"}, 400, "url_scheme"),
        ({"source_type": "file", "path": "notes.md"}, 400, "path_invalid"),
        ({"source_type": "video", "content": "x"}, 400, "source_type_invalid"),
        ({"content": "no source type"}, 422, None),
    ],
)
async def test_bad_submissions_write_nothing(
    client: httpx.AsyncClient,
    service: SignetService,
    body: dict[str, object],
    status: int,
    code: str | None,
) -> None:
    before = row_counts(service)
    response = await client.post("/api/documents", json=body)
    assert response.status_code == status, response.text
    if code is not None:
        assert response.json()["code"] == code
    assert row_counts(service) == before


async def test_the_body_limit_is_per_route(tmp_path: Path) -> None:
    service = make_service(tmp_path / "ws", config(maxContentBytes=3 * 1024 * 1024))
    try:
        async with make_client(create_app(service, HttpSettings())) as client:
            two_mib = "word " * (2 * 1024 * 1024 // 5)
            document = await submit(client, source_type="text", content=two_mib)
            assert document.status_code == 201, document.text
            memory = await client.post("/api/memory/remember", json={"content": two_mib})
            assert memory.status_code == 413
            huge = "word " * (8 * 1024 * 1024 // 5)
            refused = await submit(client, source_type="text", content=huge)
            assert refused.status_code == 413
    finally:
        service.close()


async def test_urls_fetched_titled_deduplicated_and_refused(
    client: httpx.AsyncClient, service: SignetService, web: LoopbackWeb, tmp_path: Path
) -> None:
    page = await submit(client, source_type="url", url=web.url("/page"))
    assert page.status_code == 201
    repeat = await submit(client, source_type="url", url=web.url("/page"))
    assert repeat.json() == {**page.json(), "deduplicated": True}
    missing = (await submit(client, source_type="url", url=web.url("/missing"))).json()
    drain(make_worker(service), limit=2)
    fetched = (await client.get(f"/api/documents/{page.json()['id']}")).json()
    assert fetched["status"] == "done" and fetched["title"] == "Loopback Article"
    assert fetched["content_type"] == "text/html"
    chunks = (await client.get(f"/api/documents/{page.json()['id']}/chunks")).json()["chunks"]
    text = " ".join(c["content"] for c in chunks)
    assert "Local-first memory" in text and "var hidden" not in text
    failed = (await client.get(f"/api/documents/{missing['id']}")).json()
    assert "HTTP 404" in failed["error"] and failed["job"]["attempts"] == 1
    # The default config forbids private addresses: a loopback URL fails, nothing fetched.
    strict = make_service(tmp_path / "strict", config(allowPrivateNetworks=False))
    try:
        async with make_client(create_app(strict, HttpSettings())) as other:
            before = web.hits["/text"]
            ticket = (await submit(other, source_type="url", url=web.url("/text"))).json()
            drain(make_worker(strict, config(allowPrivateNetworks=False)), limit=1)
            refused = (await other.get(f"/api/documents/{ticket['id']}")).json()
            assert "private, loopback or link-local" in refused["error"]
            assert web.hits["/text"] == before
    finally:
        strict.close()
