"""What reading a harness transcript yields: its turns, and every message kept out, by reason.

A harness writes more than conversation into its transcript: instructions it injects, command
wrappers, notices, copies of the same message in two record kinds. Those stay in the staged
evidence but are not turns. Every record with message text is either a turn or counted under
a reason, so a reader can show that nothing was dropped silently.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field

from signet_desktop.domain.sessions import Turn


@dataclass(frozen=True, slots=True)
class IndexedTurn:
    """A turn and the index of the record (line) it came from."""

    index: int
    turn: Turn


@dataclass(frozen=True, slots=True)
class TurnRead:
    """The turns of one transcript and the message records kept out, counted by reason."""

    turns: list[IndexedTurn]
    kept_out: Counter[str] = field(default_factory=Counter)

    @property
    def messages(self) -> int:
        """Records with message text seen: turns plus those kept out."""
        return len(self.turns) + sum(self.kept_out.values())


def text_of(content: object, kinds: tuple[str, ...]) -> str:
    """The text of a message's content: a string, or its blocks of `kinds` joined."""
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    parts = [
        str(block.get("text", "")).strip()
        for block in content
        if isinstance(block, dict) and block.get("type") in kinds
    ]
    return "\n\n".join(part for part in parts if part)


def turn_id(index: int, role: str, text: str) -> str:
    """A stable id for a turn whose record has none of its own."""
    digest = hashlib.sha256(f"{index}\x00{role}\x00{text}".encode()).hexdigest()
    return digest[:24]


def str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None
