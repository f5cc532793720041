"""Graph-aware recall end to end through the facade: traversal evidence, scope, hubs, modes."""

from __future__ import annotations

import time
from typing import Any

from conftest import Factory
from support import traversal_seed as seed
from support.db import database_of
from support.fakes import ScriptedEmbedder

from signet_desktop.api.recall_views import hit_json, recall_json
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallQuery, RecallResult
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest

FLAT_ONLY = {"memory": {"pipelineV2": {"dampening": {"hub": False}}}}
NOTES = (
    "the billing service uses a managed database",
    "deploys happen on fridays after lunch",
    "the frontend is written in svelte",
    "invoices are kept in the primary cluster for seven years",
)


def config(**traversal: Any) -> dict[str, Any]:
    return {"memory": {"pipelineV2": {"traversal": traversal, "dampening": {"hub": False}}}}


def remember(service: SignetService, text: str, agent: str = "default") -> str:
    request = RememberRequest(content=text, agent_id=agent)
    return service.memories.remember(request, Actor()).memory.id


def atlas_graph(service: SignetService) -> dict[str, str]:
    """Atlas -uses-> Postgres; a claim of Atlas's whose evidence is a memory without its name."""
    ids = {text: remember(service, text) for text in NOTES}
    with database_of(service).write() as conn:
        atlas = seed.entity(conn, "default", "Atlas", "project")
        postgres = seed.entity(conn, "default", "Postgres", "system")
        storage = seed.aspect(conn, "default", atlas, "storage", 0.9)
        claim_memory = ids["invoices are kept in the primary cluster for seven years"]
        seed.claim(conn, "default", storage, "keeps invoices seven years", claim_memory)
        seed.depends(conn, "default", atlas, postgres, strength=0.8)
    replica = remember(service, "Postgres replicas are promoted by hand during an incident")
    return {"atlas": atlas, "postgres": postgres, "claim": claim_memory, "replica": replica}


def search(service: SignetService, text: str, **kw: Any) -> RecallResult:
    return service.recall.search(RecallQuery(query=text, **kw))


def ranked(result: RecallResult) -> list[tuple[str, float]]:
    return [(hit.memory.id, hit.score) for hit in result.hits]


def test_traversal_reaches_claims_and_dependencies_and_shows_the_path(
    make_service: Factory,
) -> None:
    service = make_service(ScriptedEmbedder(64), config=config())
    graph = atlas_graph(service)
    result = search(service, "how long does Atlas keep invoices?", min_score=0.0)
    hits = {hit.memory.id: hit for hit in result.hits}
    claim = hits[graph["claim"]]
    assert "traversal" in claim.channels and claim.source == "hybrid"
    path = hit_json(claim)["channels"]["traversal"]["path"]
    assert [step["kind"] for step in path] == ["entity", "aspect", "claim"]
    assert path[0] == {"kind": "entity", "id": graph["atlas"], "name": "Atlas"}
    replica = hits[graph["replica"]]  # one dependency hop away, mentions Postgres
    kinds = [step.kind for step in replica.channels["traversal"].path]
    assert kinds == ["entity", "dependency", "entity", "mention"]
    meta = recall_json(result)["meta"]["traversal"]
    assert meta["partial"] is False and meta["paths"] >= 2
    assert [e["name"] for e in meta["focalEntities"]] == ["Atlas"]


def test_no_focal_entity_or_traversal_off_is_the_flat_hybrid_exactly(
    make_service: Factory,
) -> None:
    graphed = make_service(ScriptedEmbedder(64), config=config())
    atlas_graph(graphed)
    flat = make_service(ScriptedEmbedder(64), config=config(enabled=False))
    for text in ("which database does billing use?", "when do deploys happen"):
        with_graph, without = search(graphed, text), search(flat, text)
        assert ranked(with_graph) == ranked(without) and with_graph.hits
        assert with_graph.traversal is None and "traversal" not in recall_json(with_graph)["meta"]
    named = search(flat, "how long does Atlas keep invoices?")
    assert all("traversal" not in hit.channels and not hit.adjustments for hit in named.hits)


def test_another_agents_entity_is_never_resolved_or_walked(make_service: Factory) -> None:
    service = make_service(ScriptedEmbedder(64), config=config())
    atlas_graph(service)
    secret = remember(service, "zephyr launch codes live in the vault", agent="other")
    with database_of(service).write() as conn:
        zephyr = seed.entity(conn, "other", "Zephyr")
        seed.mention(conn, "other", secret, zephyr)
    mine = search(service, "what about Zephyr?", min_score=0.0)
    assert mine.traversal is None and secret not in {h.memory.id for h in mine.hits}
    theirs = search(service, "how long does Atlas keep invoices?", agent_id="other", min_score=0.0)
    assert theirs.traversal is None
    assert all(hit.memory.agent_id == "other" for hit in theirs.hits)


def test_a_hub_entity_with_10000_mentions_leaves_direct_matches_on_top(
    make_service: Factory,
) -> None:
    service = make_service(None, config=config())  # lexical + traversal: the harder case
    direct = [
        remember(service, text)
        for text in (
            "the billing database runs Postgres 16 on two replicas",
            "billing database backups are taken every hour",
            "the billing database password rotates monthly",
            "billing database migrations run before each deploy",
        )
    ]
    with database_of(service).write() as conn:
        hub = seed.entity(conn, "default", "Acme")
        hub_memories = seed.memories(
            conn, "default", [f"Acme weekly sync notes, item {i}" for i in range(10_000)]
        )
        for memory_id in hub_memories:
            seed.mention(conn, "default", memory_id, hub)
    started = time.perf_counter()
    result = search(service, "which database does Acme billing use?", limit=10)
    took = time.perf_counter() - started
    ids = [hit.memory.id for hit in result.hits]
    assert set(ids[:4]) == set(direct)  # every direct match, above all 10,000 hub memories
    assert result.traversal is not None and result.traversal.partial
    assert any(
        note.startswith("traversal partial: mentions of Acme not walked") for note in result.notes
    )
    assert took < 2.0


def test_non_primary_mode_boosts_hits_linked_to_named_entities(make_service: Factory) -> None:
    service = make_service(ScriptedEmbedder(64), config=config(primary=False))
    graph = atlas_graph(service)
    linked = remember(service, "Atlas invoices are exported nightly to the archive")
    assert graph
    result = search(service, "how are Atlas invoices exported?", min_score=0.0)
    hit = next(h for h in result.hits if h.memory.id == linked)
    assert "traversal" not in hit.channels
    [boost] = [a for a in hit.adjustments if a.stage == "graph.boost"]
    assert boost.factor > 1 and "Atlas" in boost.reason
    others = [h for h in result.hits if h.memory.id != linked]
    assert all(not h.adjustments for h in others)
