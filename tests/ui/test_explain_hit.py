"""How a recall hit reads: why it ranked (channels, boosts), badges, meta line, summary."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from signet_desktop.domain.memory import Memory
from signet_desktop.domain.recall import (
    ChannelEvidence,
    ContextEvidence,
    RecallHit,
    RecallResult,
)
from signet_desktop.ui.hit_format import (
    ExplanationRow,
    badges,
    explain_hit,
    explanation_rows,
    meta_line,
    no_match_text,
    preview,
    relative_date,
    summary_line,
)


def memory(who: str | None = "Caroline") -> Memory:
    return Memory(
        id="m1", agent_id="default", type="fact", content="Try The Name of the Wind.",
        content_hash="h", importance=0.5, pinned=False, tags=(), who=who, project=None,
        scope=None, visibility="global", memory_kind="episodic", source_type=None,
        source_id=None, idempotency_key=None, session_id="s1", metadata={},
        created_at="2026-01-01T00:00:00.000Z", updated_at="2026-01-01T00:00:00.000Z",
        updated_by="test", version=1, is_deleted=False, deleted_at=None, access_count=0,
        last_accessed=None, embedding_model=None,
    )  # fmt: skip


def test_both_channels_and_both_boosts_are_explained() -> None:
    hit = RecallHit(
        memory(),
        0.93,
        "hybrid",
        channels={
            "lexical": ChannelEvidence(score=0.8, rank=2, raw=-4.1),
            "semantic": ChannelEvidence(score=0.61, rank=5, raw=0.61),
        },
        context=ContextEvidence(who=0.1, session=0.12, neighbour_id="m0"),
    )
    assert explain_hit(hit) == (
        "score 0.93: keyword #2 (0.80) · vector #5 (0.61) · names Caroline +0.10 "
        "· session neighbour +0.12"
    )


def test_a_single_channel_hit_without_context() -> None:
    hit = RecallHit(memory(None), 0.4, "vector", {"semantic": ChannelEvidence(0.4, 1, 0.4)})
    assert explain_hit(hit) == "score 0.40: vector #1 (0.40)"


def test_a_newer_channel_is_explained_by_its_own_name_in_channel_order() -> None:
    hit = RecallHit(
        memory(None),
        0.7,
        "hybrid",
        {"traversal": ChannelEvidence(0.9, 1, 2.0), "lexical": ChannelEvidence(0.5, 3, -2.2)},
    )
    assert explain_hit(hit) == "score 0.70: traversal #1 (0.90) · keyword #3 (0.50)"


def test_a_hit_without_evidence_says_so() -> None:
    assert explain_hit(RecallHit(memory(None), 0.2, "keyword")) == (
        "score 0.20: no channel evidence"
    )


NOW = datetime(2026, 1, 10, 12, 0, tzinfo=UTC)


def tagged(**changes: object) -> Memory:
    return replace(memory("alice"), tags=("infra", "db"), project="billing", **changes)


def test_badges_follow_channel_order_and_add_context_only_for_a_boost() -> None:
    evidence = {"semantic": ChannelEvidence(0.7, 1, 0.7), "lexical": ChannelEvidence(0.4, 3, -1)}
    plain = RecallHit(memory(), 0.6, "hybrid", evidence)
    assert badges(plain) == ("vector", "keyword")
    zero = RecallHit(memory(), 0.6, "hybrid", evidence, ContextEvidence(who=0.0, session=0.0))
    assert badges(zero) == ("vector", "keyword")
    boosted = RecallHit(memory(), 0.7, "hybrid", evidence, ContextEvidence(session=0.1))
    assert badges(boosted) == ("vector", "keyword", "context")
    graph = RecallHit(memory(), 0.5, "traversal", {"traversal": ChannelEvidence(0.5, 1, 1.0)})
    assert badges(graph) == ("traversal",)


@pytest.mark.parametrize(
    ("created", "expected"),
    [
        ("2026-01-10T11:59:30.000Z", "just now"),
        ("2026-01-10T11:59:00.000Z", "1 minute ago"),
        ("2026-01-10T11:15:00.000Z", "45 minutes ago"),
        ("2026-01-10T09:00:00.000Z", "3 hours ago"),
        ("2026-01-09T10:00:00.000Z", "yesterday"),
        ("2026-01-08T11:00:00.000Z", "2 days ago"),
        ("2025-12-20T12:00:00.000Z", "3 weeks ago"),
        ("2025-10-01T12:00:00.000Z", "3 months ago"),
        ("2023-12-01T12:00:00.000Z", "2 years ago"),
        ("2026-02-01T12:00:00.000Z", "2026-02-01"),
        ("not a date", "not a date"),
    ],
)
def test_relative_dates(created: str, expected: str) -> None:
    assert relative_date(created, NOW) == expected


def test_meta_line_reads_type_pinned_tags_who_project_and_age() -> None:
    hit = RecallHit(tagged(pinned=True, created_at="2026-01-08T11:00:00.000Z"), 0.5, "keyword")
    assert meta_line(hit, NOW) == "fact · pinned · infra, db · alice · billing · 2 days ago"
    bare = RecallHit(memory(None), 0.5, "keyword")
    assert meta_line(bare, NOW) == "fact · 9 days ago"


def test_explanation_rows_list_channels_then_boosts_then_the_total() -> None:
    hit = RecallHit(
        memory(),
        0.93,
        "hybrid",
        {"semantic": ChannelEvidence(0.71, 1, 0.71), "lexical": ChannelEvidence(0.44, 3, -2.0)},
        ContextEvidence(who=0.1, session=0.0, neighbour_id=None),
    )
    assert explanation_rows(hit) == (
        ExplanationRow("vector", "#1", "0.71"),
        ExplanationRow("keyword", "#3", "0.44"),
        ExplanationRow("who", "", "+0.10", "names Caroline"),
        ExplanationRow("session", "", "+0.00"),
        ExplanationRow("score", "", "0.93"),
    )
    lent = RecallHit(memory(None), 0.3, "keyword", {}, ContextEvidence(session=0.12,
                     neighbour_id="0123456789abcdef"))  # fmt: skip
    rows = explanation_rows(lent)
    assert rows[0] == ExplanationRow("no channel evidence", "", "")
    assert rows[2] == ExplanationRow("session", "", "+0.12", "next to 01234567…")


def result(hits: int, completeness: str | None, window: int | None = None) -> RecallResult:
    hit = RecallHit(memory(), 0.5, "keyword")
    return RecallResult("q", "keyword", (hit,) * hits, (), 9.4, completeness, window)


def test_summary_line_counts_times_and_names_incomplete_vectors() -> None:
    assert summary_line(result(12, "complete")) == "12 results · 9 ms"
    assert summary_line(result(1, None)) == "1 result · 9 ms"
    assert summary_line(result(3, "partial")) == "3 results · 9 ms · vectors partial"
    assert summary_line(result(2, "unavailable")) == "2 results · 9 ms · vectors unavailable"
    assert summary_line(result(2, "recent-window", 10000)) == (
        "2 results · 9 ms · vectors: newest 10,000 only"
    )


def test_preview_and_no_match_text() -> None:
    assert preview("a  b\n\tc") == "a b c"
    assert preview("word " * 50, 12) == "word word w…"
    assert no_match_text("  zxqv   wibble ") == (
        "No match for 'zxqv wibble' — try fewer or other words."
    )
