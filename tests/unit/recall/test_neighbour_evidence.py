"""The neighbours stage: a candidate two turns from a top hit gains, never past that hit."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from signet_desktop.config.pipeline import EvidenceStagesConfig
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import ChannelEvidence, RecallFilters
from signet_desktop.recall.channels import ChannelRequest, StageClock
from signet_desktop.recall.evidence_stages import evidence_stages
from signet_desktop.recall.fusion import FusedHit
from signet_desktop.recall.neighbour_evidence import NeighbourEvidence
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage.database import Database


def conversation(db: Database, session: str, n: int, agent: str = "default") -> list[str]:
    service = MemoryService(db)
    ids = []
    for i in range(n):
        who = "ana" if i % 2 == 0 else "bo"
        request = RememberRequest(
            content=f"{who}: turn {i} of {session}", session_id=session, who=who, agent_id=agent
        )
        ids.append(service.remember(request, Actor()).memory.id)
    return ids


def hit(memory_id: str, score: float, rank: int = 1) -> FusedHit:
    evidence = {"lexical": ChannelEvidence(score, rank, score)}
    return FusedHit(memory_id, score, "keyword", MappingProxyType(evidence))


def request(agent: str = "default") -> ChannelRequest:
    return ChannelRequest("what did ana do?", "what did ana do?", agent, RecallFilters(), 50)


def run(db: Database, hits: list[FusedHit], **options: float) -> list[FusedHit]:
    stage = NeighbourEvidence(**options)  # type: ignore[arg-type]
    return stage.apply(db.reader(), request(), hits, StageClock())


def test_the_turn_two_steps_after_a_top_hit_moves_up(db: Database) -> None:
    turns = conversation(db, "s1", 6)
    other = conversation(db, "s2", 3)
    hits = [hit(turns[1], 0.8), hit(other[0], 0.5), hit(other[2], 0.45), hit(turns[3], 0.4)]
    out = run(db, hits, anchors=1)
    assert [h.memory_id for h in out] == [turns[1], turns[3], other[0], other[2]]
    raised = out[1]
    assert raised.score == pytest.approx(0.4 + 0.15 * 0.8)
    [why] = raised.adjustments
    assert why.stage == "neighbours" and turns[1] in why.reason and "2 turns" in why.reason
    assert out[0].adjustments == () and out[2].adjustments == ()  # the rest as fused
    assert run(db, hits) == hits  # with 5 anchors turns[3] is a top hit itself: nothing passes


def test_a_lifted_turn_stays_below_the_hit_that_lent_to_it(db: Database) -> None:
    turns = conversation(db, "s1", 5)
    hits = [hit(turns[2], 0.6), hit(turns[4], 0.58), hit(turns[0], 0.3)]
    out = run(db, hits, weight=0.5, below_anchors=False)  # both two turns from turns[2]
    assert out[0].memory_id == turns[2] and out[0].adjustments == ()
    assert {h.memory_id for h in out[1:]} == {turns[4], turns[0]}
    assert all(0.6 - 1e-5 < h.score < 0.6 for h in out[1:])  # capped just below the anchor


def test_only_the_next_ring_counts_and_only_for_the_top_anchors(db: Database) -> None:
    turns = conversation(db, "s1", 8)
    # turns[1] and turns[5] are one and three steps from the only anchor (anchors=1)
    hits = [hit(turns[3], 0.9), hit(turns[4], 0.7), hit(turns[1], 0.35), hit(turns[5], 0.3)]
    one_anchor = run(db, hits, anchors=1)
    lifted = {h.memory_id for h in one_anchor if h.adjustments}
    assert lifted == {turns[1], turns[5]}  # two steps before and after turns[3]
    assert run(db, [hit(turns[0], 0.9), hit(turns[6], 0.5), hit(turns[2], 0.2)], anchors=1)[
        2
    ].adjustments  # turns[2] is two after turns[0]; turns[6] is not
    assert not run(db, [hit(turns[0], 0.9), hit(turns[1], 0.2)], anchors=1)[1].adjustments


def test_memories_outside_the_candidates_never_enter(db: Database) -> None:
    turns = conversation(db, "s1", 5)
    hits = [hit(turns[0], 0.9)]
    assert run(db, hits) == hits  # turns[2] exists but no channel returned it


def test_another_agents_session_lends_nothing(db: Database) -> None:
    mine = conversation(db, "s1", 1)
    theirs = conversation(db, "s1", 3, agent="b")
    hits = [hit(mine[0], 0.9), hit(theirs[2], 0.2)]
    assert run(db, hits) == hits


def test_weight_zero_changes_nothing_and_bad_options_are_refused(db: Database) -> None:
    turns = conversation(db, "s1", 3)
    hits = [hit(turns[0], 0.9), hit(turns[2], 0.2)]
    assert run(db, hits, weight=0.0) == hits
    for bad in ({"anchors": 0}, {"distance": 0}, {"weight": 1.5}, {"weight": -0.1}):
        with pytest.raises(ValueError):
            NeighbourEvidence(**bad)  # type: ignore[arg-type]


def test_off_by_default_and_after_time_and_preference_when_switched_on() -> None:
    names = [stage.name for stage in evidence_stages(EvidenceStagesConfig())]
    assert names == ["time", "preference", "claims"]
    on = evidence_stages(EvidenceStagesConfig.model_validate({"neighbours": True}))
    assert [stage.name for stage in on] == ["time", "preference", "neighbours", "claims"]


def test_below_anchors_keeps_every_top_hit_above_a_lifted_turn(db: Database) -> None:
    turns = conversation(db, "s1", 6)
    other = conversation(db, "s2", 2)
    hits = [hit(turns[1], 0.9), hit(other[0], 0.5), hit(other[1], 0.45), hit(turns[3], 0.44)]
    lender_only = run(db, hits, anchors=3, below_anchors=False)  # 0.44 + 0.135 passes two
    assert [h.memory_id for h in lender_only][:2] == [turns[1], turns[3]]
    kept = run(db, hits, anchors=3)  # the default: capped below the lowest top-3 hit
    assert [h.memory_id for h in kept] == [turns[1], other[0], other[1], turns[3]]
    assert 0.45 - 1e-5 < kept[3].score < 0.45 and kept[3].adjustments
