"""How a session reads in the Transcripts pane: list rows, the turn HTML and search excerpts.

Plain functions of domain values (no Qt): the pane calls them on its worker thread, so a
2,000-turn session is laid out as HTML off the GUI thread and the view only sets it.
Colours come in as a `Theme`, so light and dark read alike.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from signet_desktop.domain.memory import parse_utc
from signet_desktop.domain.sessions import SessionTranscript, Turn
from signet_desktop.ui.memory_format import local_time
from signet_desktop.ui.style import Theme

ROLE_NAMES = {"user": "User", "assistant": "Assistant"}
STATUS_LABELS = {"open": "open", "completed": "completed", "imported": "imported"}
_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_MARK = re.compile(r"\[([^\[\]\n]*)\]")


TITLE_CHARS = 160  # a row's title: the delegate elides it to the row's width
VIEW_TITLE_CHARS = 200  # the open session's heading (it wraps)


@dataclass(frozen=True, slots=True)
class SessionRow:
    """What one row of the sessions list shows, computed when its page arrives."""

    session_key: str
    title: str  # the first user prompt on one line; else the project; else "no project"
    when: str  # the session's own start: "today 10:02", "2 Nov", "2 Nov 2025"
    meta: str  # "~/src/billing · claude-code · 42 turns" (the project when it is not the title)
    status: str  # open | completed | imported
    tooltip: str


def session_rows(
    sessions: Sequence[SessionTranscript], now: datetime | None = None
) -> list[SessionRow]:
    return [session_row(session, now) for session in sessions]


def session_row(session: SessionTranscript, now: datetime | None = None) -> SessionRow:
    """Titled by what the person first asked, dated by the session's own first turn (an
    import captures months of sessions in a minute: its capture time says nothing)."""
    turns = f"{session.turn_count:,} {'turn' if session.turn_count == 1 else 'turns'}"
    harness = session.harness or "unknown harness"
    prompt = one_line(session.first_prompt or "", TITLE_CHARS)
    started = session.started_at or session.created_at
    tooltip = "\n".join(
        part
        for part in (
            one_line(session.first_prompt or "", 400),
            f"project {session.project}" if session.project else "",
            f"session {session.session_key}",
            f"started {local_time(started)}",
            f"captured {local_time(session.updated_at)}",
            f"completed {local_time(session.completed_at)}" if session.completed_at else "open",
        )
        if part
    )
    place = session.project if prompt else None
    return SessionRow(
        session_key=session.session_key,
        title=prompt or session.project or "no project",
        when=session_date(started, now),
        meta=" · ".join(part for part in (place, harness, turns) if part),
        status=session.status,
        tooltip=tooltip,
    )


def view_title(session: SessionTranscript, turns: Sequence[Turn]) -> tuple[str, str]:
    """The open session's title (its first user prompt, as the list row says; else the
    project) and the project line above its facts ("" when the project is the title)."""
    prompt = one_line(next((t.text for t in turns if t.role == "user"), ""), VIEW_TITLE_CHARS)
    if not prompt:
        return session.project or "no project", ""
    return prompt, f"{session.project}\n" if session.project else ""


def one_line(text: str, limit: int) -> str:
    """`text` with its whitespace runs as single spaces, cut to `limit` characters with …"""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def session_date(timestamp: str, now: datetime | None = None) -> str:
    """A start in local time: `today 10:02`, `yesterday 18:40`, `2 Nov`, `2 Nov 2025`; the
    text itself when unreadable."""
    when = parse_utc(timestamp)
    if when is None:
        return timestamp
    local = when.astimezone()
    today = (now or datetime.now(UTC)).astimezone().date()
    clock = local.strftime("%H:%M")
    if local.date() == today:
        return f"today {clock}"
    if (today - local.date()).days == 1:
        return f"yesterday {clock}"
    day = f"{local.day} {local.strftime('%b')}"
    return day if local.year == today.year else f"{day} {local.year}"


def header_line(session: SessionTranscript, turns: Sequence[Turn] = ()) -> str:
    """`claude-code · completed · 42 turns · 2026-11-28 10:02 → 11:40 · captured …` (the
    project is the view's title). The span is the turns' own times when they carry them; the
    row's times are when Signet captured the session (an import captures late)."""
    parts = [session.harness or "unknown harness"]
    parts.append(STATUS_LABELS.get(session.status, session.status))
    parts.append(f"{session.turn_count:,} {'turn' if session.turn_count == 1 else 'turns'}")
    stamps = [local_time(t.timestamp) for t in turns if t.timestamp]
    if stamps:
        first, last = stamps[0], stamps[-1]
        same_day = first[:10] == last[:10]
        parts.append(first if first == last else f"{first} → {last[11:] if same_day else last}")
        parts.append(f"captured {local_time(session.updated_at)}")
    else:
        parts.append(f"started {local_time(session.created_at)}")
        if session.completed_at:
            parts.append(f"ended {local_time(session.completed_at)}")
        else:
            parts.append(f"last turn {local_time(session.updated_at)}")
    return " · ".join(parts)


def hits_text(shown: int, query: str, total: int) -> str:
    """The search's summary: how many sessions match, and how many of them are shown."""
    if not total:
        return f"No session mentions “{query}”"
    if shown < total:
        return f"Showing the best {shown:,} of {total:,} sessions that match “{query}”"
    return f"{total:,} {'session matches' if total == 1 else 'sessions match'} “{query}”"


def count_text(total: int, filtered: bool) -> str:
    if filtered:
        return f"{total:,} match" if total else "No session matches these filters"
    return f"{total:,} {'session' if total == 1 else 'sessions'}"


# -- the transcript as HTML --------------------------------------------------------------


def transcript_html(turns: Sequence[Turn], theme: Theme) -> str:
    """Every turn in order: a role label and time above the text, user turns tinted."""
    if not turns:
        return (
            f'<p style="color:{theme.muted}">No turns retained for this session yet — they '
            "appear as the harness reports them.</p>"
        )
    return "".join(turn_html(number, turn, theme) for number, turn in enumerate(turns, 1))


def turn_anchor(index: int) -> str:
    """The HTML anchor of the turn at 0-based `index` (what `reveal(turn=…)` scrolls to)."""
    return f"turn-{index}"


def turn_html(number: int, turn: Turn, theme: Theme) -> str:
    user = turn.role == "user"
    name = ROLE_NAMES.get(turn.role, turn.role.capitalize() or "Turn")
    colour = theme.accent if user else theme.ok
    background = theme.selection if user else theme.surface
    when = local_time(turn.timestamp) if turn.timestamp else ""
    stamp = f"&nbsp;&nbsp;<span style='color:{theme.muted}'>{html.escape(when)}</span>"
    return (
        f'<a name="{turn_anchor(number - 1)}"></a>'
        f'<table width="100%" cellspacing="0" cellpadding="10" '
        f'style="margin-bottom:8px; background-color:{background}; '
        f'border-left: 3px solid {colour}"><tr><td>'
        f'<p style="margin:0 0 4px 0"><span style="color:{colour}; font-weight:600">'
        f"{html.escape(name)}</span>{stamp if when else ''}"
        f"<span style='color:{theme.muted}'>&nbsp;&nbsp;#{number}</span></p>"
        f"{body_html(turn.text, theme)}</td></tr></table>"
    )


def body_html(text: str, theme: Theme) -> str:
    """Paragraphs for prose, `<pre>` for fenced code; everything escaped."""
    parts: list[str] = []
    last = 0
    for fence in _FENCE.finditer(text):
        parts.append(_prose(text[last : fence.start()]))
        code = html.escape(fence.group(1).rstrip("\n"))
        parts.append(
            f'<pre style="margin:6px 0; background-color:{theme.window}; '
            f'font-family:monospace">{code}</pre>'
        )
        last = fence.end()
    parts.append(_prose(text[last:]))
    return "".join(parts)


def _prose(text: str) -> str:
    blocks = [block.strip("\n") for block in re.split(r"\n\s*\n", text)]
    return "".join(
        '<p style="margin:0 0 6px 0">' + html.escape(block).replace("\n", "<br>") + "</p>"
        for block in blocks
        if block.strip()
    )


# -- global search -----------------------------------------------------------------------


def highlight_colour(theme: Theme) -> str:
    """A match's background: the warning colour over the surface, strong enough in dark."""
    return blend(theme.warn, theme.surface, 0.35)


def blend(top: str, bottom: str, alpha: float) -> str:
    """`#rrggbb` of `top` at `alpha` over `bottom`."""
    a, b = (tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)) for c in (top, bottom))
    return "#" + "".join(
        f"{round(x * alpha + y * (1 - alpha)):02x}" for x, y in zip(a, b, strict=True)
    )


def excerpt_html(excerpt: str, theme: Theme) -> str:
    """A search excerpt with its `[match]` marks as highlighted, escaped text."""
    escaped = html.escape(" ".join(excerpt.split()), quote=False)
    return _MARK.sub(
        lambda m: (
            f'<span style="background-color:{highlight_colour(theme)}; color:{theme.text}; '
            f'font-weight:600">{m.group(1)}</span>'
        ),
        escaped,
    )
