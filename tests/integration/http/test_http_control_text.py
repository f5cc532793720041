"""Control characters: a 422 `invalid_request` naming the field on every route, nothing written.

Driven by the OpenAPI document, so a new route or field is covered without listing it here:
each operation's body gets a control character in one of its fields, each path parameter
and each query parameter one of its own.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx
import pytest
from fastapi import FastAPI
from support.db import database_of

from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio

RAW_TEXT = {("/api/documents", "content")}  # raw file text: the chunker drops controls


def table_counts(service: SignetService) -> dict[str, int]:
    """Rows of every table: the 'nothing was written' witness across all routes."""
    conn = database_of(service).reader()
    names = [
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    return {n: int(conn.execute(f'SELECT COUNT(*) FROM "{n}"').fetchone()[0]) for n in names}


def operations(app: FastAPI) -> list[tuple[str, str, dict[str, Any]]]:
    document = app.openapi()
    return [
        (method.upper(), path, op)
        for path, item in document["paths"].items()
        for method, op in item.items()
    ]


def body_property(app: FastAPI, path: str, op: dict[str, Any]) -> str | None:
    """The first property a JSON body declares (None: the operation takes no body)."""
    content = op.get("requestBody", {}).get("content", {}).get("application/json")
    if content is None:
        return None
    schema = content["schema"]
    if "$ref" in schema:
        schema = app.openapi()["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    names = [n for n in schema.get("properties", {}) if (path, n) not in RAW_TEXT]
    return names[0] if names else None


def fill(path: str, value: str = "x") -> str:
    """`path` with every `{parameter}` set to `value`."""
    parts = path.split("/")
    return "/".join(quote(value, safe="") if p.startswith("{") else p for p in parts)


def assert_refused(reply: httpx.Response, where: str, name: str) -> None:
    assert reply.status_code == 422, (reply.request.url, reply.text)
    body = reply.json()
    assert body["code"] == "invalid_request"
    field = body["fields"][0]
    assert (field["in"], field["path"]) == (where, name), body
    assert "control characters" in field["message"] and field["type"] == "string_control_character"


async def test_every_body_refuses_a_control_character_by_field(
    client: httpx.AsyncClient, app: FastAPI, service: SignetService
) -> None:
    before, seen = table_counts(service), 0
    for method, path, op in operations(app):
        name = body_property(app, path, op)
        if name is None:
            continue
        reply = await client.request(method, fill(path), json={name: "ok\u0000"})
        assert_refused(reply, "body", name)
        seen += 1
    assert seen >= 30  # the document really has this many bodies: the loop is not vacuous
    assert table_counts(service) == before


async def test_every_path_parameter_refuses_a_control_character(
    client: httpx.AsyncClient, app: FastAPI, service: SignetService
) -> None:
    before, seen = table_counts(service), 0
    for method, path, op in operations(app):
        names = [p["name"] for p in op.get("parameters", []) if p["in"] == "path"]
        if not names:
            continue
        for bad in ("\u0000x", "a\tb", "x\u009b"):
            reply = await client.request(method, fill(path, bad), json={})
            assert_refused(reply, "path", names[0])
        seen += 1
    assert seen >= 30
    assert table_counts(service) == before


async def test_every_query_parameter_refuses_a_control_character(
    client: httpx.AsyncClient, app: FastAPI, service: SignetService
) -> None:
    before, seen = table_counts(service), 0
    for method, path, op in operations(app):
        for param in (p for p in op.get("parameters", []) if p["in"] == "query"):
            reply = await client.request(
                method, fill(path, "x"), params={param["name"]: "a\u001b[31m"}, json={}
            )
            assert_refused(reply, "query", param["name"])
            seen += 1
    assert seen >= 40
    assert table_counts(service) == before


@pytest.mark.parametrize(
    ("field", "value", "where"),
    [
        ("name", "\u0000Postgres", "name"),
        ("aliases", ["PG", "\u0000pg"], "aliases.1"),
        ("description", "\u0000the db", "description"),
    ],
)
async def test_knowledge_fields_starting_with_nul_are_a_422(
    client: httpx.AsyncClient, service: SignetService, field: str, value: Any, where: str
) -> None:
    """The probe's finding: these were a 500 (SQLite's length() stops at NUL)."""
    before = table_counts(service)
    body = {"name": "Postgres", "type": "system", field: value}
    reply = await client.post("/api/knowledge/entities", json=body)
    assert_refused(reply, "body", where)
    assert table_counts(service) == before


async def test_nested_values_and_keys_are_named(client: httpx.AsyncClient) -> None:
    reply = await client.post(
        "/api/memory/remember", json={"content": "ok", "metadata": {"a": [{"b": "x\u0007"}]}}
    )
    assert_refused(reply, "body", "metadata.a.0.b")
    reply = await client.post(
        "/api/memory/remember", json={"content": "ok", "metadata": {"k\u001b": 1}}
    )
    assert_refused(reply, "body", "metadata.k\\u001b")  # the key escaped, never raw


async def test_tab_newline_and_carriage_return_stay_text(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    reply = await client.post("/api/memory/remember", json={"content": "a\tb\r\nc d"})
    assert reply.status_code == 200, reply.text
    reply = await client.get("/api/memory/search", params={"q": "a\tb\nc"})
    assert reply.status_code == 200, reply.text


async def test_document_text_may_carry_form_feeds(client: httpx.AsyncClient) -> None:
    """A text file's form feed is normalised by the chunker, not refused."""
    body = {"source_type": "text", "title": "t", "content": "page one\u000cpage two"}
    reply = await client.post("/api/documents", json=body)
    assert reply.status_code in (200, 201, 202), reply.text


async def test_a_pasted_terminal_log_in_a_session_is_recorded_without_escapes(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    """A harness relays what the user pasted; refusing it would lose the turn and show
    the user a hook error. Relayed text loses its control characters, nothing else."""
    prompt = "why does \u001b[31mFAILED\u001b[0m test_login keep failing?"
    body = {"harness": "claude-code", "sessionKey": "s-ansi", "userMessage": prompt}
    reply = await client.post("/api/hooks/user-prompt-submit", json=body)
    assert reply.status_code == 200, reply.text
    end = {
        "harness": "claude-code",
        "sessionKey": "s-ansi",
        "transcript": [{"role": "user", "content": prompt}],
    }
    reply = await client.post("/api/hooks/session-end", json=end)
    assert reply.status_code == 200, reply.text
    (turn,) = service.transcripts.turns("default", "s-ansi")
    assert turn.text == "why does [31mFAILED[0m test_login keep failing?"
    bad_key = {**body, "sessionKey": "s\u001bx"}  # identifiers keep the refusal
    reply = await client.post("/api/hooks/user-prompt-submit", json=bad_key)
    assert_refused(reply, "body", "sessionKey")
