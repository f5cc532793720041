"""The lexical channel's pruning on PostgreSQL (recall/lexical.py: bm25_top_k) returns what
one search over every matched term returns: the same rows, order and BM25, on a corpus where
a few words are rare and others are in most rows, with the first pass forced small."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from support.backends import Backend, open_backend

from signet_desktop.domain.memory import NewMemory
from signet_desktop.domain.recall import RecallFilters
from signet_desktop.recall import lexical
from signet_desktop.recall.lexical import lexical_search
from signet_desktop.recall.term_counts import TermCounts
from signet_desktop.storage import memories

pytestmark = pytest.mark.postgres

COMMON = ("project", "team", "build", "release", "review")
RARE = ("zeppelin", "quasar", "marmalade", "lighthouse", "saxophone", "glacier")
QUERIES = (
    "zeppelin project team",
    "quasar build release review",
    "marmalade lighthouse team",
    "project team build",  # only common words: one search
    "saxophone glacier review release project team build",
    "lighthouse",
)


@pytest.fixture
def postgres(tmp_path: Path, pg_url: str) -> Iterator[Backend]:
    """600 rows: most short, of common words said once to three times; one in ten holds a
    rare word, in a short row (it outranks the common rows) or a long one (it does not)."""
    backend = open_backend("postgres", tmp_path / "unused.db", pg_url)
    rng = random.Random(7)
    with backend.write() as conn:
        for i in range(600):
            words = rng.sample(COMMON, rng.randint(1, 3)) * rng.randint(1, 3)
            if i % 10 == 0:
                words = [rng.choice(RARE)] * rng.randint(1, 2) + words[:2]
                if i % 20 == 0:
                    words += [f"filler{rng.randint(0, 300)}" for _ in range(rng.randint(30, 60))]
            words += [f"filler{rng.randint(0, 300)}" for _ in range(rng.randint(0, 4))]
            rng.shuffle(words)
            agent = "a" if i % 7 else "b"
            new = NewMemory(agent_id=agent, content=" ".join(words) + f" note{i}")
            memories.insert_memory(conn, f"m{i:03}", new, actor="t", embedding_model=None)
    yield backend
    backend.conn.close()


def test_pruned_searches_return_what_one_search_returns(
    postgres: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = TermCounts(max_age_s=3600)  # both runs see the same totals
    searches: list[int] = []  # searches per pruned call
    full = lexical.bm25_top_k

    def counted(search: Any, *args: Any) -> list[Any]:
        calls = [0]

        def each(terms: Sequence[str]) -> list[Any]:
            calls[0] += 1
            return search(terms)  # type: ignore[no-any-return]

        rows = full(each, *args)
        searches.append(calls[0])
        return rows

    monkeypatch.setattr(lexical, "bm25_top_k", counted)
    for query in QUERIES:
        for agent, k in (("a", 10), ("a", 50), ("b", 5)):
            monkeypatch.setattr(lexical, "FIRST_PASS_POSTINGS", 10**9)
            one = lexical_search(postgres.conn, query, agent, RecallFilters(), k, counts)
            monkeypatch.setattr(lexical, "FIRST_PASS_POSTINGS", 60)
            pruned = lexical_search(postgres.conn, query, agent, RecallFilters(), k, counts)
            assert [(h.memory_id, h.evidence.raw) for h in pruned] == [
                (h.memory_id, h.evidence.raw) for h in one
            ], (query, agent, k)
            assert one or agent == "b", query  # each query finds agent a's rows
    pruned_calls = searches[1::2]
    assert pruned_calls.count(1) > 3 and 2 in pruned_calls  # the first pass answered, or not
