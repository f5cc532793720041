"""The demo workspace's knowledge graph, one audited Dreaming pass and what it proposed.

Called by `scripts/demo_workspace.py: build` after the memories exist. Everything goes
through the real services: entities, aspects, claims and links through `service.knowledge`;
a finished harness session through `service.transcripts.capture`; new memories that name the
entities (linked by remember-time mention linking); then one real Dreaming pass — the real
runner, tool surface and apply seam — whose model is a scripted in-process provider
(`ScriptedProvider`, the OpenAI-compatible shape a local model would answer in). The pass
searches evidence, applies operations (some applied, one proposed for review, one refused
for lack of attention, one skipped for a quote that is not in its source), writes its
runbook notes and stops; the applied claim contradicts an older one, so the Proposals pane
has a contradiction to show.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from signet_desktop.config.models import DreamingConfig
from signet_desktop.domain.knowledge import Entity
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.sessions import Turn
from signet_desktop.inference.types import ChatRequest, ChatResponse, ToolCall, Usage
from signet_desktop.service.dreaming.service import build_dreaming
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest

AGENT = "default"
USER = Actor(changed_by="you", actor_type="user")
AGENT_ACTOR = Actor(changed_by="claude-code", actor_type="hook")
SESSION = "claude-code-20261130-billing"
CONVERSATION = (
    ("user", "Where does billing keep its data these days?"),
    ("assistant", "The billing service reads and writes its own Postgres database."),
    (
        "user",
        "I moved the billing DB to Postgres 16 yesterday; the analytics replica follows "
        "it with logical replication.",
    ),
    ("assistant", "Noted: billing is on Postgres 16 now, with a logical replica."),
    ("user", "Also, ledger-svc is just called ledger since the repo rename."),
    ("assistant", "Understood, I will call it ledger from now on."),
)
MENTIONS = (
    "Billing pages Alice when Postgres replication lags more than five minutes",
    "Ledger and Billing share the Postgres cluster but not the schema",
    "Alice asked Dmitri to review the Ledger migration before Friday",
)
MODEL = "scripted-demo"  # no model runs in the demo: the answers below are scripted


@dataclass(frozen=True, slots=True)
class DemoGraph:
    """What was created (ids by name) and the pass that ran."""

    entities: dict[str, str]
    pass_id: str | None
    memory_ids: dict[str, str]  # the memories that mention the entities, by content


class ScriptedProvider:
    """A ChatProvider that answers with the next scripted response (a stand-in for a local
    OpenAI-compatible model in demos; the runner and seam around it are the real ones)."""

    def __init__(self, steps: Sequence[tuple[str, list[tuple[str, dict[str, Any]]]]]) -> None:
        self._steps = list(steps)
        self._turn = 0

    @property
    def name(self) -> str:
        return "scripted"

    @property
    def model(self) -> str:
        return MODEL

    def complete(self, request: ChatRequest) -> ChatResponse:
        text, calls = self._steps[min(self._turn, len(self._steps) - 1)]
        self._turn += 1
        time.sleep(0.05)  # a provider takes time; the timeline shows durations
        tool_calls = tuple(
            ToolCall(f"call_{self._turn}_{n}", name, json.dumps(arguments))
            for n, (name, arguments) in enumerate(calls)
        )
        # What was really sent and answered, at ~4 characters a token (no tokenizer runs here).
        sent = sum(len(m.content) for m in request.messages) + sum(
            len(t.description) + len(json.dumps(t.parameters)) for t in request.tools
        )
        answered = len(text) + sum(len(c.arguments_json) for c in tool_calls)
        usage = Usage(input_tokens=sent // 4, output_tokens=max(1, answered // 4))
        return ChatResponse(
            text=text,
            tool_calls=tool_calls,
            finish_reason="tool_calls" if tool_calls else "stop",
            usage=usage,
            model=MODEL,
            provider=self.name,
            latency_ms=50.0,
            cost_usd=0.0,
        )


def seed_graph(service: SignetService) -> dict[str, Entity]:
    """Entities, aspects with claims (one to be superseded), links both ways."""
    knowledge = service.knowledge
    kinds = {
        "billing": "service",
        "ledger": "service",
        "ledger-svc": "service",
        "Postgres": "tool",
        "Alice": "person",
        "Dmitri": "person",
        "analytics replica": "system",
    }
    made = {
        name: knowledge.create_entity(AGENT, name, actor=USER, entity_type=kind)[0]
        for name, kind in kinds.items()
    }
    billing, ledger = made["billing"].id, made["ledger"].id
    knowledge.add_claim(
        AGENT,
        billing,
        "Postgres 14",
        actor=USER,
        aspect="storage",
        claim_key="database",
        confidence=0.9,
    )
    for version in ("Go 1.21", "Go 1.23"):  # the second supersedes the first (history)
        knowledge.add_claim(
            AGENT, billing, version, actor=USER, aspect="stack", claim_key="language"
        )
    knowledge.add_claim(
        AGENT,
        billing,
        "Alice owns billing; ask her before schema changes",
        actor=USER,
        aspect="ownership",
    )
    knowledge.add_claim(AGENT, ledger, "Rust", actor=USER, aspect="stack", claim_key="language")
    knowledge.add_claim(
        AGENT, ledger, "append-only: corrections are new entries", actor=USER, aspect="design"
    )
    for source, target, kind, strength in (
        ("billing", "Postgres", "depends_on", 0.9),
        ("ledger", "Postgres", "depends_on", 0.8),
        ("billing", "ledger", "calls", 0.7),
        ("Alice", "billing", "maintains", 0.6),
        ("Dmitri", "ledger", "maintains", 0.6),
        ("analytics replica", "Postgres", "replicates", 0.5),
    ):
        knowledge.create_link(
            AGENT, made[source].id, made[target].id, kind, actor=USER, strength=strength
        )
    return made


def capture_session(service: SignetService) -> str:
    """A finished Claude Code session about billing and ledger (the pass quotes it)."""
    stamp = "2026-11-30T16:20:00.000Z"
    turns = [
        Turn(f"{SESSION}-{n}", role, text, stamp) for n, (role, text) in enumerate(CONVERSATION)
    ]
    service.transcripts.capture(
        AGENT, SESSION, "claude-code", turns, project="billing", complete=True
    )
    return f"transcript:{SESSION}"


def script(made: dict[str, Entity], transcript: str, storage: str) -> list[Any]:
    """What the scripted model does: search, look, apply claims, apply the rest, note, stop."""
    billing, ledger, old = made["billing"], made["ledger"], made["ledger-svc"]

    def quote(text: str, ref: str = transcript) -> list[dict[str, str]]:
        return [{"quote": text, "source_ref": ref}]

    ops = [
        {
            "operation": "create_entity",
            "payload": {"name": "logical replication", "type": "concept"},
            "evidence": quote("the analytics replica follows it with logical replication"),
            "confidence": 0.8,
            "reason": "a named technique the billing database uses",
        },
        {
            "operation": "create_link",
            "payload": {
                "fromEntityId": made["analytics replica"].id,
                "toEntityId": billing.id,
                "linkType": "follows",
            },
            "evidence": quote("the analytics replica follows it"),
            "confidence": 0.8,
        },
        {
            "operation": "rename_entity",
            "payload": {"entityId": old.id, "newName": "ledger"},
            "evidence": quote("ledger-svc is just called ledger since the repo rename"),
            "confidence": 0.9,
            "risk": "high",
            "reason": "the service was renamed",
        },
        {
            "operation": "merge_entities",
            "payload": {"targets": [old.id, ledger.id], "survivor": ledger.id},
            "evidence": quote("ledger-svc is just called ledger"),
            "confidence": 0.7,
        },
        {
            "operation": "create_entity",
            "payload": {"name": "Bob", "type": "person"},
            "evidence": quote("Bob reviewed the replica setup"),
            "confidence": 0.5,
        },
    ]
    return [
        ("", [("search_evidence", {"query": "billing database Postgres"})]),
        (
            "",
            [
                ("get_entity", {"entityId": billing.id}),
                ("list_aspect_claims", {"entityId": billing.id, "aspectId": storage}),
            ],
        ),
        ("", [("apply_ontology_ops", {"operations": ops})]),
        (
            "",
            [
                (
                    "runbook_write",
                    {
                        "summary": "Billing moved to Postgres 16 with a logical analytics replica; "
                        "ledger-svc was renamed ledger (proposed for review).",
                        "openQuestions": [
                            "Should ledger-svc be merged into ledger? Needs an attention "
                            "record first."
                        ],
                    },
                )
            ],
        ),
        ("Done: evidence consolidated.", []),
    ]


def set_claim_ops(made: dict[str, Entity], aspect_id: str, transcript: str) -> list[Any]:
    """The claim updates the model makes once it saw the aspect (a second apply call)."""
    billing = made["billing"].id
    return [
        {
            "operation": "add_claim_value",
            "payload": {
                "entityId": billing,
                "aspectId": aspect_id,
                "claimKey": "database",
                "value": "Postgres 16",
            },
            "evidence": [
                {
                    "quote": "I moved the billing DB to Postgres 16 yesterday",
                    "source_ref": transcript,
                }
            ],
            "confidence": 0.9,
            "reason": "the user said so in the session",
        },
    ]


def add_graph_and_pass(service: SignetService) -> DemoGraph:
    """Seed the graph, capture the session, run one scripted Dreaming pass to its end."""
    made = seed_graph(service)
    transcript = capture_session(service)
    requests = [
        RememberRequest(content=text, agent_id=AGENT, source_type="claude-code")
        for text in MENTIONS
    ]  # remember-time mention linking links them
    outcomes = service.memories.remember_many(requests, AGENT_ACTOR)
    memory_ids = {r.content: o.memory.id for r, o in zip(requests, outcomes, strict=True)}
    aspect = next(
        a.aspect.id
        for a in service.knowledge.get_entity(AGENT, made["billing"].id).aspects
        if a.aspect.name == "storage"
    )
    steps = script(made, transcript, aspect)
    claims = ("", [("apply_ontology_ops", {"operations": set_claim_ops(made, aspect, transcript)})])
    steps.insert(2, claims)
    db = service._db  # the facade's database, as demo_workspace's queue history reaches it
    dreaming = build_dreaming(
        db,
        DreamingConfig(),
        provider=lambda: ScriptedProvider(steps),
        workspace=db_root(service),
        events=service.events,
    )
    pass_id: str | None = dreaming.trigger(AGENT, "incremental")
    if pass_id is not None and not dreaming.wait(pass_id, timeout=60):
        pass_id = None
    dreaming.close()
    return DemoGraph({name: e.id for name, e in made.items()}, pass_id, memory_ids)


def db_root(service: SignetService) -> Any:
    """The workspace root (the canonical transcripts live under it)."""
    from pathlib import Path

    return Path(service._db.path).parent.parent
