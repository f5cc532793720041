"""Planning counts: remembered only when large, forgotten when old, never hiding new words."""

from __future__ import annotations

from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallFilters
from signet_desktop.recall.lexical import lexical_search
from signet_desktop.recall.term_counts import TermCounts
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage.database import Database


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def remember(db: Database, *texts: str) -> None:
    service = MemoryService(db)
    for text in texts:
        service.remember(RememberRequest(content=text), Actor())


def test_large_counts_are_remembered_until_they_expire(db: Database) -> None:
    remember(db, *(f"common note {i}" for i in range(5)))
    clock = Clock()
    counts = TermCounts(max_age_s=30, min_cached=3, clock=clock)
    assert counts.count(db.reader(), "common", cap=100) == 5
    remember(db, "common note five", "common note six")
    assert counts.count(db.reader(), "common", cap=100) == 5  # remembered
    clock.now = 31
    assert counts.count(db.reader(), "common", cap=100) == 7  # expired: counted again
    assert counts.count(db.reader(), "common", cap=3) == 3  # another cap is another entry


def test_small_counts_and_zero_are_never_remembered(db: Database) -> None:
    counts = TermCounts(min_cached=3, clock=Clock())
    assert counts.count(db.reader(), "zebrafish", cap=100) == 0
    remember(db, "zebrafish spawn in spring")
    assert counts.count(db.reader(), "zebrafish", cap=100) == 1
    hits = lexical_search(db.reader(), "zebrafish", "default", RecallFilters(), term_counts=counts)
    assert len(hits) == 1  # a word recalled before it was remembered is found at once


def test_a_full_cache_drops_expired_entries_first(db: Database) -> None:
    remember(db, *(f"alpha beta gamma {i}" for i in range(3)))
    clock = Clock()
    counts = TermCounts(max_age_s=10, max_entries=2, min_cached=1, clock=clock)
    counts.count(db.reader(), "alpha", cap=100)
    clock.now = 11
    counts.count(db.reader(), "beta", cap=100)
    counts.count(db.reader(), "gamma", cap=100)  # full: the expired "alpha" goes
    assert set(counts._entries) == {("beta", 100), ("gamma", 100)}
