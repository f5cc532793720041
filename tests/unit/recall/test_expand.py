"""Transcript excerpts for `expand`: the matching turn, its neighbours, hard budgets."""

from __future__ import annotations

from signet_desktop.recall import expand

SESSION = "\n\n".join(
    [
        "User: let's look at the deploy pipeline",
        "Assistant: The pipeline builds on every push.",
        "User: which database does billing use?",
        "Assistant: billing runs on Postgres 16 since the March migration.",
        "User: thanks\n\nand the cache?",
        "Assistant: Redis 7.",
    ]
)


def test_turns_split_on_role_labels_and_keep_paragraphs_inside_a_turn() -> None:
    turns = expand.split_turns(SESSION)
    assert len(turns) == 6
    assert turns[4] == "User: thanks\n\nand the cache?"
    assert expand.split_turns("  \n") == []
    assert expand.split_turns("free text without roles") == ["free text without roles"]


def test_the_excerpt_is_the_best_matching_turn_with_one_turn_either_side() -> None:
    cut = expand.excerpt(SESSION, "billing runs on Postgres 16")
    assert cut is not None
    assert (cut.turn_index, cut.turn_count) == (3, 6)
    assert cut.text == "\n\n".join(expand.split_turns(SESSION)[2:5])


def test_no_shared_words_picks_the_first_turn_and_empty_content_gives_nothing() -> None:
    cut = expand.excerpt(SESSION, "zzz qqq")
    assert cut is not None and cut.turn_index == 0
    assert cut.text.startswith("User: let's look") and "Postgres" not in cut.text
    assert expand.excerpt("", "billing") is None
    assert expand.excerpt(SESSION, "billing", max_chars=0) is None


def test_the_budget_is_hard_and_the_matching_turn_survives_first() -> None:
    long_before = "User: " + "context " * 400
    long_after = "User: " + "later " * 400
    content = "\n\n".join([long_before, "Assistant: billing runs on Postgres 16", long_after])
    for budget in (60, 200, 1_200):
        cut = expand.excerpt(content, "billing runs on Postgres 16", max_chars=budget)
        assert cut is not None and len(cut.text) <= budget
        assert "Assistant: billing runs on Postgres 16" in cut.text
    huge = expand.excerpt("Assistant: " + "x" * 5_000, "x", max_chars=100)
    assert huge is not None and len(huge.text) == 100 and huge.text.endswith("…")
