"""The recall box explains each hit on hover: every channel's rank and score, context boosts."""

from __future__ import annotations

from signet_desktop.domain.memory import Memory
from signet_desktop.domain.recall import ChannelEvidence, ContextEvidence, RecallHit
from signet_desktop.ui.hit_format import explain_hit


def memory(who: str | None = "Caroline") -> Memory:
    return Memory(
        id="m1", agent_id="default", type="fact", content="Try The Name of the Wind.",
        content_hash="h", importance=0.5, pinned=False, tags=(), who=who, project=None,
        scope=None, visibility="global", memory_kind="episodic", source_type=None,
        source_id=None, idempotency_key=None, session_id="s1", metadata={},
        created_at="2026-01-01T00:00:00.000Z", updated_at="2026-01-01T00:00:00.000Z",
        updated_by="test", version=1, is_deleted=False, deleted_at=None, access_count=0,
        last_accessed=None, embedding_model=None,
    )  # fmt: skip


def test_both_channels_and_both_boosts_are_explained() -> None:
    hit = RecallHit(
        memory(),
        0.93,
        "hybrid",
        channels={
            "lexical": ChannelEvidence(score=0.8, rank=2, raw=-4.1),
            "semantic": ChannelEvidence(score=0.61, rank=5, raw=0.61),
        },
        context=ContextEvidence(who=0.1, session=0.12, neighbour_id="m0"),
    )
    assert explain_hit(hit) == (
        "score 0.93: keyword #2 (0.80) · vector #5 (0.61) · names Caroline +0.10 "
        "· session neighbour +0.12"
    )


def test_a_single_channel_hit_without_context() -> None:
    hit = RecallHit(memory(None), 0.4, "vector", {"semantic": ChannelEvidence(0.4, 1, 0.4)})
    assert explain_hit(hit) == "score 0.40: vector #1 (0.40)"


def test_a_newer_channel_is_explained_by_its_own_name_in_channel_order() -> None:
    hit = RecallHit(
        memory(None),
        0.7,
        "hybrid",
        {"traversal": ChannelEvidence(0.9, 1, 2.0), "lexical": ChannelEvidence(0.5, 3, -2.2)},
    )
    assert explain_hit(hit) == "score 0.70: traversal #1 (0.90) · keyword #3 (0.50)"


def test_a_hit_without_evidence_says_so() -> None:
    assert explain_hit(RecallHit(memory(None), 0.2, "keyword")) == (
        "score 0.20: no channel evidence"
    )
