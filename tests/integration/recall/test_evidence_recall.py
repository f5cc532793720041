"""Time and preference evidence through the facade: cues written by remember, as_of, config."""

from __future__ import annotations

from conftest import Factory

from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallQuery, RecallResult
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest

SAID = "2022-05-02T10:00:00.000Z"


def remember(service: SignetService, text: str, at: str = SAID, agent: str = "default") -> str:
    request = RememberRequest(content=text, created_at=at, agent_id=agent)
    return service.memories.remember(request, Actor()).memory.id


def recall(service: SignetService, query: str, **kw: object) -> RecallResult:
    return service.recall.search(RecallQuery(query=query, min_score=0.0, **kw))  # type: ignore[arg-type]


def test_a_resolved_yesterday_answers_a_dated_question(service: SignetService) -> None:
    plain = remember(service, "Joanna watched a movie with her family, a long one")
    dated = remember(service, "Joanna: yesterday I watched a movie, Lord of the Rings")
    result = recall(service, "Which movie did Joanna watch on 1 May, 2022?")
    assert result.hits[0].memory.id == dated
    [why] = [a for a in result.hits[0].adjustments if a.stage == "time"]
    assert "'yesterday' (2022-05-01)" in why.reason
    assert plain in {h.memory.id for h in result.hits}


def test_the_question_date_anchors_last_week(service: SignetService) -> None:
    old = remember(service, "I went hiking in the hills", at="2022-03-01T10:00:00.000Z")
    recent = remember(service, "I went hiking by the lake", at="2022-05-04T10:00:00.000Z")
    asked = recall(service, "Where did I go hiking last week?", as_of="2022-05-10T09:00:00Z")
    assert asked.hits[0].memory.id == recent
    reasons = [a.reason for a in asked.hits[0].adjustments if a.stage == "time"]
    assert reasons and "2022-05-04" in reasons[0]
    before = recall(service, "Where did I go hiking last week?", as_of="2022-03-05T09:00:00Z")
    assert before.hits[0].memory.id == old


def test_switching_the_stages_off_in_config(make_service: Factory, embedder: object) -> None:
    config = {"memory": {"pipelineV2": {"evidence": {"time": False, "preference": False}}}}
    service = make_service(embedder, config=config)
    remember(service, "I went there yesterday")
    result = recall(service, "When did I go there on 1 May, 2022?")
    assert all(not h.adjustments or h.adjustments[0].stage == "rerank" for h in result.hits)
    assert "time" not in service.recall._engine.stage_names


def test_another_agents_dated_memory_is_never_seen(service: SignetService) -> None:
    remember(service, "yesterday I watched Lord of the Rings", agent="other")
    mine = remember(service, "I watched a film once")
    result = recall(service, "Which film did I watch on 1 May, 2022?")
    assert [h.memory.id for h in result.hits] == [mine]
