"""Rendering daemon answers for people (compact lines and tables) or for scripts (--json).

Functions here take decoded JSON and return lines; they never print and never call the daemon,
so they are tested directly. They tolerate missing fields: an older or newer daemon must not
make the CLI crash, only show less.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

SNIPPET_CHARS = 72
CELL_CHARS = 48

MEMORY_FIELDS = (
    "id", "type", "pinned", "importance", "tags", "who", "project", "agent_id", "visibility",
    "memory_kind", "source_type", "source_id", "version", "created_at", "updated_at",
    "updated_by", "is_deleted", "deleted_at", "access_count", "embedding_model",
)  # fmt: skip


def to_json_text(data: Any) -> str:
    """Pretty JSON, non-ASCII kept readable."""
    return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False)


def one_line(text: str, width: int = SNIPPET_CHARS) -> str:
    """First non-blank line of `text`, whitespace collapsed, cut to `width` with an ellipsis."""
    first = next((line for line in str(text).splitlines() if line.strip()), "")
    collapsed = " ".join(first.split())
    more = len(collapsed) > width or len(str(text).strip().splitlines()) > 1
    if len(collapsed) > width:
        collapsed = collapsed[: width - 1].rstrip()
    return collapsed + "…" if more else collapsed


def date_part(timestamp: Any) -> str:
    """`2025-11-29T20:19:00.000Z` -> `2025-11-29`; anything else as given or `-`."""
    if not isinstance(timestamp, str) or not timestamp:
        return "-"
    return timestamp[:10]


def _cell(value: Any) -> str:
    if value is None or value == "":
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "-"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    """A left-aligned plain-text table; cells are one line, cut to CELL_CHARS."""
    cells = [[one_line(_cell(value), CELL_CHARS) for value in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    lines = ["  ".join(h.upper().ljust(w) for h, w in zip(headers, widths, strict=True))]
    for row in cells:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
    return [line.rstrip() for line in lines]


def listing(
    items: Sequence[Any], headers: Sequence[str], row: Callable[[Any], Sequence[Any]], empty: str
) -> list[str]:
    """A table with `row(item)` for each item, or the one line `empty` when there are none."""
    if not items:
        return [empty]
    return table(headers, (row(item) for item in items))


def remember_lines(answer: Mapping[str, Any]) -> list[str]:
    """`Saved <id>` or `Already stored <id> (deduped)`, plus a note when not embedded."""
    memory_id = answer.get("id", "?")
    if answer.get("deduped"):
        return [f"Already stored {memory_id} (deduped)"]
    lines = [f"Saved {memory_id}"]
    extras = []
    if answer.get("pinned"):
        extras.append("pinned")
    if answer.get("tags"):
        extras.append("tags: " + _cell(answer["tags"]))
    if extras:
        lines[0] += f" ({'; '.join(extras)})"
    note = _VECTOR_NOTES.get(str(answer.get("vectorStatus")))
    if note is None and answer.get("embedded") is False:  # a daemon without vectorStatus
        note = _VECTOR_NOTES["queued"]
    if note is not None:
        lines.append(f"  {note}")
    return lines


# What `embedded: false` means, by the daemon's `vectorStatus` (stored and existing need none).
_VECTOR_NOTES = {
    "pending": "vector follows in a moment: keyword recall finds it now",
    "queued": "not embedded yet (embedder unavailable): keyword recall finds it now, "
    "vector recall once the backfill runs",
    "none": "no embedder configured: keyword recall only",
}


def recall_lines(answer: Mapping[str, Any]) -> list[str]:
    """A ranked list: rank, score, type, date, first line of content, id; then a footer.

    A weak hit (it failed the relevance test) shows `?` after its score."""
    results = answer.get("results") or []
    if not results:
        return ["No memories matched."]
    lines = []
    for rank, hit in enumerate(results, start=1):
        score = hit.get("score")
        score_text = f"{score:.2f}" if isinstance(score, int | float) else "  - "
        if hit.get("kind") == "transcript":
            lines.extend(turn_hit_lines(rank, score_text, hit))
            continue
        weak = "?" if hit.get("weak") else " "
        pin = "*" if hit.get("pinned") else " "
        lines.append(
            f"{rank:>2}. {score_text}{weak}{pin}{_cell(hit.get('type')):<10} "
            f"{date_part(hit.get('created_at'))}  {one_line(hit.get('content', ''))}  "
            f"[{hit.get('id', '?')}]"
        )
    lines.extend(_excerpt_lines(answer.get("supplementary") or [], results))
    lines.append(_recall_footer(answer, len(results)))
    return lines


def turn_hit_lines(rank: int, score_text: str, hit: Mapping[str, Any]) -> list[str]:
    """A transcript hit: who said it, in which session and turn, when; then `--expand`'s
    neighbouring turns, indented."""
    facts = hit.get("transcript") or {}
    turn = facts.get("turnIndex")
    where = f"turn {int(turn) + 1} of {facts.get('turnCount', '?')}" if turn is not None else ""
    lines = [
        f"{rank:>2}. {score_text}  {'said':<10} {date_part(hit.get('created_at'))}  "
        f"{facts.get('role', '?')}: {one_line(hit.get('content', ''))}  "
        f"[session {facts.get('sessionKey', '?')}, {where}]"
    ]
    reply = facts.get("reply")
    if isinstance(reply, Mapping):
        lines.append(f"      → {reply.get('role', '?')}: {one_line(reply.get('text', ''))}")
    for item in facts.get("context") or []:
        if isinstance(item, Mapping):
            marker = ">" if item.get("turnIndex") == turn else " "
            lines.append(
                f"      {marker} {item.get('role', '?')}: {one_line(item.get('text', ''))}"
            )
    return lines


def _excerpt_lines(excerpts: list[Any], results: list[Any]) -> list[str]:
    """`--expand`: each excerpt under a header naming its result's rank and session."""
    ranks = {hit.get("id"): rank for rank, hit in enumerate(results, start=1)}
    lines: list[str] = []
    for item in excerpts:
        if not isinstance(item, Mapping):
            continue
        rank = ranks.get(item.get("memoryId"), "?")
        where = f"turn {int(item.get('turnIndex', 0)) + 1} of {item.get('turnCount', '?')}"
        lines.append("")
        lines.append(f"  #{rank} in session {item.get('sessionKey', '?')} ({where}):")
        lines.extend(f"    {line}" for line in str(item.get("excerpt", "")).splitlines())
    return lines


def _recall_footer(answer: Mapping[str, Any], count: int) -> str:
    parts = [f"{count} result{'s' if count != 1 else ''}"]
    weak = sum(1 for hit in answer.get("results") or [] if hit.get("weak"))
    if weak:
        parts.append(f"{weak} weak (?: not shown to be relevant)")
    if answer.get("method"):
        parts.append(str(answer["method"]))
    timings = (answer.get("meta") or {}).get("timings") or {}
    if isinstance(timings.get("totalMs"), int | float):
        parts.append(f"{timings['totalMs']:.0f} ms")
    completeness = answer.get("vectorCompleteness")
    if completeness and completeness != "complete":
        window = answer.get("searchedWindow")
        note = f"vector search: {completeness}"
        if window:
            note += f" (newest {window} memories)"
        parts.append(note)
    return "-- " + " · ".join(parts)


def memory_lines(memory: Mapping[str, Any]) -> list[str]:
    """Every known field as `name: value`, then the full content."""
    width = max(len(name) for name in MEMORY_FIELDS)
    lines = [f"{name:<{width}}  {_cell(memory.get(name))}" for name in MEMORY_FIELDS]
    lines.extend(["", str(memory.get("content", ""))])
    return lines


def history_lines(answer: Mapping[str, Any]) -> list[str]:
    """A table of lifecycle events, oldest first as the daemon returns them."""
    headers = ("when", "event", "by", "reason", "change")
    return listing(answer.get("history") or [], headers, _event_row, "No history for this memory.")


def _event_row(event: Mapping[str, Any]) -> tuple[Any, ...]:
    return (
        event.get("created_at"),
        event.get("event"),
        event.get("changed_by"),
        event.get("reason"),
        _change_summary(event),
    )


def _change_summary(event: Mapping[str, Any]) -> str:
    old, new = event.get("old_content"), event.get("new_content")
    if old and new and old != new:
        return f"{one_line(old, 20)} -> {one_line(new, 20)}"
    return one_line(new or old or "", 40) or "-"


def memory_page_lines(answer: Mapping[str, Any]) -> list[str]:
    """`memory list`: a table of memories and the scope's counts."""
    memories = answer.get("memories") or []
    stats = answer.get("stats") or {}
    footer = f"-- {stats.get('total', len(memories))} memories in this agent scope"
    headers = ("id", "type", "created", "pin", "content")
    return [*listing(memories, headers, _memory_row, "No memories stored."), footer]


def _memory_row(memory: Mapping[str, Any]) -> tuple[Any, ...]:
    return (
        memory.get("id"),
        memory.get("type"),
        date_part(memory.get("created_at")),
        "*" if memory.get("pinned") else "",
        one_line(memory.get("content", ""), CELL_CHARS),
    )


def duration_text(seconds: Any) -> str:
    """`3725` -> `1h 2m 5s`; non-numbers -> `-`."""
    if not isinstance(seconds, int | float) or seconds < 0:
        return "-"
    total = int(seconds)
    days, rest = divmod(total, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{days}d"] if days else []
    if days or hours:
        parts.append(f"{hours}h")
    if days or hours or minutes:
        parts.append(f"{minutes}m")
    parts.append(f"{secs}s")
    return " ".join(parts)
