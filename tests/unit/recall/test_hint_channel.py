"""The `hint` channel: BM25 over hints, calibrated, one hit per memory, scoped and filtered."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallFilters, RecallQuery
from signet_desktop.recall.engine import RecallEngine
from signet_desktop.recall.hints import HintChannel, hint_search
from signet_desktop.recall.lexical import LexicalChannel
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage import hints as hint_rows
from signet_desktop.storage.database import Database

WEIGHTS = {"lexical": 0.5, "hint": 0.5}


def remember(db: Database, content: str, hints: Sequence[str], **fields: object) -> str:
    request = RememberRequest(content=content, **fields)  # type: ignore[arg-type]
    memory_id = MemoryService(db).remember(request, Actor()).memory.id
    with db.write() as conn:
        hint_rows.insert_hints(conn, request.agent_id, memory_id, hints)
    return memory_id


@pytest.fixture
def engine(db: Database) -> Iterator[RecallEngine]:
    engine = RecallEngine(db, channels=(LexicalChannel(), HintChannel()), weights=WEIGHTS)
    yield engine
    engine.close()


def test_one_hit_per_memory_its_best_hint_scored_into_0_1(db: Database) -> None:
    memory = remember(
        db,
        "Ana moved to Lisbon in 2021 to open a bakery.",
        ["where does Ana live", "which city did Ana relocate to", "what does Ana bake"],
    )
    other = remember(db, "The deploy key is rotated monthly.", ["how often is the key rotated"])
    hits = hint_search(db.reader(), "which city did ana relocate to", "default", RecallFilters())
    assert [h.memory_id for h in hits] == [memory]
    [hit] = hits
    assert hit.hint == "which city did Ana relocate to"
    assert 0 < hit.evidence.score <= 1 and hit.evidence.rank == 1 and hit.evidence.raw < 0
    weaker = hint_search(db.reader(), "ana city bakery rotated", "default", RecallFilters())
    assert {h.memory_id for h in weaker} == {memory, other}
    assert all(h.evidence.score < hit.evidence.score for h in weaker)


def test_a_hint_only_match_is_labelled_hint(db: Database, engine: RecallEngine) -> None:
    memory = remember(db, "Ana moved to Lisbon in 2021.", ["which city did she relocate to"])
    result = engine.recall(RecallQuery(query="relocate city", min_score=0.0))
    [hit] = result.hits
    assert hit.memory.id == memory and hit.source == "hint" and list(hit.channels) == ["hint"]
    both = engine.recall(RecallQuery(query="Lisbon relocate", min_score=0.0))
    assert both.hits[0].source == "hybrid" and set(both.hits[0].channels) == {"lexical", "hint"}


def test_agent_b_never_matches_agent_a_hints(db: Database, engine: RecallEngine) -> None:
    remember(db, "A's private note.", ["where is the vault combination"], agent_id="a")
    assert hint_search(db.reader(), "vault combination", "b", RecallFilters()) == []
    result = engine.recall(RecallQuery(query="vault combination", agent_id="b", min_score=0.0))
    assert result.hits == ()
    assert len(hint_search(db.reader(), "vault combination", "a", RecallFilters())) == 1


def test_filters_and_liveness_apply_to_the_hinted_memory(db: Database) -> None:
    kept = remember(db, "Staging runs on port 5433.", ["staging port number"], type="fact")
    remember(db, "Prod runs on port 5432.", ["production port number"], type="decision")
    gone = remember(db, "Old staging ran on 6543.", ["old staging port number"])
    scoped = remember(db, "Scoped port note.", ["scoped port number"], scope="work")
    MemoryService(db).forget("default", gone, reason="test", actor=Actor())
    found = hint_search(db.reader(), "port number", "default", RecallFilters(type="fact"))
    assert [h.memory_id for h in found] == [kept]
    in_scope = hint_search(db.reader(), "port number", "default", RecallFilters(scope="work"))
    assert [h.memory_id for h in in_scope] == [scoped]


def test_no_hints_and_no_terms_find_nothing(db: Database) -> None:
    remember(db, "A memory without hints.", [])
    assert hint_search(db.reader(), "memory hints", "default", RecallFilters()) == []
    assert hint_search(db.reader(), "the of and", "default", RecallFilters()) == []


def test_a_match_outside_the_ranked_pool_is_still_found(db: Database) -> None:
    for n in range(12):  # another agent's strong matches fill the k * 8 pool
        remember(db, f"A's note {n}.", [f"deploy rotation key {n}"], agent_id="a")
    mine = remember(db, "B's note.", ["deploy rotation key schedule and other words"], agent_id="b")
    found = hint_search(db.reader(), "deploy rotation key", "b", RecallFilters(), k=1)
    assert [h.memory_id for h in found] == [mine]


def test_terms_over_the_postings_budget_are_not_matched(db: Database, monkeypatch: Any) -> None:
    monkeypatch.setattr("signet_desktop.recall.hints.HINT_POSTINGS_BUDGET", 3)
    for n in range(4):
        remember(db, f"Note {n}.", [f"common word {n}"])
    rare = remember(db, "The rare one.", ["common zebra"])
    found = hint_search(db.reader(), "common zebra", "default", RecallFilters())
    assert [h.memory_id for h in found] == [rare]  # `common` (5 hints) was left out
    assert hint_search(db.reader(), "common", "default", RecallFilters()) == []
