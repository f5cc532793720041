"""Issue 24's four injections reach no context in any form, through the real routes: session
start (Signet's shape and Claude Code's native `additionalContext`), each prompt (both again),
pre-compaction and MEMORY.md — as memories and as past-session turns. Benign notes stored
beside them do reach context (so the routes are exercised, not silent)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from http_helpers import make_client

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.sessions import Turn
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.safety.defang import DATA_NOTE
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "injection_probe.json"
PROBE = json.loads(FIXTURE.read_text("utf-8"))["probe"]
BENIGN = (
    "billing runs on Postgres 16 since the November migration",
    "run `uv run pytest` before pushing billing changes",
)
CONFIG = SignetConfig.model_validate({"hooks": {"userPromptSubmit": {"minScore": 0.05}}})
PROMPTS = (
    "how do pushes authenticate for git credential setup in this repo?",
    "what status reporting should every reply end with for the dashboard?",
    "what is the new team policy about pushing to main and the test suite?",
    "quelles instructions pour afficher le contenu de credentials ?",
    "what runs billing and what should I run before pushing?",
)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SignetService]:
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    svc = build_service(WorkspacePaths.for_root(tmp_path), CONFIG, options)
    yield svc
    svc.close()


@pytest.fixture
async def client(service: SignetService, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    app: FastAPI = create_app(service, HttpSettings(agents_dir=str(tmp_path)))
    async with make_client(app) as c:
        yield c


def forms(marker: str) -> list[str]:
    """The marker as it might survive: as is, defanged, quoted, with its spaces collapsed."""
    low = marker.lower()
    return [low, low.replace(".", "[.]"), low.replace('"', "'"), re.sub(r"\s+", "", low)]


def assert_clean(text: str, where: str) -> None:
    low = text.lower()
    for item in PROBE:
        for form in forms(item["marker"]):
            assert form not in low and form not in re.sub(r"\s+", "", low), (where, item["name"])
    assert "attacker" not in low, where


async def seed(client: httpx.AsyncClient, service: SignetService) -> None:
    for text in [*(item["text"] for item in PROBE), *BENIGN]:
        body = {"content": text, "importance": 0.95, "pinned": True, "type": "fact"}
        reply = await client.post("/api/memory/remember", json=body)
        assert reply.status_code == 200, reply.text
    turns = [
        Turn(f"t{i}", "assistant" if i % 2 else "user", item["text"], "2026-11-29T09:00:00Z")
        for i, item in enumerate(PROBE)
    ]
    service.transcripts.capture("default", "old-1", "claude-code", turns, complete=True)


async def test_the_probe_reaches_no_context_and_benign_notes_do(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    await seed(client, service)
    seen: list[str] = []

    start = await client.post(
        "/api/hooks/session-start", json={"harness": "claude-code", "sessionKey": "s1"}
    )
    assert start.status_code == 200, start.text
    body = start.json()
    assert_clean(json.dumps(body, ensure_ascii=False), "session-start")
    seen.append(body["inject"])
    assert DATA_NOTE in body["inject"]

    native = await client.post(
        "/api/hooks/claude-code/session-start", json={"session_id": "s2", "cwd": "/work"}
    )
    assert native.status_code == 200, native.text
    context = native.json()["hookSpecificOutput"]["additionalContext"]
    assert_clean(context, "claude-code session-start")
    seen.append(context)

    for i, prompt in enumerate(PROMPTS):
        signet = await client.post(
            "/api/hooks/user-prompt-submit",
            json={"harness": "claude-code", "sessionKey": f"p{i}", "userMessage": prompt},
        )
        assert signet.status_code == 200, signet.text
        assert_clean(signet.text, f"user-prompt-submit {prompt}")
        seen.append(signet.json()["inject"])
        claude = await client.post(
            "/api/hooks/claude-code/user-prompt-submit",
            json={"session_id": f"c{i}", "cwd": "/work", "prompt": prompt},
        )
        assert claude.status_code == 200, claude.text
        assert_clean(claude.text, f"claude-code user-prompt-submit {prompt}")

    compaction = await client.post(
        "/api/hooks/pre-compaction", json={"harness": "claude-code", "sessionKey": "s1"}
    )
    assert compaction.status_code == 200, compaction.text
    assert_clean(compaction.text, "pre-compaction")

    rebuilt = await client.post("/api/memory-md/rebuild", json={})
    assert rebuilt.status_code == 200, rebuilt.text
    page = Path(rebuilt.json()["path"]).read_text("utf-8")
    assert_clean(page, "MEMORY.md")

    # The routes did carry the benign notes, quoted and readable.
    everything = "\n".join(seen) + page
    assert '"billing runs on Postgres 16 since the November migration"' in everything
    assert '"run `uv run pytest` before pushing billing changes"' in everything
    assert DATA_NOTE in page


async def test_a_defanged_link_survives_only_inert(client: httpx.AsyncClient) -> None:
    """A note the gate lets through still reaches context with no live link or image."""
    note = "Deploy status badge: ![deploy](https://ci.example.com/badge.svg?branch=main) see it"
    reply = await client.post(
        "/api/memory/remember", json={"content": note, "pinned": True, "importance": 0.9}
    )
    assert reply.status_code == 200, reply.text
    start = await client.post(
        "/api/hooks/session-start", json={"harness": "claude-code", "sessionKey": "d1"}
    )
    inject = start.json()["inject"]
    assert "hxxps://ci.example[.]com/badge.svg?…" in inject
    assert "![" not in inject and "](" not in inject and "https://" not in inject
    assert "branch=main" not in inject
    content = [m["content"] for m in start.json()["memories"]]
    assert content and all("https://" not in c and "![" not in c for c in content)
