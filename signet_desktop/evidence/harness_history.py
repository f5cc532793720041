"""A harness's own session history on disk: where it lives, its files, one session per file.

Claude Code keeps `~/.claude/projects/<cwd slug>/<session id>.jsonl` (`CLAUDE_CONFIG_DIR`
moves `~/.claude`) and a subagent's transcript beside it: `<session id>/subagents/agent-
<agent id>.jsonl` (older versions: `agent-<agent id>.jsonl` in the project directory). A
subagent file is a session of its own, linked to its parent through the `sessionId` its
records carry. Codex keeps `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` (`CODEX_HOME` moves
`~/.codex`) in one of two layouts (`codex_records`).

A session is named by the file's own ids, never by its file name alone: Claude Code's
`sessionId` (a renamed file keeps its session), Codex's `session_meta` id (or the bare
header's). Turns come from `claude_code_records` / `codex_records` (the same turns and turn
ids live capture makes); each keeps the byte offset of the line it came from, and every
message record that is not a turn is counted by reason (`kept_out`). Lines that do not parse
(a torn last line of a live session, garbage) are counted, never fatal.
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from signet_desktop.domain.sessions import Turn
from signet_desktop.evidence import claude_code_records, codex_records
from signet_desktop.evidence.transcript_formats import JsonlLines, read_jsonl
from signet_desktop.evidence.turn_reading import TurnRead

MAX_META_TEXT = 300
WARMUP_PROMPT = "Warmup"  # Claude Code 2.0 sent this to each subagent type to warm its cache


@dataclass(frozen=True, slots=True)
class HistoryTurn:
    """A conversation turn and where its line starts in the (staged) file."""

    turn: Turn
    offset: int


@dataclass(frozen=True, slots=True)
class HistorySession:
    """One harness session read from one file.

    `skip` names why the whole file is no conversation of its own (a compaction or warm-up
    agent); `parent_session_id` links a subagent's transcript to the session that ran it."""

    session_id: str | None
    project: str | None
    turns: list[HistoryTurn]
    started_at: str | None
    meta: dict[str, Any] = field(default_factory=dict)
    lines: int = 0
    skipped_lines: int = 0
    complete_end: int = 0
    kept_out: Counter[str] = field(default_factory=Counter)
    parent_session_id: str | None = None
    skip: str | None = None


# -- where the history lives ---------------------------------------------------------------


def claude_code_root() -> Path:
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base) if base else Path.home() / ".claude") / "projects"


def codex_root() -> Path:
    base = os.environ.get("CODEX_HOME")
    return (Path(base) if base else Path.home() / ".codex") / "sessions"


def claude_code_files(root: Path) -> Iterator[str]:
    """Session and subagent files under a Claude Code projects root (relative, sorted: a
    session's file comes before its `subagents/`)."""
    for path in sorted(root.rglob("*.jsonl"), key=lambda found: found.as_posix()):
        if path.is_file() and not path.is_symlink():
            yield path.relative_to(root).as_posix()


def codex_files(root: Path) -> Iterator[str]:
    """Rollout files under a Codex sessions root (relative, sorted)."""
    for path in sorted(root.rglob("rollout-*.jsonl")):
        if path.is_file() and not path.is_symlink():
            yield path.relative_to(root).as_posix()


def is_subagent_file(relative: str) -> bool:
    """`agent-*.jsonl` (beside the sessions, or under `<session>/subagents/`)."""
    return Path(relative).name.startswith("agent-")


# -- one session per file ------------------------------------------------------------------


def read_claude_code_session(path: Path, relative: str) -> HistorySession:
    """A Claude Code session or subagent file, named by the ids its records carry."""
    lines = read_jsonl(path)
    records = lines.records
    subagent = is_subagent_file(relative)
    read = claude_code_records.read_turns(records, subagent=subagent)
    ids = [str(r["sessionId"]) for r in records if isinstance(r.get("sessionId"), str)]
    first = _first(records, "cwd")
    meta: dict[str, Any] = {
        "harness": "claude-code",
        "cwd": _short(first),
        "gitBranch": _short(_first(records, "gitBranch")),
        "version": _short(_first(records, "version")),
        "models": _claude_models(records),
        "lineTypes": dict(Counter(str(r.get("type")) for r in records).most_common(12)),
        "sidechainLines": sum(1 for r in records if r.get("isSidechain")),
        "summary": _short(
            next((r.get("summary") for r in records if r.get("type") == "summary"), None)
        ),
    }
    parent = skip = None
    if subagent:
        agent = _first(records, "agentId") or Path(relative).stem.removeprefix("agent-")
        parent = ids[0] if ids else None
        session_id = f"{parent}/agent-{agent}" if parent else None
        meta["agentId"] = _short(agent)
        skip = _subagent_skip(str(agent), records, read)
    else:
        session_id = claude_session_id(Path(relative).stem, ids)
        meta["otherSessionIds"] = sorted(set(ids) - {session_id})[:8]
    return _session(session_id, first, read, records, lines, meta, parent, skip)


def claude_session_id(stem: str, ids: list[str]) -> str | None:
    """The session a Claude Code file holds: its file name when its records say so (a resumed
    session's copied lines carry older ids), else the id its last record carries (a renamed
    file), else the file name (records without ids)."""
    if not ids or stem in ids:
        return stem or None
    return ids[-1]


def _subagent_skip(agent: str, records: list[dict[str, Any]], read: TurnRead) -> str | None:
    if agent.startswith("acompact"):
        return "compaction agent (a summary of its parent session's own turns)"
    first_user = next((t.turn.text for t in read.turns if t.turn.role == "user"), None)
    if first_user == WARMUP_PROMPT:
        return "warm-up agent (Claude Code's cache warm-up, no task)"
    return None


def read_codex_session(path: Path, relative: str) -> HistorySession:
    """A Codex rollout in either layout: its id is `session_meta.id` (the bare header's id in
    the older layout), else the file name's uuid."""
    lines = read_jsonl(path)
    records = lines.records
    read = codex_records.read_turns(records)
    described = codex_records.session_meta(records)
    session_id = _str(described.get("id"))
    if session_id is None:
        stem = Path(relative).stem
        session_id = stem[-36:] if len(stem) >= 36 else None
    cwd = _str(described.get("cwd"))
    typed = [codex_records.item(record) for record in records]
    contexts = [payload for kind, payload in typed if kind == "turn_context"]
    items = Counter(str(payload.get("type")) for kind, payload in typed if kind == "response_item")
    meta = {
        "harness": "codex",
        "layout": codex_records.layout(records),
        "cwd": _short(cwd),
        "originator": _short(described.get("originator")),
        "cliVersion": _short(described.get("cli_version")),
        "source": _short(described.get("source")),
        "models": sorted({str(c["model"]) for c in contexts if c.get("model")})[:8],
        "responseItems": dict(items.most_common(12)),
    }
    started = _str(described.get("timestamp")) or _first(records, "timestamp")
    session = _session(session_id, cwd, read, records, lines, meta, None, None)
    return dataclasses.replace(session, started_at=started)


SessionReader = Callable[[Path, str], HistorySession]


def _session(
    session_id: str | None,
    project: object,
    read: TurnRead,
    records: list[dict[str, Any]],
    lines: JsonlLines,
    meta: dict[str, Any],
    parent: str | None,
    skip: str | None,
) -> HistorySession:
    meta["keptOut"] = dict(read.kept_out)
    if parent is not None:
        meta["parentSessionId"] = _short(parent)
    return HistorySession(
        session_id=session_id,
        project=project if isinstance(project, str) else None,
        turns=[HistoryTurn(t.turn, lines.offsets[t.index]) for t in read.turns],
        started_at=_first(records, "timestamp"),
        meta=meta,
        lines=len(records),
        skipped_lines=lines.skipped,
        complete_end=lines.complete_end,
        kept_out=read.kept_out,
        parent_session_id=parent,
        skip=skip,
    )


def _claude_models(records: list[dict[str, Any]]) -> list[str]:
    found = {
        str(r["message"]["model"])
        for r in records
        if isinstance(r.get("message"), dict) and r["message"].get("model")
    }
    return sorted(found)[:8]


def _first(records: list[dict[str, Any]], key: str) -> Any:
    return next((r[key] for r in records if isinstance(r.get(key), str) and r[key]), None)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _short(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    return value if len(value) <= MAX_META_TEXT else value[: MAX_META_TEXT - 1] + "…"
