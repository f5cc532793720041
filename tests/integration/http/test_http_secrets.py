"""/api/secrets as Signet's CLI and dashboard call it: names out, values in, never back out."""

from __future__ import annotations

import logging
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from http_helpers import make_client

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings, settings_from_auth
from signet_desktop.config.loader import parse_config_text
from signet_desktop.config.sections import AuthConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.inference.errors import ProviderNotConfigured
from signet_desktop.inference.types import ChatMessage, ChatRequest
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from tests.support.fake_llm import FakeLLM, reply

pytestmark = pytest.mark.anyio

VALUE = "sk-proj-VALUE-THAT-MUST-NEVER-SHOW-4471"
B = {"x-signet-agent-id": "b"}


def secrets_dir(tmp_path: Path) -> Path:
    return tmp_path / ".secrets"


def files(tmp_path: Path) -> dict[str, str]:
    """Every file under .secrets (relative path -> text): what a refusal must not change."""
    root = secrets_dir(tmp_path)
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}


async def test_signet_cli_calls_list_put_delete(client: httpx.AsyncClient, tmp_path: Path) -> None:
    assert (await client.get("/api/secrets")).json() == {"secrets": []}  # `signet secret list`
    put = await client.post("/api/secrets/OPENAI_API_KEY", json={"value": VALUE})
    assert put.status_code == 200 and put.json() == {
        "success": True, "name": "OPENAI_API_KEY", "created": True,
    }  # fmt: skip
    again = await client.post("/api/secrets/OPENAI_API_KEY", json={"value": VALUE + "2"})
    assert again.json()["created"] is False
    assert (await client.get("/api/secrets")).json() == {"secrets": ["OPENAI_API_KEY"]}
    stored = secrets_dir(tmp_path) / "OPENAI_API_KEY"
    assert stored.read_text() == VALUE + "2"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert stat.S_IMODE(secrets_dir(tmp_path).stat().st_mode) == 0o700
    assert [p.name for p in secrets_dir(tmp_path).iterdir()] == ["OPENAI_API_KEY"]  # no temp
    deleted = await client.delete("/api/secrets/OPENAI_API_KEY")
    assert deleted.json() == {"success": True, "name": "OPENAI_API_KEY"}
    missing = await client.delete("/api/secrets/OPENAI_API_KEY")
    assert missing.status_code == 404 and missing.json()["code"] == "secret_not_found"
    assert "OPENAI_API_KEY" in missing.json()["error"]
    assert (await client.get("/api/secrets")).json() == {"secrets": []}


async def test_no_route_answer_or_log_line_carries_a_value(
    client: httpx.AsyncClient, app: FastAPI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    answers = [await client.post("/api/secrets/GITHUB_TOKEN", json={"value": VALUE,
                                                                   "surprise": 1})]  # fmt: skip
    answers.append(await client.get("/api/secrets/GITHUB_TOKEN"))  # there is no such route
    assert answers[-1].status_code == 405
    answers.append(await client.post("/api/secrets/bad-name", json={"value": VALUE}))
    answers.append(await client.post("/api/secrets/LONG", json={"value": VALUE * 2000}))
    answers.append(await client.post("/api/secrets/CTRL", json={"value": VALUE + "\x07"}))
    for path in ("/api/secrets", "/api/status", "/api/inference/status", "/health"):
        answers.append(await client.get(path))
    for answer in answers:
        assert VALUE not in answer.text, answer.request.url
    assert [a.status_code for a in answers[2:5]] == [400, 422, 422]
    assert all(VALUE not in record.getMessage() for record in caplog.records)
    assert any("GITHUB_TOKEN" in record.getMessage() for record in caplog.records)


async def test_refused_requests_write_nothing(client: httpx.AsyncClient, tmp_path: Path) -> None:
    await client.post("/api/secrets/KEEP", json={"value": "kept"})
    before = files(tmp_path)
    cases = [
        ("/api/secrets/EMPTY", {"value": ""}, 400, "value_required"),
        ("/api/secrets/NOVALUE", {}, 400, "value_required"),
        ("/api/secrets/NULL", {"value": "a\u0000b"}, 422, "invalid_request"),
        ("/api/secrets/9STARTS_WITH_DIGIT", {"value": "x"}, 400, "secret_name_invalid"),
        ("/api/secrets/exec", {"value": "x"}, 400, "secret_name_invalid"),
        ("/api/secrets/NUMBER", {"value": 42}, 422, "invalid_request"),
        ("/api/secrets/KEEP", {"value": "x", "agentId": "../etc"}, 400, "agent_id_invalid"),
    ]
    for path, body, status, code in cases:
        response = await client.post(path, json=body)
        assert (response.status_code, response.json()["code"]) == (status, code), path
    exec_body = {"command": "env", "secrets": {"K": "KEEP"}}  # Signet's exec: not served
    assert (await client.post("/api/secrets/exec", json=exec_body)).status_code == 400
    assert files(tmp_path) == before


async def test_agents_see_and_change_only_their_own_secrets(
    client: httpx.AsyncClient, tmp_path: Path
) -> None:
    await client.post("/api/secrets/SHARED_NAME", json={"value": "default's"})
    assert (await client.get("/api/secrets", headers=B)).json() == {"secrets": []}
    refused = await client.delete("/api/secrets/SHARED_NAME", headers=B)
    assert refused.status_code == 404
    mine = await client.post("/api/secrets/SHARED_NAME", json={"value": "b's", "agentId": "b"})
    assert mine.json()["created"] is True
    assert files(tmp_path) == {"SHARED_NAME": "default's", ".agents/b/SHARED_NAME": "b's"}
    assert stat.S_IMODE((secrets_dir(tmp_path) / ".agents" / "b").stat().st_mode) == 0o700
    assert (await client.get("/api/secrets", params={"agentId": "b"})).json() == {
        "secrets": ["SHARED_NAME"]
    }
    await client.delete("/api/secrets/SHARED_NAME", headers=B)
    assert files(tmp_path) == {"SHARED_NAME": "default's"}


async def test_listing_needs_read_and_changing_needs_admin(
    service: SignetService, tmp_path: Path
) -> None:
    app = create_app(service, settings_from_auth(AuthConfig.model_validate(
        {"mode": "team", "token": "configured-admin-token"})))  # fmt: skip
    tokens = service.tokens
    read = tokens.create(tokens.spec("reader", ["read"], ["a"])).secret
    write = tokens.create(tokens.spec("writer", ["read", "write"], ["a"])).secret
    admin = tokens.create(tokens.spec("admin-a", ["read", "write", "admin"], ["a"])).secret
    async with make_client(app) as client:
        for token in (read, write):
            auth = {"authorization": f"Bearer {token}"}
            assert (await client.get("/api/secrets", headers=auth)).status_code == 200
            for method in ("POST", "DELETE"):
                refused = await client.request(
                    method, "/api/secrets/A_KEY", json={"value": "v"}, headers=auth
                )
                assert refused.status_code == 403
                assert refused.json()["code"] == "permission_denied"
        auth = {"authorization": f"Bearer {admin}"}
        other = await client.post(
            "/api/secrets/A_KEY", json={"value": "v", "agentId": "b"}, headers=auth
        )
        assert other.status_code == 403 and other.json()["code"] == "agent_not_allowed"
        assert files(tmp_path) == {}
        done = await client.post("/api/secrets/A_KEY", json={"value": "v"}, headers=auth)
        assert done.status_code == 200
    assert files(tmp_path) == {".agents/a/A_KEY": "v"}  # the token's one agent


INFERENCE_YAML = """
inference:
  accounts:
    mine: {{provider: openai-compatible, apiKey: $secret:FAKE_LLM_KEY}}
  targets:
    box: {{executor: openai-compatible, account: mine, endpoint: '{url}', models: {{m: {{}}}}}}
  workloads:
    memoryExtraction: {{target: box}}
"""


@pytest.fixture
def configured(tmp_path: Path, fake_llm: FakeLLM) -> Iterator[SignetService]:
    config = parse_config_text(INFERENCE_YAML.format(url=fake_llm.base_url)).config
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    svc = build_service(WorkspacePaths.for_root(tmp_path), config, options)
    yield svc
    svc.close()


async def test_a_stored_secret_is_what_secret_ref_resolves_to(
    configured: SignetService, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    app = create_app(configured, HttpSettings(agents_dir=str(tmp_path)))
    request = ChatRequest(messages=(ChatMessage(role="user", content="hi"),))
    with pytest.raises(ProviderNotConfigured) as missing:
        configured.inference.get("memory_extraction")
    assert "$secret:FAKE_LLM_KEY" in str(missing.value)
    assert "signet secret put FAKE_LLM_KEY" in str(missing.value)
    fake_llm.script(reply("one"), reply("two"))
    async with make_client(app) as client:
        status = (await client.get("/api/inference/status")).json()["workloads"][0]
        assert status["configured"] is False and "FAKE_LLM_KEY" in status["reason"]
        await client.post("/api/secrets/FAKE_LLM_KEY", json={"value": "first-key"})
        configured.inference.get("memory_extraction").complete(request)
        await client.post("/api/secrets/FAKE_LLM_KEY", json={"value": "second-key"})
        configured.inference.get("memory_extraction").complete(request)
        status = await client.get("/api/inference/status")
        assert status.json()["workloads"][0]["configured"] is True
        assert "first-key" not in status.text and "second-key" not in status.text
    sent = [r.headers.get("authorization") for r in fake_llm.requests]
    assert sent == ["Bearer first-key", "Bearer second-key"]  # a new key, a new provider
