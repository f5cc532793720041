"""Transcript excerpts for `expand: true`: the turns around where a recalled memory was said.

Pure text work over a session's retained content (`User: …` / `Assistant: …` paragraphs, as
service/transcripts/service.py renders it). The matching turn is the one sharing the most words with
the memory (ties: the earliest); the excerpt is that turn with one turn either side, cut to a
hard character budget around the match. Text that is not in turn form is treated as one turn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

EXCERPT_MAX_CHARS = 1_200  # one excerpt
EXPAND_MAX_CHARS = 6_000  # every excerpt of one response together
EXPAND_MAX_SESSIONS = 10  # sessions looked up for one response
CONTEXT_TURNS = 1  # turns kept on each side of the matching one
_ELLIPSIS = "…"
_TURN_START = re.compile(r"\n\n(?=(?:User|Assistant|System|Tool): )")
_WORD = re.compile(r"\w{3,}", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Excerpt:
    """Where in the session the excerpt sits and its text (at most `max_chars`)."""

    turn_index: int  # 0-based index of the matching turn
    turn_count: int
    text: str


def split_turns(content: str) -> list[str]:
    """The session's turns, in order (empty content: no turns)."""
    if not content.strip():
        return []
    return [part for part in _TURN_START.split(content) if part.strip()]


def _words(text: str) -> set[str]:
    return {word.lower() for word in _WORD.findall(text)}


def matching_turn(turns: list[str], memory_text: str) -> int:
    """Index of the turn sharing the most words with the memory (0 when none shares any)."""
    wanted = _words(memory_text)
    best, best_overlap = 0, 0
    for index, turn in enumerate(turns):
        overlap = len(wanted & _words(turn))
        if overlap > best_overlap:
            best, best_overlap = index, overlap
    return best


def excerpt(content: str, memory_text: str, max_chars: int = EXCERPT_MAX_CHARS) -> Excerpt | None:
    """The turns around the memory's match, bounded to `max_chars` (None for no turns)."""
    turns = split_turns(content)
    if not turns or max_chars <= 0:
        return None
    index = matching_turn(turns, memory_text)
    low, high = max(0, index - CONTEXT_TURNS), min(len(turns), index + CONTEXT_TURNS + 1)
    before = "\n\n".join(turns[low:index])
    focus = turns[index]
    after = "\n\n".join(turns[index + 1 : high])
    return Excerpt(index, len(turns), _fit(before, focus, after, max_chars))


def _fit(before: str, focus: str, after: str, max_chars: int) -> str:
    """The focus turn whole when it fits, neighbours trimmed from their far ends first."""
    if len(focus) >= max_chars:
        return focus[: max_chars - 1] + _ELLIPSIS
    room = max_chars - len(focus)
    parts = [focus]
    if before:
        share = room // 2 if after else room
        keep = _tail(before, share - 2)
        if keep:
            parts.insert(0, keep)
            room -= len(keep) + 2
    if after:
        keep = _head(after, room - 2)
        if keep:
            parts.append(keep)
    return "\n\n".join(parts)


def _tail(text: str, room: int) -> str:
    if room <= len(_ELLIPSIS):
        return ""
    return text if len(text) <= room else _ELLIPSIS + text[len(text) - room + 1 :]


def _head(text: str, room: int) -> str:
    if room <= len(_ELLIPSIS):
        return ""
    return text if len(text) <= room else text[: room - 1] + _ELLIPSIS
