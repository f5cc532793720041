"""A recall hit's channel evidence on the wire: `channels` by name, plus the two older keys."""

from __future__ import annotations

from signet_desktop.api.recall_views import hit_json
from signet_desktop.domain.memory import Memory
from signet_desktop.domain.recall import ChannelEvidence, RecallHit


def memory() -> Memory:
    return Memory(
        id="m1", agent_id="default", type="fact", content="Billing uses PostgreSQL.",
        content_hash="h", importance=0.5, pinned=False, tags=(), who=None, project=None,
        scope=None, visibility="global", memory_kind="episodic", source_type=None,
        source_id=None, idempotency_key=None, session_id=None, metadata={},
        created_at="2026-01-01T00:00:00.000Z", updated_at="2026-01-01T00:00:00.000Z",
        updated_by="test", version=1, is_deleted=False, deleted_at=None, access_count=0,
        last_accessed=None, embedding_model=None,
    )  # fmt: skip


def test_a_keyword_only_hit_has_a_null_semantic_key() -> None:
    hit = RecallHit(memory(), 0.8, "keyword", {"lexical": ChannelEvidence(0.812345, 1, -3.2)})
    body = hit_json(hit)
    assert body["channels"] == {"lexical": {"score": 0.8123, "rank": 1}}
    assert body["lexical"] == {"score": 0.8123, "rank": 1} and body["semantic"] is None


def test_every_channel_is_listed_by_name_in_channel_order() -> None:
    evidence = {
        "lexical": ChannelEvidence(0.5, 3, -1.0),
        "semantic": ChannelEvidence(0.61, 2, 0.61),
        "traversal": ChannelEvidence(0.9, 1, 2.0),
    }
    body = hit_json(RecallHit(memory(), 0.7, "hybrid", evidence))
    assert list(body["channels"]) == ["lexical", "semantic", "traversal"]
    assert body["channels"]["traversal"] == {"score": 0.9, "rank": 1}
    assert body["semantic"] == body["channels"]["semantic"]
    assert "traversal" not in body  # a newer channel lives in `channels` only
