"""A harness's own session history on disk: where it lives, its files, one session per file.

Claude Code keeps `~/.claude/projects/<cwd slug>/<session id>.jsonl` (`CLAUDE_CONFIG_DIR`
moves `~/.claude`); subagent files (`agent-*.jsonl`, `<session>/subagents/`) are sidechains
and not sessions of their own. Codex keeps `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`
(`CODEX_HOME` moves `~/.codex`), whose first line (`session_meta`) names the session.

Turns come from `transcript_formats` (the same turns and turn ids live capture makes, so an
imported session and a captured one agree); each keeps the byte offset of the line it came
from, so the staged copy's exact bytes are one seek away. Lines that do not parse (a torn
last line of a live session, garbage) are counted, never fatal.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from signet_desktop.domain.sessions import Turn
from signet_desktop.evidence.transcript_formats import (
    indexed_claude_code_turns,
    indexed_codex_turns,
    read_jsonl,
)

MAX_META_TEXT = 300


@dataclass(frozen=True, slots=True)
class HistoryTurn:
    """A conversation turn and where its line starts in the (staged) file."""

    turn: Turn
    offset: int


@dataclass(frozen=True, slots=True)
class HistorySession:
    """One harness session read from one file."""

    session_id: str | None
    project: str | None
    turns: list[HistoryTurn]
    started_at: str | None
    meta: dict[str, Any] = field(default_factory=dict)
    lines: int = 0
    skipped_lines: int = 0
    complete_end: int = 0


# -- where the history lives ---------------------------------------------------------------


def claude_code_root() -> Path:
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base) if base else Path.home() / ".claude") / "projects"


def codex_root() -> Path:
    base = os.environ.get("CODEX_HOME")
    return (Path(base) if base else Path.home() / ".codex") / "sessions"


def claude_code_files(root: Path) -> Iterator[str]:
    """Session files under a Claude Code projects root (relative, sorted; no subagents)."""
    for path in sorted(root.rglob("*.jsonl")):
        relative = path.relative_to(root)
        if path.name.startswith("agent-") or "subagents" in relative.parts[:-1]:
            continue
        if path.is_file() and not path.is_symlink():
            yield relative.as_posix()


def codex_files(root: Path) -> Iterator[str]:
    """Rollout files under a Codex sessions root (relative, sorted)."""
    for path in sorted(root.rglob("rollout-*.jsonl")):
        if path.is_file() and not path.is_symlink():
            yield path.relative_to(root).as_posix()


# -- one session per file ------------------------------------------------------------------


def read_claude_code_session(path: Path, relative: str) -> HistorySession:
    """A Claude Code session file: its id is the file name (the harness's session_id)."""
    lines = read_jsonl(path)
    turns = [
        HistoryTurn(turn, lines.offsets[index])
        for index, turn in indexed_claude_code_turns(lines.records)
    ]
    types = Counter(str(r.get("type")) for r in lines.records)
    first = _first(lines.records, "cwd")
    models = sorted(
        {
            str(r["message"]["model"])
            for r in lines.records
            if isinstance(r.get("message"), dict) and r["message"].get("model")
        }
    )[:8]
    ids = Counter(str(r["sessionId"]) for r in lines.records if r.get("sessionId"))
    session_id = Path(relative).stem or (ids.most_common(1)[0][0] if ids else None)
    meta = {
        "harness": "claude-code",
        "cwd": _short(first),
        "gitBranch": _short(_first(lines.records, "gitBranch")),
        "version": _short(_first(lines.records, "version")),
        "models": models,
        "lineTypes": dict(types.most_common(12)),
        "sidechainLines": sum(1 for r in lines.records if r.get("isSidechain")),
        "summary": _short(
            next((r.get("summary") for r in lines.records if r.get("type") == "summary"), None)
        ),
        "otherSessionIds": sorted(k for k in ids if k != session_id)[:8],
    }
    return HistorySession(
        session_id=session_id,
        project=first if isinstance(first, str) else None,
        turns=turns,
        started_at=_first(lines.records, "timestamp"),
        meta=meta,
        lines=len(lines.records),
        skipped_lines=lines.skipped,
        complete_end=lines.complete_end,
    )


def read_codex_session(path: Path, relative: str) -> HistorySession:
    """A Codex rollout: its id is `session_meta.payload.id` (else the file name's uuid)."""
    lines = read_jsonl(path)
    turns = [
        HistoryTurn(turn, lines.offsets[index])
        for index, turn in indexed_codex_turns(lines.records)
    ]
    session_meta: dict[str, Any] = next(
        (
            r["payload"]
            for r in lines.records
            if r.get("type") == "session_meta" and isinstance(r.get("payload"), dict)
        ),
        {},
    )
    contexts = [
        r["payload"]
        for r in lines.records
        if r.get("type") == "turn_context" and isinstance(r.get("payload"), dict)
    ]
    session_id = session_meta.get("id") if isinstance(session_meta.get("id"), str) else None
    if session_id is None:
        stem = Path(relative).stem
        session_id = stem[-36:] if len(stem) >= 36 else None
    cwd = session_meta.get("cwd") if isinstance(session_meta.get("cwd"), str) else None
    items = Counter(
        str(r["payload"].get("type"))
        for r in lines.records
        if r.get("type") == "response_item" and isinstance(r.get("payload"), dict)
    )
    meta = {
        "harness": "codex",
        "cwd": _short(cwd),
        "originator": _short(session_meta.get("originator")),
        "cliVersion": _short(session_meta.get("cli_version")),
        "source": _short(session_meta.get("source")),
        "models": sorted({str(c["model"]) for c in contexts if c.get("model")})[:8],
        "responseItems": dict(items.most_common(12)),
    }
    return HistorySession(
        session_id=session_id,
        project=cwd,
        turns=turns,
        started_at=_str(session_meta.get("timestamp")) or _first(lines.records, "timestamp"),
        meta=meta,
        lines=len(lines.records),
        skipped_lines=lines.skipped,
        complete_end=lines.complete_end,
    )


SessionReader = Callable[[Path, str], HistorySession]


def _first(records: list[dict[str, Any]], key: str) -> Any:
    return next((r[key] for r in records if isinstance(r.get(key), str) and r[key]), None)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _short(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    return value if len(value) <= MAX_META_TEXT else value[: MAX_META_TEXT - 1] + "…"
