"""Prompt-submit's narrow entity lookup over HTTP: a named entity brings its memories."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from tests.support.db import database_of

pytestmark = pytest.mark.anyio

NOW = "2026-12-01T00:00:00.000Z"
# A recall threshold nothing reaches: whatever is injected came from the entity lookup.
CONFIG = SignetConfig.model_validate({"hooks": {"userPromptSubmit": {"minScore": 0.99}}})


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SignetService]:
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    svc = build_service(WorkspacePaths.for_root(tmp_path), CONFIG, options)
    with database_of(svc).write() as conn:
        for agent in ("default", "b"):
            conn.execute(
                "INSERT INTO entities (id, agent_id, name, canonical_name, created_at,"
                " updated_at) VALUES (?, ?, 'Ledger', 'ledger', ?, ?)",
                (f"e-ledger-{agent}", agent, NOW, NOW),
            )
        conn.execute(
            "INSERT INTO entity_aliases (id, entity_id, agent_id, alias, canonical_alias,"
            " created_at) VALUES ('al-1', 'e-ledger-default', 'default', 'LDG', 'ldg', ?)",
            (NOW,),
        )
    yield svc
    svc.close()


async def prompt(client: httpx.AsyncClient, text: str, **extra: object) -> dict[str, object]:
    body = {"harness": "claude-code", "userMessage": text, "sessionKey": "s1", **extra}
    reply = await client.post("/api/hooks/user-prompt-submit", json=body)
    assert reply.status_code == 200, reply.text
    answer: dict[str, object] = reply.json()
    return answer


async def test_a_prompt_naming_an_entity_injects_the_memories_that_mention_it(
    client: httpx.AsyncClient,
) -> None:
    reply = await client.post(
        "/api/memory/remember", json={"content": "The Ledger service owns every invoice"}
    )
    assert reply.status_code == 200, reply.text
    await client.post("/api/memory/remember", json={"content": "billing deploys on Fridays"})
    answer = await prompt(client, "why is LDG slow today?")
    assert answer["memoryCount"] == 1
    assert "The Ledger service owns every invoice" in str(answer["inject"])
    again = await prompt(client, "and is the Ledger up?")
    assert again["memoryCount"] == 0  # injected once per context epoch
    nothing = await prompt(client, "what about deploys?", sessionKey="s2")
    assert nothing["memoryCount"] == 0  # names no entity, and recall reaches no threshold


async def test_another_agents_entity_memories_never_come_back(
    client: httpx.AsyncClient,
) -> None:
    await client.post(
        "/api/memory/remember", json={"content": "Ledger secret plan", "agentId": "b"}
    )
    answer = await prompt(client, "tell me about the Ledger")
    assert answer["memoryCount"] == 0 and "secret plan" not in str(answer["inject"])
