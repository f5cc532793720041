"""Harness sessions and their transcripts: names, turns and the rows that index them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from signet_desktop.domain.errors import InvalidInput

# Harness names as a person and Signet's clients write them -> the one name we store.
HARNESS_ALIASES = {
    "claude-code": "claude-code",
    "claude_code": "claude-code",
    "claudecode": "claude-code",
    "claude": "claude-code",
    "codex": "codex",
    "codex-cli": "codex",
    "opencode": "opencode",
    "open-code": "opencode",
}
KNOWN_HARNESSES = ("claude-code", "codex", "opencode")
RUNTIME_PATHS = ("plugin", "legacy")
_OTHER_HARNESS = re.compile(r"[a-z][a-z0-9-]{0,31}")


def normalize_harness(name: object) -> str:
    """`claude-code`, `codex`, `opencode`, or another harness's own lower-case name.

    Unknown but well-formed names are kept (any MCP client or plugin may announce itself);
    anything that could not be a directory name is refused.
    """
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput(
            "harness is required (e.g. claude-code, codex, opencode)", code="harness_invalid"
        )
    key = name.strip().lower().replace(" ", "-")
    if key in HARNESS_ALIASES:
        return HARNESS_ALIASES[key]
    if not _OTHER_HARNESS.fullmatch(key):
        raise InvalidInput(
            f"harness {name!r} is not a valid harness name (letters, digits and -, up to 32)",
            code="harness_invalid",
        )
    return key


def check_runtime_path(value: object) -> str | None:
    if value is None or value == "":
        return None
    if value not in RUNTIME_PATHS:
        raise InvalidInput("runtimePath must be plugin or legacy", code="runtime_path_invalid")
    return str(value)


@dataclass(frozen=True, slots=True)
class Turn:
    """One conversation turn kept as evidence: who spoke and the text (no tool traces)."""

    turn_id: str  # stable across re-reads of an append-only transcript
    role: str  # user | assistant
    text: str
    timestamp: str | None = None


@dataclass(frozen=True, slots=True)
class TranscriptHit:
    """A transcript matching a search, with a highlighted excerpt (`[` `]` around matches)."""

    session_key: str
    project: str | None
    updated_at: str
    excerpt: str
    rank: float


@dataclass(frozen=True, slots=True)
class HookSession:
    """A session a harness announced through the hooks."""

    agent_id: str
    session_key: str
    harness: str
    project: str | None
    runtime_path: str | None
    context_epoch: int
    bypassed: bool
    started_at: str
    last_seen_at: str
    ended_at: str | None


@dataclass(frozen=True, slots=True)
class SessionTranscript:
    """A retained transcript's index row (content is the user/assistant text)."""

    agent_id: str
    session_key: str
    harness: str | None
    project: str | None
    content: str
    turn_count: int
    created_at: str
    updated_at: str
    completed_at: str | None
    content_hash: str | None
    source_id: str | None = None
    # Read by listings only (None elsewhere): the first user turn's text (its first
    # FIRST_PROMPT_CHARS characters) and the first turn's own timestamp, when it has one.
    first_prompt: str | None = None
    started_at: str | None = None

    @property
    def status(self) -> str:
        if self.source_id is not None:
            return "imported"
        return "completed" if self.completed_at else "open"
