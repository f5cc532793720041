"""Human renderings of daemon answers."""

from __future__ import annotations

import pytest

from signet_desktop.cli import output


def test_one_line_takes_first_line_and_cuts() -> None:
    assert output.one_line("  hello   world  ") == "hello world"
    assert output.one_line("\n\nfirst\nsecond") == "first…"
    long = output.one_line("x" * 200, 10)
    assert long == "x" * 9 + "…" and len(long) == 10


def test_recall_lines_rank_score_type_date_snippet_id() -> None:
    answer = {
        "results": [
            {"id": "m1", "score": 0.8712, "type": "fact", "pinned": True,
             "created_at": "2025-11-29T20:19:00.000Z", "content": "We use Postgres\nmore"},
            {"id": "m2", "score": 0.3, "type": "decision", "created_at": None, "content": "B"},
        ],
        "method": "hybrid",
        "meta": {"timings": {"totalMs": 12.4}},
        "vectorCompleteness": "recent-window",
        "searchedWindow": 10000,
    }  # fmt: skip
    lines = output.recall_lines(answer)
    assert lines[0] == " 1. 0.87 *fact       2025-11-29  We use Postgres…  [m1]"
    assert lines[1] == " 2. 0.30  decision   -  B  [m2]"
    assert lines[2] == (
        "-- 2 results · hybrid · 12 ms · vector search: recent-window (newest 10000 memories)"
    )


def test_recall_lines_mark_weak_hits_and_count_them() -> None:
    answer = {
        "results": [
            {"id": "m1", "score": 0.41, "weak": False, "type": "fact", "content": "A"},
            {"id": "m2", "score": 0.03, "weak": True, "type": "fact", "pinned": True,
             "content": "B"},
        ],
        "method": "hybrid",
    }  # fmt: skip
    lines = output.recall_lines(answer)
    assert lines[0] == " 1. 0.41  fact       -  A  [m1]"
    assert lines[1] == " 2. 0.03?*fact       -  B  [m2]"
    assert lines[2] == "-- 2 results · 1 weak (?: not shown to be relevant) · hybrid"


def test_recall_lines_empty_and_missing_results() -> None:
    assert output.recall_lines({"results": []}) == ["No memories matched."]
    assert output.recall_lines({}) == ["No memories matched."]


def test_remember_lines() -> None:
    assert output.remember_lines({"id": "a", "deduped": True}) == ["Already stored a (deduped)"]
    lines = output.remember_lines(
        {"id": "a", "pinned": True, "tags": ["x", "y"], "embedded": False}
    )
    assert lines[0] == "Saved a (pinned; tags: x, y)"
    assert "not embedded yet" in lines[1]  # an older daemon without vectorStatus


@pytest.mark.parametrize(
    ("status", "note"),
    [
        ("pending", "vector follows in a moment"),
        ("queued", "once the backfill runs"),
        ("none", "keyword recall only"),
        ("stored", None),
        ("existing", None),
    ],
)
def test_remember_says_what_not_embedded_means(status: str, note: str | None) -> None:
    embedded = status in ("stored", "existing")
    lines = output.remember_lines({"id": "a", "embedded": embedded, "vectorStatus": status})
    if note is None:
        assert lines == ["Saved a"]
    else:
        assert len(lines) == 2 and note in lines[1]


def test_memory_lines_show_fields_then_content() -> None:
    lines = output.memory_lines(
        {"id": "m1", "type": "fact", "pinned": False, "tags": [], "importance": 0.5,
         "content": "full text\nsecond line"}
    )  # fmt: skip
    assert lines[0].split() == ["id", "m1"]
    assert any(line.split() == ["pinned", "no"] for line in lines)
    assert any(line.split() == ["tags", "-"] for line in lines)
    assert lines[-1] == "full text\nsecond line"


def test_history_table() -> None:
    lines = output.history_lines(
        {"history": [
            {"created_at": "t1", "event": "created", "changed_by": "user", "new_content": "a"},
            {"created_at": "t2", "event": "modified", "changed_by": "agent", "reason": "fix",
             "old_content": "a", "new_content": "b"},
        ]}
    )  # fmt: skip
    assert lines[0].split() == ["WHEN", "EVENT", "BY", "REASON", "CHANGE"]
    assert lines[1].split() == ["t1", "created", "user", "-", "a"]
    assert lines[2].split() == ["t2", "modified", "agent", "fix", "a", "->", "b"]
    assert output.history_lines({"history": []}) == ["No history for this memory."]


def test_memory_page_lines() -> None:
    lines = output.memory_page_lines(
        {"memories": [{"id": "m1", "type": "fact", "created_at": "2025-01-02T00:00:00Z",
                       "content": "hello", "pinned": True}],
         "stats": {"total": 1}}
    )  # fmt: skip
    assert lines[1].split() == ["m1", "fact", "2025-01-02", "*", "hello"]
    assert lines[-1] == "-- 1 memories in this agent scope"
    assert output.memory_page_lines({"memories": [], "stats": {"total": 0}})[0] == (
        "No memories stored."
    )


def test_duration_text() -> None:
    assert output.duration_text(5) == "5s"
    assert output.duration_text(65.9) == "1m 5s"
    assert output.duration_text(90061) == "1d 1h 1m 1s"
    assert output.duration_text(None) == "-"
    assert output.duration_text(-1) == "-"
