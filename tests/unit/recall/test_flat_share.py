"""The final cut with graph evidence: traversal-only cap, reserved flat share, hint-only cap."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from signet_desktop.domain.recall import ChannelEvidence
from signet_desktop.recall.flat_share import (
    candidate_budget,
    cap_traversal_only,
    final_order,
    reserve_flat,
)
from signet_desktop.recall.fusion import HINT_ONLY_CAP, FusedHit, fuse


def hit(memory_id: str, score: float, *channels: str) -> FusedHit:
    evidence = {name: ChannelEvidence(score, 1, score) for name in channels}
    return FusedHit(memory_id, score, "x", MappingProxyType(evidence))


def test_candidate_budget_is_signets() -> None:
    assert candidate_budget(10, 50) == 40
    assert candidate_budget(10, 20) == 20
    assert candidate_budget(30, 20) == 30


def test_traversal_only_hits_rank_below_the_lowest_anchored_top_result() -> None:
    hits = [
        hit("t1", 0.9, "traversal"),
        hit("a1", 0.8, "lexical"),
        hit("t2", 0.7, "traversal"),
        hit("a2", 0.5, "lexical", "traversal"),
        hit("a3", 0.2, "semantic"),
    ]
    capped = cap_traversal_only(hits, limit=5)
    assert [h.memory_id for h in capped] == ["a1", "a2", "a3", "t1", "t2"]
    t1 = next(h for h in capped if h.memory_id == "t1")
    [adjustment] = t1.adjustments
    assert adjustment.stage == "cap.traversal_only" and adjustment.factor < 1
    assert not next(h for h in capped if h.memory_id == "a1").adjustments


def test_traversal_only_cap_leaves_lists_without_anchored_hits_alone() -> None:
    hits = [hit("t1", 0.9, "traversal"), hit("t2", 0.7, "traversal")]
    assert cap_traversal_only(hits, limit=10) == hits


def test_reserved_share_promotes_flat_only_hits_into_the_window() -> None:
    graph = [hit(f"g{i}", 0.9 - i / 100, "lexical", "traversal") for i in range(10)]
    flat = [hit(f"f{i}", 0.3 - i / 100, "lexical") for i in range(6)]
    out = reserve_flat(graph + flat, slots=10, share=0.4)
    top = [h.memory_id for h in out[:10]]
    assert sum(1 for m in top if m.startswith("f")) == 4  # ceil(0.4 * 10)
    assert top[:6] == [f"g{i}" for i in range(6)]  # the best graph hits keep their place
    demoted = [h for h in out if h.adjustments]
    assert {h.memory_id for h in demoted} == {"g6", "g7", "g8", "g9"}
    assert all(a.stage == "flat_share" for h in demoted for a in h.adjustments)
    assert [h.score for h in out] == sorted((h.score for h in out), reverse=True)


def test_reserved_share_changes_nothing_when_enough_flat_hits_are_there() -> None:
    hits = [hit("f1", 0.9, "lexical"), hit("g1", 0.8, "traversal", "lexical")]
    hits += [hit(f"f{i}", 0.5, "semantic") for i in range(2, 6)]
    assert reserve_flat(hits, slots=5, share=0.4) == hits


def test_final_order_is_a_no_op_without_traversal_evidence() -> None:
    hits = [hit("a", 0.9, "lexical"), hit("b", 0.4, "semantic", "lexical")]
    assert final_order(hits, limit=1, top_k=50) is hits


def test_hint_only_hits_are_capped_below_anchored_evidence() -> None:
    channels = {
        "lexical": [],
        "hint": [type("H", (), {"memory_id": "h", "evidence": ChannelEvidence(1.0, 1, 1.0)})()],
    }
    [only] = fuse(channels, {"lexical": 1.0, "hint": 1.0}, ran=["lexical", "hint"])
    assert only.score == pytest.approx(HINT_ONLY_CAP)
