"""Property: no JSON body or query string makes a memory route answer 500."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest
from fastapi import FastAPI
from http_helpers import make_client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from signet_desktop.domain.memory import Actor
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories import RememberRequest

FIELDS = [
    "content", "query", "tags", "importance", "pinned", "limit", "agentId", "type",
    "metadata", "reason", "force", "if_version", "since", "keywordQuery", "who", "bogus",
]  # fmt: skip
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=40)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)
BODIES = st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=6) | VALUES
ROUTES = st.sampled_from(
    [
        ("POST", "/api/memory/remember"),
        ("POST", "/api/memory/recall"),
        ("PATCH", "/api/memory/{id}"),
        ("DELETE", "/api/memory/{id}"),
        ("POST", "/api/memory/{id}/recover"),
    ]
)
QUERY_KEYS = ["q", "limit", "offset", "agentId", "tags", "pinned", "since", "x"]
QUERIES = st.dictionaries(st.sampled_from(QUERY_KEYS), st.text(max_size=20), max_size=4)
GETS = st.sampled_from(
    ["/api/memory/search", "/api/memories", "/api/memory/{id}/history", "/api/memory/{id}"]
)


async def _send(app: FastAPI, method: str, path: str, **kwargs: Any) -> httpx.Response:
    async with make_client(app) as client:
        return await client.request(method, path, **kwargs)


@pytest.fixture
def known(service: SignetService) -> str:
    """The id of one live memory, shared by every example of a test."""
    return service.memories.remember(RememberRequest(content="known"), Actor()).memory.id


# The fixtures are built once per test and shared by its examples, on purpose.
SHARED = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@settings(SHARED, max_examples=150)
@given(route=ROUTES, body=BODIES, which=st.sampled_from(["known", "unknown"]))
def test_no_body_causes_a_server_error(
    app: FastAPI, known: str, route: tuple[str, str], body: Any, which: str
) -> None:
    method, path = route
    path = path.replace("{id}", known if which == "known" else "unknown")
    # Serialised here: NaN/Infinity are what Python clients really send, httpx refuses them.
    content = json.dumps(body, allow_nan=True).encode()
    headers = {"content-type": "application/json"}
    response = anyio.run(lambda: _send(app, method, path, content=content, headers=headers))
    assert response.status_code < 500, response.text
    assert response.status_code == 200 or response.json()["error"]


@settings(SHARED, max_examples=100)
@given(path=GETS, params=QUERIES)
def test_no_query_string_causes_a_server_error(
    app: FastAPI, known: str, path: str, params: dict[str, str]
) -> None:
    response = anyio.run(lambda: _send(app, "GET", path.replace("{id}", known), params=params))
    assert response.status_code < 500, response.text
