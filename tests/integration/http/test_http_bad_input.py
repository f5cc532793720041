"""Bad input: a clear 4xx with `{"error", "code"}`, never a 500, and nothing written or changed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from http_helpers import memory_row, remember, row_counts

from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio

MIB = 1_048_576
ID = "{id}"  # replaced by the id of an existing memory


def post(path: str, **kwargs: Any) -> tuple[str, str, dict[str, Any]]:
    return ("POST", path, kwargs)


def raw(body: bytes, content_type: str = "application/json") -> dict[str, Any]:
    return {"content": body, "headers": {"content-type": content_type}}


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 0}
    for _ in range(depth):
        value = {"a": value}
    return value


REMEMBER = "/api/memory/remember"
RECALL = "/api/memory/recall"

# (id, (method, path, request kwargs), expected status, expected error code)
# fmt: off
CASES: list[tuple[str, tuple[str, str, dict[str, Any]], int, str]] = [
    ("empty content", post(REMEMBER, json={"content": ""}), 400, "content_empty"),
    ("blank content", post(REMEMBER, json={"content": " \n\t "}), 400, "content_empty"),
    ("1 MB content", post(REMEMBER, json={"content": "x" * 1_000_000}), 400, "content_too_long"),
    ("2 MiB body", post(REMEMBER, json={"content": "x" * 2 * MIB}), 413, "payload_too_large"),
    ("invalid utf-8", post(REMEMBER, **raw(b'{"content": "caf\xe9"}')), 400, "invalid_utf8"),
    ("utf-8 no content-type", post(REMEMBER, content=b'{"content":"\xff\xfe"}'), 400,
     "invalid_utf8"),
    ("null byte content", post(REMEMBER, json={"content": "a\u0000b"}), 422, "invalid_request"),
    ("null byte tag", post(REMEMBER, json={"content": "ok", "tags": ["a\u0000"]}), 422,
     "invalid_request"),
    ("null byte who", post(REMEMBER, json={"content": "ok", "who": "\u0000"}), 422,
     "invalid_request"),
    ("lone surrogate", post(REMEMBER, **raw(b'{"content": "bad \\ud800 text"}')), 422,
     "invalid_request"),
    ("lone surrogate in metadata key", post(REMEMBER, **raw(b'{"content": "x", "metadata": '
     b'{"\\udfff": 1}}')), 422, "invalid_request"),
    ("content is a number", post(REMEMBER, json={"content": 42}), 422, "invalid_request"),
    ("content is null", post(REMEMBER, json={"content": None}), 422, "invalid_request"),
    ("content missing", post(REMEMBER, json={"who": "me"}), 422, "invalid_request"),
    ("tags is a number", post(REMEMBER, json={"content": "ok", "tags": 3}), 422,
     "invalid_request"),
    ("tags hold numbers", post(REMEMBER, json={"content": "ok", "tags": [1, 2]}), 422,
     "invalid_request"),
    ("importance as string", post(REMEMBER, json={"content": "ok", "importance": "0.5"}), 422,
     "invalid_request"),
    ("importance above 1", post(REMEMBER, json={"content": "ok", "importance": 1.5}), 422,
     "invalid_request"),
    ("importance NaN", post(REMEMBER, **raw(b'{"content": "ok", "importance": NaN}')), 422,
     "invalid_request"),
    ("pinned as string", post(REMEMBER, json={"content": "ok", "pinned": "true"}), 422,
     "invalid_request"),
    ("pinned as 1", post(REMEMBER, json={"content": "ok", "pinned": 1}), 422, "invalid_request"),
    ("unknown memory type", post(REMEMBER, json={"content": "ok", "type": "gossip"}), 400,
     "bad_type"),
    ("bad visibility", post(REMEMBER, json={"content": "ok", "visibility": "archived"}), 422,
     "invalid_request"),
    ("bad timestamp", post(REMEMBER, json={"content": "ok", "createdAt": "yesterday"}), 422,
     "invalid_request"),
    ("metadata not an object", post(REMEMBER, json={"content": "ok", "metadata": [1]}), 422,
     "invalid_request"),
    ("metadata nested too deep", post(REMEMBER, json={"content": "ok", "metadata":
     nested(40)}), 422, "invalid_request"),
    ("invalid JSON", post(REMEMBER, **raw(b'{"content": "ok"')), 400, "invalid_json"),
    ("JSON array body", post(REMEMBER, json=[{"content": "ok"}]), 422, "invalid_request"),
    ("empty body", post(REMEMBER, **raw(b"")), 422, "invalid_request"),
    ("JSON nested 100k deep", post(REMEMBER, **raw(b"[" * 100_000 + b"]" * 100_000)), 400,
     "invalid_json"),
    ("bad agentId", post(REMEMBER, json={"content": "ok", "agentId": "../etc"}), 400,
     "agent_id_invalid"),
    ("empty agentId", post(REMEMBER, json={"content": "ok", "agentId": ""}), 400,
     "agent_id_invalid"),
    ("bad agent header", ("POST", REMEMBER, {"json": {"content": "ok"},
     "headers": {"x-signet-agent-id": "a b"}}), 400, "agent_id_invalid"),
    ("bad actor type", ("POST", REMEMBER, {"json": {"content": "ok"},
     "headers": {"x-signet-actor-type": "Robot!"}}), 400, "actor_invalid"),
    ("recall negative limit", post(RECALL, json={"query": "x", "limit": -1}), 422,
     "invalid_request"),
    ("recall zero limit", post(RECALL, json={"query": "x", "limit": 0}), 422, "invalid_request"),
    ("recall huge limit", post(RECALL, json={"query": "x", "limit": 10**12}), 422,
     "invalid_request"),
    ("recall limit as string", post(RECALL, json={"query": "x", "limit": "5"}), 422,
     "invalid_request"),
    ("recall empty query", post(RECALL, json={"query": "   "}), 400, "query_empty"),
    ("recall null byte", post(RECALL, json={"query": "a\u0000"}), 422, "invalid_request"),
    ("recall bad since", post(RECALL, json={"query": "x", "since": "last week"}), 422,
     "invalid_request"),
    ("recall min_score > 1", post(RECALL, json={"query": "x", "minScore": 2}), 422,
     "invalid_request"),
    ("search without q", ("GET", "/api/memory/search", {}), 400, "query_empty"),
    ("search negative limit", ("GET", "/api/memory/search?q=x&limit=-5", {}), 422,
     "invalid_request"),
    ("search huge limit", ("GET", "/api/memory/search?q=x&limit=99999999999999999999", {}),
     422, "invalid_request"),
    ("search limit not a number", ("GET", "/api/memory/search?q=x&limit=ten", {}), 422,
     "invalid_request"),
    ("list negative limit", ("GET", "/api/memories?limit=-1", {}), 422, "invalid_request"),
    ("list negative offset", ("GET", "/api/memories?offset=-1", {}), 422, "invalid_request"),
    ("list huge limit", ("GET", "/api/memories?limit=1000000", {}), 422, "invalid_request"),
    ("history zero limit", ("GET", f"/api/memory/{ID}/history?limit=0", {}), 422,
     "invalid_request"),
    ("history huge limit", ("GET", f"/api/memory/{ID}/history?limit=5000", {}), 422,
     "invalid_request"),
    ("patch wrong types", ("PATCH", f"/api/memory/{ID}", {"json": {"tags": "x", "pinned": "no",
     "reason": "r"}}), 422, "invalid_request"),
    ("patch nothing to change", ("PATCH", f"/api/memory/{ID}", {"json": {"reason": "r"}}), 400,
     "empty_patch"),
    ("patch if_version as string", ("PATCH", f"/api/memory/{ID}", {"json": {"reason": "r",
     "tags": ["a"], "if_version": "1"}}), 422, "invalid_request"),
    ("patch if_version zero", ("PATCH", f"/api/memory/{ID}", {"json": {"reason": "r",
     "tags": ["a"], "if_version": 0}}), 422, "invalid_request"),
    ("patch version conflict", ("PATCH", f"/api/memory/{ID}", {"json": {"reason": "r",
     "tags": ["a"], "if_version": 2}}), 409, "version_conflict"),
    ("patch null-byte reason", ("PATCH", f"/api/memory/{ID}", {"json": {"reason": "a\u0000",
     "tags": ["a"]}}), 422, "invalid_request"),
    ("delete force as string", ("DELETE", f"/api/memory/{ID}", {"json": {"reason": "r",
     "force": "yes"}}), 422, "invalid_request"),
    ("delete version conflict", ("DELETE", f"/api/memory/{ID}?reason=r&if_version=9", {}), 409,
     "version_conflict"),
    ("recover live memory", post(f"/api/memory/{ID}/recover", json={"reason": "r"}), 409,
     "not_deleted"),
    ("recover unknown id", post("/api/memory/nope/recover", json={"reason": "r"}), 404,
     "not_found"),
    ("get unknown id", ("GET", "/api/memory/nope", {}), 404, "not_found"),
    ("id too long", ("GET", "/api/memory/" + "x" * 300, {}), 422, "invalid_request"),
    ("unknown route", ("GET", "/api/nothing-here", {}), 404, "not_found"),
    ("wrong method", ("PUT", f"/api/memory/{ID}", {"json": {}}), 405, "method_not_allowed"),
    # Issue 8 part 2: each of these was a 500 (OverflowError, SQLite integer overflow).
    ("createdAt before year 1 in UTC", post(REMEMBER, json={"content": "ok",
     "createdAt": "0001-01-01T00:00:00+01:00"}), 422, "invalid_request"),
    ("validUntil after 9999 in UTC", post(REMEMBER, json={"content": "ok",
     "validUntil": "9999-12-31T23:59:59-01:00"}), 422, "invalid_request"),
    ("recall until after 9999 in UTC", post(RECALL, json={"query": "x",
     "until": "9999-12-31T23:59:59-01:00"}), 422, "invalid_request"),
    ("recall time.start before year 1", post(RECALL, json={"query": "x",
     "time": {"start": "0001-01-01T00:30:00+01:00"}}), 422, "invalid_request"),
    ("search since before year 1", ("GET", "/api/memory/search?q=x&since=0001-01-01T00:00:00"
     "%2B01:00", {}), 422, "invalid_request"),
    ("resync generation 2^63", post("/api/repair/resync-vec", json={"generation": 2**63}), 422,
     "invalid_request"),
    # Issue 8 part 4: tag filters past the 10th were dropped without a word.
    ("recall 11 tag filters", post(RECALL, json={"query": "x",
     "tags": [f"t{i}" for i in range(11)]}), 422, "invalid_request"),
    ("recall 11 comma-separated tags", post(RECALL, json={"query": "x",
     "tags": ",".join(f"t{i}" for i in range(11))}), 422, "invalid_request"),
    ("search 11 tag filters", ("GET", "/api/memory/search?q=x&tags="
     + ",".join(f"t{i}" for i in range(11)), {}), 422, "invalid_request"),
]
# fmt: on


@pytest.fixture
async def existing(client: httpx.AsyncClient) -> AsyncIterator[str]:
    yield (await remember(client, "An existing memory that bad requests must not change."))["id"]


@pytest.mark.parametrize(("name", "request_", "status", "code"), CASES, ids=[c[0] for c in CASES])
async def test_bad_input_is_refused_and_writes_nothing(
    client: httpx.AsyncClient,
    service: SignetService,
    existing: str,
    name: str,
    request_: tuple[str, str, dict[str, Any]],
    status: int,
    code: str,
) -> None:
    method, path, kwargs = request_
    before_row, before = memory_row(service, existing), row_counts(service)
    response = await client.request(method, path.replace(ID, existing), **kwargs)
    assert response.status_code == status, response.text
    body = response.json()
    assert isinstance(body["error"], str) and body["error"]
    assert body["code"] == code
    assert row_counts(service) == before
    assert memory_row(service, existing) == before_row


async def test_validation_errors_name_the_field(client: httpx.AsyncClient) -> None:
    # Unknown fields are ignored as Signet ignores them (test_http_signet_compat.py).
    response = await client.post(REMEMBER, json={"content": "ok", "contnet": "x", "pinned": 1})
    body = response.json()
    assert response.status_code == 422
    assert "pinned" in body["error"] and "contnet" not in body["error"]
    assert {f["path"] for f in body["fields"]} == {"pinned"}
    assert "x" * 10 not in response.text  # the input is never echoed


async def test_validator_messages_carry_no_pydantic_prefix(client: httpx.AsyncClient) -> None:
    response = await client.post(REMEMBER, json={"content": "ok", "createdAt": "last week"})
    body = response.json()
    assert response.status_code == 422
    assert "ISO-8601" in body["error"]
    assert "Value error" not in response.text


FTS_QUERIES = [
    '"', '""', '"unbalanced', "*", "pre*", "NEAR(", "NEAR(a b", "AND OR", "OR", "NOT",
    "a AND OR b", "(", ")", "col:value", "^start", "-minus", "{a b}", "a + b", "'; DROP TABLE "
    "memories; --", "%_%", "\\", "🦀 unicode", "ß" * 50,
]  # fmt: skip


@pytest.mark.parametrize("query", FTS_QUERIES)
async def test_fts_syntax_in_queries_is_just_text(
    client: httpx.AsyncClient, service: SignetService, query: str
) -> None:
    await remember(client, "The query sanitizer keeps NEAR and OR as plain words.")
    before = row_counts(service)
    recall = await client.post(RECALL, json={"query": query, "keywordQuery": query})
    assert recall.status_code == 200, recall.text
    search = await client.get("/api/memory/search", params={"q": query})
    assert search.status_code == 200, search.text
    assert row_counts(service) == before


async def test_fts_operators_match_as_words(client: httpx.AsyncClient) -> None:
    target = await remember(client, "Use NEAR and OR as words in this memory.")
    body = (await client.post(RECALL, json={"query": "NEAR( AND OR"})).json()
    assert [hit["id"] for hit in body["results"]] == [target["id"]]


async def test_timestamps_at_the_calendar_limits_still_work(client: httpx.AsyncClient) -> None:
    """The edge itself is fine: only a value that leaves years 1-9999 once in UTC is refused."""
    low = await remember(client, "early", createdAt="0001-01-01T01:00:00+01:00")
    high = await remember(client, "late", createdAt="9999-12-31T22:59:59-01:00")
    assert low["id"] != high["id"]
    response = await client.post(
        RECALL, json={"query": "early", "since": "0001-01-01", "until": "9999-12-31T23:59:59Z"}
    )
    assert response.status_code == 200, response.text


async def test_more_tag_filters_than_applied_are_refused_by_name(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post(RECALL, json={"query": "x", "tags": [str(i) for i in range(11)]})
    body = response.json()
    assert response.status_code == 422
    assert [f["path"] for f in body["fields"]] == ["tags"]
    assert "at most 10 tag filters" in body["error"]


async def test_ten_tag_filters_are_all_applied(client: httpx.AsyncClient) -> None:
    tags = [f"t{i}" for i in range(10)]
    everything = await remember(client, "tagged with all ten", tags=tags)
    await remember(client, "tagged with the first nine", tags=tags[:9])
    body = (await client.post(RECALL, json={"query": "tagged", "tags": tags})).json()
    assert [hit["id"] for hit in body["results"]] == [everything["id"]]


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/api/memory/abc", "GET, PATCH, DELETE"),
        ("POST", "/api/memory/abc", "GET, PATCH, DELETE"),
        ("GET", "/api/memory/abc/recover", "POST"),
        ("DELETE", "/api/memories", "GET"),
        ("PUT", "/api/memory/recall", "GET, POST, PATCH, DELETE"),
    ],
)
async def test_method_not_allowed_lists_every_method_of_the_path(
    client: httpx.AsyncClient, method: str, path: str, allowed: str
) -> None:
    """Starlette named only the first route whose path matched (`/api/memory/recall` is also
    `/api/memory/{id}`, so all four methods are served there)."""
    response = await client.request(method, path)
    assert response.status_code == 405
    assert response.headers["allow"] == allowed


@pytest.mark.parametrize(
    "raw_id", ["a\nb", "a\r\nX-Injected: 1", "\u202eevil", "zero\u200bwidth", "\u2066x\u2069"]
)
async def test_ids_echoed_in_errors_are_escaped(client: httpx.AsyncClient, raw_id: str) -> None:
    response = await client.get(f"/api/memory/{quote(raw_id, safe='')}")
    control = any(ch in raw_id for ch in "\r\n")  # refused before lookup, never echoed
    assert response.status_code == (422 if control else 404)
    message = response.json()["error"]
    assert message.isprintable(), message
    assert all(ch not in message for ch in "\n\r\u202e\u200b\u2066\u2069")
    assert control or "\\u" in message  # still identifiable, as an escape
