"""`bm25_top_k`'s pruning decisions (recall/lexical.py), over a scripted search: which terms
each search matches, and when the first search's rows are the answer. The rows it returns are
checked against a full search on PostgreSQL in tests/integration/recall/test_pg_bm25_pruning.py."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from signet_desktop.recall import lexical
from signet_desktop.recall.lexical import K1, bm25_top_k, one_lexeme

COUNTS = {"rare": 3, "odd": 40, "common": 5000, "everywhere": 9000}
IDFS = {"rare": 8.0, "odd": 5.0, "common": 1.0, "everywhere": 0.2}
MATCHED = ("rare", "odd", "common", "everywhere")  # rarest first, as plan_terms orders them


class Search:
    """Returns `k` rows scored `floor` for the first call, recording each call's terms."""

    def __init__(self, floor: float, rows: int) -> None:
        self.floor, self.rows, self.calls = floor, rows, []  # type: list[tuple[str, ...]]

    def __call__(self, terms: Sequence[str]) -> list[Any]:
        self.calls.append(tuple(terms))
        return [{"id": f"m{i}", "bm25": -self.floor} for i in range(self.rows)]


@pytest.fixture(autouse=True)
def first_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lexical, "FIRST_PASS_POSTINGS", 100)  # "rare" and "odd" first


def test_a_floor_above_every_common_bound_answers_from_the_first_search() -> None:
    bound = (K1 + 1) * (IDFS["common"] + IDFS["everywhere"])
    search = Search(floor=bound + 0.01, rows=10)
    assert len(bm25_top_k(search, MATCHED, COUNTS, IDFS, 10)) == 10
    assert search.calls == [("rare", "odd")]


def test_a_floor_between_the_bounds_drops_only_the_most_common_term() -> None:
    floor = (K1 + 1) * IDFS["everywhere"] + 0.01  # below "common"'s bound added to it
    search = Search(floor=floor, rows=10)
    bm25_top_k(search, MATCHED, COUNTS, IDFS, 10)
    assert search.calls == [("rare", "odd"), ("rare", "odd", "common")]


def test_fewer_rows_than_k_give_no_floor_and_the_full_search_runs() -> None:
    search = Search(floor=100.0, rows=9)
    bm25_top_k(search, MATCHED, COUNTS, IDFS, 10)
    assert search.calls == [("rare", "odd"), MATCHED]


def test_terms_that_fit_the_first_pass_are_searched_once() -> None:
    search = Search(floor=1.0, rows=10)
    bm25_top_k(search, ("rare", "odd"), COUNTS, IDFS, 10)
    assert search.calls == [("rare", "odd")]


def test_a_token_of_several_lexemes_counts_against_the_floor_wherever_it_is() -> None:
    """'café' may be parsed into lexemes whose first a row holds without matching the
    phrase: its bound counts even though it is among the rare terms searched first."""
    counts, idfs = {**COUNTS, "café": 2}, {**IDFS, "café": 9.0}
    matched = ("café", "rare", "common", "everywhere")
    bound = (K1 + 1) * (idfs["café"] + IDFS["common"] + IDFS["everywhere"])
    search = Search(floor=bound - 0.01, rows=10)  # enough without café's bound, not with it
    bm25_top_k(search, matched, counts, idfs, 10)
    assert search.calls == [("café", "rare"), ("café", "rare", "common")]
    assert not one_lexeme("café") and one_lexeme("v2") and one_lexeme("2026")
