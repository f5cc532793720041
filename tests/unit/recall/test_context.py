"""The context signals: the query naming a memory's who, and score lent by session neighbours."""

from __future__ import annotations

import pytest

from signet_desktop.domain.recall import ChannelEvidence, ContextEvidence
from signet_desktop.recall.context import ContextWeights, apply_context, named_whos
from signet_desktop.recall.fusion import FusedHit
from signet_desktop.storage.recall_context import CandidateContext


def hit(memory_id: str, score: float) -> FusedHit:
    evidence = ChannelEvidence(score=score, rank=1, raw=score)
    return FusedHit(memory_id, score, "keyword", {"lexical": evidence})


def facts(who: str | None = None, previous: str | None = None, nxt: str | None = None):  # type: ignore[no-untyped-def]
    return CandidateContext(who, previous, nxt)


@pytest.mark.parametrize(
    ("query", "whos", "named"),
    [
        ("What did Caroline research?", ["Caroline", "Melanie"], {"caroline"}),
        ("caroline's favourite book", ["Caroline"], {"caroline"}),
        ("Did Jon and Gina meet?", ["John", "Gina"], {"gina"}),  # Jon is not John
        ("a banana bread recipe", ["ana"], set()),  # whole words only
        ("what did the user decide", ["user", None, "x"], {"user"}),  # 1-char who ignored
        ("anything from claude-code today", ["claude-code"], {"claude-code"}),
        ("what did the c++ team (or .*) say", ["c++ team", ".*", "("], {"c++ team", ".*"}),
    ],
)
def test_named_whos_matches_whole_words_in_any_case(
    query: str, whos: list[str | None], named: set[str]
) -> None:
    assert named_whos(query, whos) == named


def test_who_named_in_the_query_adds_the_who_boost() -> None:
    fused = [hit("m-melanie", 0.60), hit("m-caroline", 0.55)]
    table = {"m-melanie": facts("Melanie"), "m-caroline": facts("Caroline")}
    out = apply_context(fused, table, "what did Caroline paint", ContextWeights(0.1, 0.0))
    assert [h.memory_id for h in out] == ["m-caroline", "m-melanie"]
    assert out[0].score == pytest.approx(0.65)
    assert out[0].context == ContextEvidence(who=0.1, session=0.0, neighbour_id=None)
    assert out[1].score == 0.60 and out[1].context is None  # untouched, exactly


def test_a_reply_borrows_from_the_question_next_to_it() -> None:
    # The question matched strongly; the reply beside it has few terms of its own.
    fused = [hit("question", 0.9), hit("unrelated", 0.30), hit("reply", 0.25)]
    table = {
        "question": facts(nxt="reply"),
        "reply": facts(previous="question", nxt="later"),  # "later" is not a candidate
        "unrelated": facts(),
    }
    out = apply_context(fused, table, "anything", ContextWeights(0.0, 0.15))
    by_id = {h.memory_id: h for h in out}
    assert by_id["reply"].score == pytest.approx(0.25 + 0.15 * 0.9)
    assert by_id["reply"].context == ContextEvidence(0.0, pytest.approx(0.135), "question")
    assert by_id["question"].score == pytest.approx(0.9 + 0.15 * 0.25)
    assert by_id["unrelated"].context is None
    assert [h.memory_id for h in out] == ["question", "reply", "unrelated"]


def test_the_best_neighbour_lends_and_non_candidates_lend_nothing() -> None:
    fused = [hit("a", 0.2), hit("b", 0.8), hit("c", 0.4)]
    table = {"c": facts(previous="a", nxt="b"), "a": facts(previous="gone")}
    out = {h.memory_id: h for h in apply_context(fused, table, "q", ContextWeights(0.0, 0.5))}
    assert out["c"].context is not None and out["c"].context.neighbour_id == "b"
    assert out["c"].score == pytest.approx(0.4 + 0.5 * 0.8)
    assert out["a"].context is None and out["a"].score == 0.2  # its neighbour is no candidate


def test_both_signals_add_up_and_no_candidate_is_added_or_lost() -> None:
    fused = [hit("x", 0.5), hit("y", 0.4), hit("z", 0.1)]
    table = {"x": facts("Ana", nxt="y"), "y": facts("Bo", previous="x")}
    out = apply_context(fused, table, "what does ana like", ContextWeights(0.1, 0.15))
    assert sorted(h.memory_id for h in out) == ["x", "y", "z"]
    x = next(h for h in out if h.memory_id == "x")
    assert x.score == pytest.approx(0.5 + 0.1 + 0.15 * 0.4)
    assert x.channels == fused[0].channels  # channel evidence is kept as reported


def test_zero_weights_leave_the_fusion_order_alone() -> None:
    fused = [hit("a", 0.5), hit("b", 0.4)]
    table = {"a": facts("Ana", nxt="b"), "b": facts(previous="a")}
    assert apply_context(fused, table, "ana", ContextWeights(0.0, 0.0)) == fused


@pytest.mark.parametrize("bad", [-0.1, 1.5])
def test_weights_outside_the_unit_interval_are_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="within"):
        ContextWeights(who_boost=bad)
    with pytest.raises(ValueError, match="within"):
        ContextWeights(session_weight=bad)
