"""The `claims` stage: memories stating the asked claim value of a named entity go first."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallQuery, RecallResult
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.recall.claim_evidence import ClaimEvidence
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest

USER = Actor(changed_by="you", actor_type="user")
ANSWER = "notifications runs on SQS with a dead-letter queue after five tries"
QUESTION = "which broker do notifications use?"
LEDGER = "ledger runs on SQS as its broker too"
MEMORIES = (
    ANSWER,
    "The broker for the search indexer is Kafka, and its broker config lives in Helm",
    "notifications use the broker connection pool from the shared library",
    "Broker credentials rotate monthly; the broker user is read-only",
    LEDGER,  # the value and the key, but not the entity: not an answer
    # Calibrated lexical scores weigh terms by IDF: the workspace needs other memories too.
    "Deploys go out on Tuesdays after the review",
    "Backups run every night at two",
    "Logs are shipped to the central collector",
    "The on-call rotation changes every Monday",
    "Feature flags live in the settings service",
    "The mobile app is built with Kotlin",
    "Design reviews happen in the studio room",
    "The staging cluster has four nodes",
    "Invoices are emailed as PDF files",
    "Alerts page the on-call engineer",
    "Search reindexes nightly at two in the morning",
    "Dark mode follows the system setting",
)
WITHOUT = ("rerank", "time", "preference")  # every default stage but `claims`


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SignetService]:
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    svc = build_service(WorkspacePaths.for_root(tmp_path), SignetConfig(), options)
    for text in MEMORIES:
        svc.memories.remember(RememberRequest(content=text), USER)
    yield svc
    svc.close()


def claim(service: SignetService, value: str, agent: str = "default", **options: object) -> None:
    knowledge = service.knowledge
    entity, _ = knowledge.create_entity(agent, "notifications", actor=USER, entity_type="service")
    knowledge.add_claim(
        agent, entity.id, value, actor=USER, aspect="messaging", claim_key="broker", **options
    )


def recall(service: SignetService, query: str = QUESTION, **options: object) -> RecallResult:
    return service.recall.search(RecallQuery(query=query, limit=10, **options))  # type: ignore[arg-type]


def contents(result: RecallResult) -> list[str]:
    return [hit.memory.content for hit in result.hits]


def ranking(result: RecallResult) -> list[tuple[str, float]]:
    return [(hit.memory.id, hit.score) for hit in result.hits]


def test_the_memory_stating_the_claim_goes_first(service: SignetService) -> None:
    claim(service, "SQS")
    before = recall(service, stages=WITHOUT)
    assert contents(before)[0] != ANSWER  # the memories saying "broker" outrank it
    after = recall(service)
    assert contents(after)[0] == ANSWER
    (moved,) = [a for a in after.hits[0].adjustments if a.stage == "claims"]
    assert moved.reason == "states notifications's broker as the knowledge graph holds it: 'SQS'"
    # Each rank keeps the score it had: the reorder changes the order, not the scale.
    assert sorted(h.score for h in after.hits) == sorted(h.score for h in before.hits)
    ledger = after.hits[contents(after).index(LEDGER)]
    assert not any(a.reason.startswith("states") for a in ledger.adjustments)


def test_the_aspect_name_asks_as_well_as_the_key(service: SignetService) -> None:
    claim(service, "SQS")
    assert contents(recall(service, "what messaging do notifications rely on?"))[0] == ANSWER


@pytest.mark.parametrize(
    "query",
    [
        "who owns notifications?",  # names the entity, not the claim's key or aspect
        "which broker does the ledger use?",  # names the key, not the entity
    ],
)
def test_a_question_not_asking_the_claim_keeps_the_fused_order(
    service: SignetService, query: str
) -> None:
    claim(service, "SQS")
    assert ranking(recall(service, query)) == ranking(recall(service, query, stages=WITHOUT))


def test_superseded_low_confidence_and_other_agents_claims_are_not_evidence(
    service: SignetService,
) -> None:
    unchanged = ranking(recall(service, stages=WITHOUT))
    claim(service, "SQS", agent="other")  # another agent's graph
    claim(service, "SQS", confidence=0.3)  # too unsure
    assert ranking(recall(service)) == unchanged
    claim(service, "Kafka")  # supersedes the unsure SQS claim of the same key
    assert contents(recall(service))[0] != ANSWER


def test_top_n_must_be_positive() -> None:
    with pytest.raises(ValueError, match="top_n"):
        ClaimEvidence(top_n=0)
