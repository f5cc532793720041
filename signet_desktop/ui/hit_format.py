"""How a recall hit reads in the inspector: preview, meta line, badges, why it ranked (no Qt here).

Everything the Recall pane shows as text is computed here from domain values, so it is tested
without widgets (`tests/ui/test_explain_hit.py`); the pane and its delegate only lay it out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from signet_desktop.domain.memory import parse_utc
from signet_desktop.domain.recall import RecallHit, RecallResult, TurnHit, channel_label

_PREVIEW_CHARS = 160
CONTEXT_BADGE = "context"  # the badge of a hit the context signals (who, session) lifted
EMPTY_PROMPT = (
    "Ask in your own words — “which database does billing use?” — or type a few keywords. "
    "Enter runs the search; filters narrow it by type, tags, who, project, time or pinned."
)


def preview(content: str, chars: int = _PREVIEW_CHARS) -> str:
    """The content on one line (whitespace collapsed), cut at `chars` with an ellipsis."""
    text = " ".join(content.split())
    if len(text) > chars:
        text = text[: chars - 1].rstrip() + "…"
    return text


def format_hit(hit: RecallHit) -> str:
    """One result line: score, type, tags and a one-line preview of the content."""
    memory = hit.memory
    tags = f" [{', '.join(memory.tags)}]" if memory.tags else ""
    return f"{hit.score:.2f}  {memory.type}{tags}  {preview(memory.content)}"


def explain_hit(hit: RecallHit) -> str:
    """Why a hit ranked where it did: each channel's rank and score, and any context boost."""
    parts = [
        f"{channel_label(name)} #{evidence.rank} ({evidence.score:.2f})"
        for name, evidence in hit.channels.items()
    ]
    context = hit.context
    if context is not None and context.who:
        parts.append(f"names {hit.memory.who} +{context.who:.2f}")
    if context is not None and context.session:
        parts.append(f"session neighbour +{context.session:.2f}")
    return f"score {hit.score:.2f}: " + " · ".join(parts or ["no channel evidence"])


def badges(hit: RecallHit) -> tuple[str, ...]:
    """Channel badges in channel order (keyword, vector, any newer channel by its own name),
    then `context` when a context signal added to the score."""
    labels = [channel_label(name) for name in hit.channels]
    context = hit.context
    if context is not None and (context.who > 0 or context.session > 0):
        labels.append(CONTEXT_BADGE)
    return tuple(labels)


def relative_date(timestamp: str, now: datetime | None = None) -> str:
    """`just now`, `5 minutes ago`, `yesterday`, `3 weeks ago`…; the date itself if unreadable
    or in the future."""
    when = parse_utc(timestamp)
    if when is None:
        return timestamp
    seconds = ((now or datetime.now(UTC)) - when).total_seconds()
    if seconds < -60:
        return when.date().isoformat()
    if seconds < 60:
        return "just now"
    days = seconds / 86400
    if days < 1:
        hours = int(seconds // 3600)
        return _ago(hours, "hour") if hours else _ago(int(seconds // 60), "minute")
    if days < 2:
        return "yesterday"
    for limit, size, unit in ((14, 1, "day"), (60, 7, "week"), (730, 30.44, "month")):
        if days < limit:
            return _ago(int(days // size), unit)
    return _ago(int(days // 365.25), "year")


def _ago(count: int, unit: str) -> str:
    return f"{count} {unit}{'' if count == 1 else 's'} ago"


def meta_line(hit: RecallHit, now: datetime | None = None) -> str:
    """`fact · pinned · infra, db · alice · 2 days ago` (absent parts left out)."""
    memory = hit.memory
    parts = [memory.type]
    if memory.pinned:
        parts.append("pinned")
    if memory.tags:
        parts.append(", ".join(memory.tags))
    if memory.who:
        parts.append(memory.who)
    if memory.project:
        parts.append(memory.project)
    parts.append(relative_date(memory.created_at, now))
    return " · ".join(parts)


@dataclass(frozen=True, slots=True)
class ExplanationRow:
    """One line of "Why this ranked": what, its rank (channels only), its score or boost."""

    label: str
    rank: str
    value: str
    note: str = ""


def explanation_rows(hit: RecallHit) -> tuple[ExplanationRow, ...]:
    """Each channel's rank and calibrated score, then the who and session boosts, then the total."""
    rows = [
        ExplanationRow(channel_label(name), f"#{evidence.rank}", f"{evidence.score:.2f}")
        for name, evidence in hit.channels.items()
    ]
    if not rows:
        rows.append(ExplanationRow("no channel evidence", "", ""))
    context = hit.context
    who = context.who if context is not None else 0.0
    session = context.session if context is not None else 0.0
    who_note = f"names {hit.memory.who}" if who > 0 and hit.memory.who else ""
    neighbour = context.neighbour_id if context is not None else None
    session_note = f"next to {neighbour[:8]}…" if session > 0 and neighbour else ""
    rows.append(ExplanationRow("who", "", f"+{who:.2f}", who_note))
    rows.append(ExplanationRow("session", "", f"+{session:.2f}", session_note))
    rows.append(ExplanationRow("score", "", f"{hit.score:.2f}"))
    return tuple(rows)


def turn_meta_line(turn: TurnHit, now: datetime | None = None) -> str:
    """`said by assistant · session 5f2c… · turn 3 of 12 · /src/shop · 2 days ago`."""
    parts = [f"said by {turn.role}", f"session {turn.session_key}"]
    parts.append(f"turn {turn.turn_index + 1} of {turn.turn_count}")
    if turn.project:
        parts.append(turn.project)
    if turn.timestamp:
        parts.append(relative_date(turn.timestamp, now))
    return " · ".join(parts)


def turn_text(turn: TurnHit) -> str:
    """What the row shows: the turn, then a question's reply after an arrow."""
    if turn.reply is None:
        return turn.excerpt
    return f"{turn.excerpt} → {turn.reply.role}: {turn.reply.text}"


def explain_turn(turn: TurnHit) -> str:
    """Why a session turn is in the results: its channel rank and score, where it was said."""
    evidence = turn.evidence
    return (
        f"score {turn.score:.2f}: transcript #{evidence.rank} ({evidence.score:.2f}) · "
        f"session {turn.session_key}, turn {turn.turn_index + 1}"
    )


def turn_explanation_rows(turn: TurnHit) -> tuple[ExplanationRow, ...]:
    """The transcript channel's rank and score, then where and when the turn was said."""
    evidence = turn.evidence
    return (
        ExplanationRow("transcript", f"#{evidence.rank}", f"{evidence.score:.2f}"),
        ExplanationRow("session", "", turn.session_key[:12], turn.harness or ""),
        ExplanationRow("turn", "", f"{turn.turn_index + 1}/{turn.turn_count}", turn.role),
        ExplanationRow("said", "", (turn.timestamp or "")[:10]),
        ExplanationRow("score", "", f"{turn.score:.2f}"),
    )


def summary_line(result: RecallResult) -> str:
    """`12 results · 9 ms`, plus the vectors' state when they are not complete."""
    count = len(result.hits) + len(result.turns)
    parts = [f"{count} result{'' if count == 1 else 's'}", f"{result.total_ms:.0f} ms"]
    completeness = result.vector_completeness
    if completeness == "recent-window" and result.searched_window is not None:
        parts.append(f"vectors: newest {result.searched_window:,} only")
    elif completeness not in (None, "complete"):
        parts.append(f"vectors {completeness}")
    return " · ".join(parts)


def no_match_text(query: str) -> str:
    """What the pane says when nothing passes `min_score`."""
    return f"No match for '{' '.join(query.split())}' — try fewer or other words."
