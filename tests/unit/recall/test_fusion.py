"""Fusion of N channels' evidence: the blend, single-channel rules, order, evidence, weights."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from signet_desktop.domain.recall import ChannelEvidence
from signet_desktop.recall.fusion import (
    FusedHit,
    SingleChannelRule,
    channel_weights,
    fuse,
    source_of,
)


@dataclass(frozen=True, slots=True)
class Hit:
    memory_id: str
    evidence: ChannelEvidence


def hits(*pairs: tuple[str, float]) -> list[Hit]:
    return [Hit(mid, ChannelEvidence(score, i + 1, score)) for i, (mid, score) in enumerate(pairs)]


def scores(fused: list[FusedHit]) -> dict[str, float]:
    return {h.memory_id: round(h.score, 6) for h in fused}


def two(
    lexical: Sequence[Hit],
    semantic: Sequence[Hit],
    alpha: float = 0.7,
    single: SingleChannelRule = "floor",
    depth: int | None = None,
) -> list[FusedHit]:
    """The two-channel call the engine makes."""
    channels = {"lexical": lexical, "semantic": semantic}
    return fuse(channels, channel_weights(alpha), single=single, depth=depth)


def test_both_channels_blend_linearly() -> None:
    [hit] = two(hits(("a", 0.5)), hits(("a", 0.9)), alpha=0.7)
    assert hit.source == "hybrid"
    assert hit.score == pytest.approx(0.7 * 0.9 + 0.3 * 0.5)
    assert dict(hit.channels) == {
        "lexical": ChannelEvidence(0.5, 1, 0.5),
        "semantic": ChannelEvidence(0.9, 1, 0.9),
    }
    assert list(hit.channels) == ["lexical", "semantic"]  # in the order the channels came


def test_evidence_is_read_only() -> None:
    [hit] = two(hits(("a", 0.5)), [])
    with pytest.raises(TypeError):
        hit.channels["semantic"] = ChannelEvidence(1.0, 1, 1.0)  # type: ignore[index]


def test_raw_rule_keeps_the_single_score() -> None:
    fused = two(hits(("a", 1.0), ("b", 0.4)), hits(("b", 0.6), ("c", 0.8)), single="raw")
    assert scores(fused) == {"a": 1.0, "b": pytest.approx(0.54), "c": 0.8}
    assert [h.source for h in fused] == ["keyword", "vector", "hybrid"]


def test_zero_rule_counts_the_missing_channel_as_zero() -> None:
    fused = two(hits(("a", 1.0), ("b", 0.4)), hits(("b", 0.6), ("c", 0.8)), single="zero")
    assert scores(fused) == {"b": 0.54, "c": 0.56, "a": 0.3}


def test_floor_rule_uses_each_channels_lowest_returned_score() -> None:
    lexical = hits(("a", 1.0), ("b", 0.4))
    semantic = hits(("b", 0.6), ("c", 0.8), ("d", 0.2))
    fused = two(lexical, semantic, alpha=0.5, single="floor")
    # a: lexical only -> semantic floor 0.2; c, d: semantic only -> lexical floor 0.4
    assert scores(fused) == {"a": 0.6, "c": 0.6, "b": 0.5, "d": 0.3}
    by_id = {h.memory_id: h for h in fused}
    assert list(by_id["a"].channels) == ["lexical"]  # no invented evidence
    assert list(by_id["c"].channels) == ["semantic"]


def test_a_lone_channel_keeps_its_scores_under_every_rule() -> None:
    rules: tuple[SingleChannelRule, ...] = ("raw", "zero", "floor")
    for rule in rules:
        assert scores(two(hits(("a", 0.9), ("b", 0.3)), [], single=rule)) == {"a": 0.9, "b": 0.3}
        assert scores(two([], hits(("c", 0.5)), single=rule)) == {"c": 0.5}


def test_ties_break_on_best_rank_then_id() -> None:
    fused = two(hits(("z", 0.5), ("y", 0.5)), [])
    assert [h.memory_id for h in fused] == ["z", "y"]
    fused = two(
        [Hit("b", ChannelEvidence(0.5, 1, 0.5)), Hit("a", ChannelEvidence(0.5, 1, 0.5))], []
    )
    assert [h.memory_id for h in fused] == ["a", "b"]


def test_alpha_extremes_select_one_channel() -> None:
    lexical, semantic = hits(("a", 1.0), ("b", 0.2)), hits(("b", 0.9), ("a", 0.1))
    assert two(lexical, semantic, alpha=1.0)[0].memory_id == "b"
    assert two(lexical, semantic, alpha=0.0)[0].memory_id == "a"
    with pytest.raises(ValueError, match="alpha"):
        channel_weights(1.5)


def test_empty_inputs_give_nothing() -> None:
    assert two([], []) == []
    assert fuse({}, {}) == []


def test_floor_is_zero_when_a_channel_had_nothing_more_to_give() -> None:
    # One lexical match out of a requested depth of 50: other memories did not match at all,
    # so they must not inherit that match's (perfect) lexical score.
    lexical = hits(("a", 1.0))
    semantic = hits(("a", 0.2), ("b", 0.6))
    fused = two(lexical, semantic, alpha=0.5, single="floor", depth=50)
    assert scores(fused) == {"a": 0.6, "b": 0.3}
    truncated = two(lexical, semantic, alpha=0.5, single="floor", depth=1)
    assert scores(truncated)["b"] == 0.8  # a full (truncated) list bounds the missing score


def test_three_channels_blend_with_weights_renormalised_over_active_channels() -> None:
    channels = {
        "lexical": hits(("a", 1.0), ("b", 0.5)),
        "semantic": hits(("b", 0.8), ("c", 0.6)),
        "extra": hits(("c", 1.0)),
    }
    weights = {"lexical": 0.2, "semantic": 0.6, "extra": 0.2}
    fused = {h.memory_id: h for h in fuse(channels, weights, single="zero")}
    assert fused["b"].score == pytest.approx(0.2 * 0.5 + 0.6 * 0.8)
    assert fused["c"].score == pytest.approx(0.6 * 0.6 + 0.2 * 1.0)
    assert fused["c"].source == "hybrid" and list(fused["c"].channels) == ["semantic", "extra"]
    # The extra channel returned nothing: the other two share its weight.
    quiet = {h.memory_id: h for h in fuse({**channels, "extra": []}, weights, single="zero")}
    assert quiet["b"].score == pytest.approx((0.2 * 0.5 + 0.6 * 0.8) / 0.8)
    assert quiet["c"].source == "vector"


def test_raw_rule_blends_only_the_channels_that_saw_a_memory() -> None:
    channels = {"lexical": hits(("a", 1.0)), "semantic": hits(("a", 0.5)), "extra": hits(("b", 1))}
    weights = {"lexical": 0.25, "semantic": 0.5, "extra": 0.25}
    fused = {h.memory_id: h for h in fuse(channels, weights, single="raw")}
    assert fused["a"].score == pytest.approx((0.25 * 1.0 + 0.5 * 0.5) / 0.75)
    assert fused["b"].score == 1.0 and fused["b"].source == "extra"


def test_zero_weights_weigh_equally_and_bad_weights_are_refused() -> None:
    channels = {"lexical": hits(("a", 1.0)), "extra": hits(("a", 0.5))}
    [hit] = fuse(channels, {"lexical": 0.0, "extra": 0.0}, single="zero")
    assert hit.score == pytest.approx(0.75)
    with pytest.raises(ValueError, match="no fusion weight for channel 'extra'"):
        fuse(channels, {"lexical": 1.0})
    for bad in (-0.1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="finite and >= 0"):
            fuse(channels, {"lexical": 1.0, "extra": bad})


def test_source_names_who_saw_a_memory() -> None:
    assert source_of(["lexical"]) == "keyword" and source_of(["semantic"]) == "vector"
    assert source_of(["traversal"]) == "traversal"
    assert source_of(["lexical", "traversal"]) == "hybrid"


# --- the two-channel case is exactly the formula before N channels ---------------------------


def legacy_fuse(
    lexical: Sequence[Hit],
    semantic: Sequence[Hit],
    alpha: float,
    single: SingleChannelRule,
    depth: int | None,
) -> list[tuple[str, float, str, ChannelEvidence | None, ChannelEvidence | None]]:
    """A frozen copy of `fuse(lexical, semantic)` as it was before N channels (de7dbc9)."""

    def stand_in(found: dict[str, ChannelEvidence]) -> float:
        truncated = depth is None or len(found) >= depth
        if single == "floor" and truncated:
            return min(ev.score for ev in found.values())
        return 0.0

    lex = {h.memory_id: h.evidence for h in lexical}
    sem = {h.memory_id: h.evidence for h in semantic}
    blending = bool(lex) and bool(sem)
    lex_missing = stand_in(lex) if blending else 0.0
    sem_missing = stand_in(sem) if blending else 0.0
    fused = []
    for memory_id in lex.keys() | sem.keys():
        lex_ev, sem_ev = lex.get(memory_id), sem.get(memory_id)
        if lex_ev is not None and sem_ev is not None:
            score, source = alpha * sem_ev.score + (1 - alpha) * lex_ev.score, "hybrid"
        elif sem_ev is not None:
            score, source = sem_ev.score, "vector"
            if blending and single != "raw":
                score = alpha * sem_ev.score + (1 - alpha) * lex_missing
        else:
            assert lex_ev is not None
            score, source = lex_ev.score, "keyword"
            if blending and single != "raw":
                score = alpha * sem_missing + (1 - alpha) * lex_ev.score
        fused.append((memory_id, score, source, lex_ev, sem_ev))

    def order(row: tuple[str, float, str, ChannelEvidence | None, ChannelEvidence | None]) -> Any:
        ranks = [ev.rank for ev in row[3:] if ev is not None]
        return (-row[1], min(ranks), row[0])

    fused.sort(key=order)
    return fused


SCORES = st.one_of(
    st.floats(0.0, 1.0, allow_nan=False), st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.7, 1.0])
)
ALPHAS = st.one_of(st.floats(0.0, 1.0, allow_nan=False), st.sampled_from([0.0, 0.3, 0.7, 1.0]))


@st.composite
def channel_hits(draw: st.DrawFn) -> list[Hit]:
    ids = draw(st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=8))
    ranked = sorted((draw(SCORES) for _ in ids), reverse=draw(st.booleans()))
    return [
        Hit(mid, ChannelEvidence(s, i + 1, -s))
        for i, (mid, s) in enumerate(zip(ids, ranked, strict=True))
    ]


@settings(max_examples=600, deadline=None)
@given(
    lexical=channel_hits(),
    semantic=channel_hits(),
    alpha=ALPHAS,
    single=st.sampled_from(["raw", "zero", "floor"]),
    depth=st.one_of(st.none(), st.integers(1, 10)),
    semantic_first=st.booleans(),
)
def test_two_channels_give_exactly_the_legacy_scores_and_order(
    lexical: list[Hit],
    semantic: list[Hit],
    alpha: float,
    single: SingleChannelRule,
    depth: int | None,
    semantic_first: bool,
) -> None:
    channels = {"lexical": lexical, "semantic": semantic}
    if semantic_first:  # the order of the mapping changes the evidence order, never the scores
        channels = {"semantic": semantic, "lexical": lexical}
    weights = {"semantic": alpha, "lexical": 1 - alpha}
    fused = fuse(channels, weights, single=single, depth=depth)
    expected = legacy_fuse(lexical, semantic, alpha, single, depth)
    assert [(h.memory_id, h.score, h.source) for h in fused] == [row[:3] for row in expected]
    for hit, row in zip(fused, expected, strict=True):
        assert (hit.channels.get("lexical"), hit.channels.get("semantic")) == row[3:]


def test_a_channel_that_ran_and_matched_nothing_counts_as_zero() -> None:
    """With calibrated scores "no match" is evidence: the lone channel keeps only its share."""
    lexical, semantic = hits(), hits(("a", 0.6), ("b", 0.2))
    alone = fuse({"lexical": lexical, "semantic": semantic}, channel_weights(0.7))
    assert scores(alone) == {"a": 0.6, "b": 0.2}  # default: nothing to blend with
    ran = fuse(
        {"lexical": lexical, "semantic": semantic},
        channel_weights(0.7),
        depth=2,
        ran=("lexical", "semantic"),
    )
    assert scores(ran) == pytest.approx({"a": 0.7 * 0.6, "b": 0.7 * 0.2})
    assert [h.source for h in ran] == ["vector", "vector"]
    only = fuse({"lexical": lexical, "semantic": semantic}, channel_weights(0.7), ran=("semantic",))
    assert scores(only) == {"a": 0.6, "b": 0.2}  # lexical did not run: no part in the blend
