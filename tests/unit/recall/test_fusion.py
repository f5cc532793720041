"""Fusion of lexical and semantic evidence: the blend, single-channel rules, order, evidence."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from signet_desktop.domain.recall import ChannelEvidence
from signet_desktop.recall.fusion import fuse


@dataclass(frozen=True, slots=True)
class Hit:
    memory_id: str
    evidence: ChannelEvidence


def hits(*pairs: tuple[str, float]) -> list[Hit]:
    return [Hit(mid, ChannelEvidence(score, i + 1, score)) for i, (mid, score) in enumerate(pairs)]


def scores(fused: list) -> dict[str, float]:  # type: ignore[type-arg]
    return {h.memory_id: round(h.score, 6) for h in fused}


def test_both_channels_blend_linearly() -> None:
    [hit] = fuse(hits(("a", 0.5)), hits(("a", 0.9)), alpha=0.7)
    assert hit.source == "hybrid"
    assert hit.score == pytest.approx(0.7 * 0.9 + 0.3 * 0.5)
    assert hit.lexical == ChannelEvidence(0.5, 1, 0.5)
    assert hit.semantic == ChannelEvidence(0.9, 1, 0.9)


def test_raw_rule_keeps_the_single_score() -> None:
    fused = fuse(
        hits(("a", 1.0), ("b", 0.4)), hits(("b", 0.6), ("c", 0.8)), alpha=0.7, single="raw"
    )
    assert scores(fused) == {"a": 1.0, "b": pytest.approx(0.54), "c": 0.8}
    assert [h.source for h in fused] == ["keyword", "vector", "hybrid"]


def test_zero_rule_counts_the_missing_channel_as_zero() -> None:
    fused = fuse(
        hits(("a", 1.0), ("b", 0.4)), hits(("b", 0.6), ("c", 0.8)), alpha=0.7, single="zero"
    )
    assert scores(fused) == {"b": 0.54, "c": 0.56, "a": 0.3}


def test_floor_rule_uses_each_channels_lowest_returned_score() -> None:
    lexical = hits(("a", 1.0), ("b", 0.4))
    semantic = hits(("b", 0.6), ("c", 0.8), ("d", 0.2))
    fused = fuse(lexical, semantic, alpha=0.5, single="floor")
    # a: lexical only -> semantic floor 0.2; c, d: semantic only -> lexical floor 0.4
    assert scores(fused) == {"a": 0.6, "c": 0.6, "b": 0.5, "d": 0.3}
    by_id = {h.memory_id: h for h in fused}
    assert by_id["a"].semantic is None and by_id["c"].lexical is None  # no invented evidence


def test_a_lone_channel_keeps_its_scores_under_every_rule() -> None:
    for rule in ("raw", "zero", "floor"):
        assert scores(fuse(hits(("a", 0.9), ("b", 0.3)), [], single=rule)) == {"a": 0.9, "b": 0.3}  # type: ignore[arg-type]
        assert scores(fuse([], hits(("c", 0.5)), single=rule)) == {"c": 0.5}  # type: ignore[arg-type]


def test_ties_break_on_best_rank_then_id() -> None:
    fused = fuse(hits(("z", 0.5), ("y", 0.5)), [], alpha=0.7)
    assert [h.memory_id for h in fused] == ["z", "y"]
    fused = fuse(
        [Hit("b", ChannelEvidence(0.5, 1, 0.5)), Hit("a", ChannelEvidence(0.5, 1, 0.5))], []
    )
    assert [h.memory_id for h in fused] == ["a", "b"]


def test_alpha_extremes_select_one_channel() -> None:
    lexical, semantic = hits(("a", 1.0), ("b", 0.2)), hits(("b", 0.9), ("a", 0.1))
    assert fuse(lexical, semantic, alpha=1.0)[0].memory_id == "b"
    assert fuse(lexical, semantic, alpha=0.0)[0].memory_id == "a"
    with pytest.raises(ValueError, match="alpha"):
        fuse(lexical, semantic, alpha=1.5)


def test_empty_inputs_give_nothing() -> None:
    assert fuse([], []) == []


def test_floor_is_zero_when_a_channel_had_nothing_more_to_give() -> None:
    # One lexical match out of a requested depth of 50: other memories did not match at all,
    # so they must not inherit that match's (perfect) lexical score.
    lexical = hits(("a", 1.0))
    semantic = hits(("a", 0.2), ("b", 0.6))
    fused = fuse(lexical, semantic, alpha=0.5, single="floor", depth=50)
    assert scores(fused) == {"a": 0.6, "b": 0.3}
    truncated = fuse(lexical, semantic, alpha=0.5, single="floor", depth=1)
    assert scores(truncated)["b"] == 0.8  # a full (truncated) list bounds the missing score
