"""The context signals through the facade: who is named, session neighbours, config, agent scope."""

from __future__ import annotations

import pytest
from conftest import Factory
from support.fakes import ScriptedEmbedder

from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallHit, RecallQuery, RecallResult
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest

# One conversation: the question names the trip; the answer beside it does not.
CONVERSATION = (
    ("Melanie", "Any book recommendations for my camping trip next month?"),
    ("Caroline", "Try The Name of the Wind, it will carry you through every evening."),
    ("Melanie", "Thanks, I will pack it with the tent."),
)


def remember(service: SignetService, who: str, text: str, session: str, agent: str) -> str:
    request = RememberRequest(content=text, who=who, session_id=session, agent_id=agent)
    return service.memories.remember(request, Actor()).memory.id


def converse(service: SignetService, agent: str = "default", session: str = "s1") -> list[str]:
    return [remember(service, who, text, session, agent) for who, text in CONVERSATION]


def recall(service: SignetService, query: str, **kw: object) -> RecallResult:
    return service.recall.search(RecallQuery(query=query, min_score=0.0, **kw))  # type: ignore[arg-type]


def by_id(result: RecallResult) -> dict[str, RecallHit]:
    return {hit.memory.id: hit for hit in result.hits}


def test_the_answer_borrows_from_the_question_it_follows(service: SignetService) -> None:
    question, answer, _ = converse(service)
    plain = by_id(recall(service, "book for the camping trip", context=False))
    hits = by_id(recall(service, "book for the camping trip"))
    assert plain[answer].context is None
    lent = hits[answer].context
    # The question scored best among the answer's neighbours, so it is the one that lends.
    assert lent is not None and lent.neighbour_id == question
    assert lent.session == pytest.approx(0.25 * plain[question].score)
    assert hits[answer].score == pytest.approx(plain[answer].score + lent.session)
    assert "context" in [stage.name for stage in recall(service, "camping trip").timings]


def test_naming_the_speaker_boosts_what_they_said(service: SignetService) -> None:
    question, answer, thanks = converse(service)
    hits = by_id(recall(service, "what did Caroline recommend"))
    assert hits[answer].context is not None and hits[answer].context.who == 0.15
    for melanie in (question, thanks):
        context = hits[melanie].context if melanie in hits else None
        assert context is None or context.who == 0.0


def test_zero_weights_in_config_switch_the_stage_off(
    make_service: Factory, embedder: ScriptedEmbedder
) -> None:
    service = make_service(embedder, config={"search": {"who_boost": 0, "session_weight": 0}})
    converse(service)
    result = recall(service, "what did Caroline recommend for the camping trip")
    assert result.hits and all(hit.context is None for hit in result.hits)
    assert "context" not in [stage.name for stage in result.timings]


def test_another_agent_in_the_same_session_lends_nothing(service: SignetService) -> None:
    # Agent b's question sits between a's memories in seq order and shares the session name.
    mine = remember(service, "Caroline", "Try The Name of the Wind tonight.", "s1", "a")
    remember(service, "Melanie", "Any book for the camping trip?", "s1", "b")
    mine_later = remember(service, "Caroline", "camping gear list: tent, stove", "s1", "a")
    result = recall(service, "book for the camping trip", agent_id="a")
    assert {hit.memory.id for hit in result.hits} <= {mine, mine_later}
    for hit in result.hits:
        assert hit.context is None or hit.context.neighbour_id in {mine, mine_later, None}


def test_search_top_k_bounds_the_candidates_that_can_lend(
    make_service: Factory, embedder: ScriptedEmbedder
) -> None:
    # Lexical only: the question matches "camping" best, the thanks ("tent") a little.
    # With a candidate depth of 1 the thanks is no candidate, so it cannot lend.
    for top_k, lends in ((50, True), (1, False)):
        service = make_service(embedder, config={"search": {"top_k": top_k}})
        agent = f"agent-{top_k}"  # one workspace: each round in its own scope
        remember(service, "Melanie", "Any camping book for my trip?", "s1", agent)
        remember(service, "Melanie", "camping tent packed", "s1", agent)
        hits = recall(
            service, "camping trip tent", channels=("lexical",), limit=1, agent_id=agent
        ).hits
        assert (hits[0].context is not None) is lends, top_k
        service.close()
