"""`/mcp/dream` outside a pass: only a live pass's secret is served, whatever the auth mode.

A call with a live secret, recorded in the pass's trace, runs in
tests/e2e/test_dream_harness.py with the real Claude Code binary.
"""

from __future__ import annotations

import httpx
import pytest
from http_helpers import make_client

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
TOKEN = "s3cret-token-value"


async def test_no_pass_means_401_pass_ended(client: httpx.AsyncClient) -> None:
    for headers in ({}, {"authorization": "Bearer sdp_guessed"}, {"authorization": "Basic x"}):
        reply = await client.post("/mcp/dream", json=LIST, headers=headers)
        assert reply.status_code == 401, reply.text
        assert reply.json()["code"] == "pass_ended"


async def test_the_api_token_opens_nothing_here_and_the_gate_still_judges_hosts(
    service: SignetService,
) -> None:
    app = create_app(service, HttpSettings(auth_token=TOKEN))
    async with make_client(app) as client:
        with_api_token = await client.post(
            "/mcp/dream", json=LIST, headers={"authorization": f"Bearer {TOKEN}"}
        )
        assert with_api_token.status_code == 401
        assert with_api_token.json()["code"] == "pass_ended"
        foreign = await client.post("/mcp/dream", json=LIST, headers={"host": "evil.example"})
        assert foreign.status_code == 403 and foreign.json()["code"] == "host_not_allowed"
        api = await client.get("/api/status")  # every other route still asks for the token
        assert api.status_code == 401 and api.json()["code"] == "unauthorized"
