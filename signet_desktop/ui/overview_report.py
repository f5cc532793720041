"""What the Overview pane shows, read off the GUI thread from the facade (no Qt here).

`read_overview` gathers one consistent reading: the verdict every surface shows
(`service/verdict.py`), the daemon's runtime facts, each harness the installers know (connected
or not) with its last retained session, memories and sessions today, Dreaming's last pass and
the queue. `lines_for` turns a batch of bus events into activity lines, reading the memory or
document each one is about (one read per batch; a burst past FEED_BATCH is summed up).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from signet_desktop.domain.browse import BrowseQuery
from signet_desktop.domain.dreaming import DreamingStatus
from signet_desktop.domain.errors import SignetError
from signet_desktop.domain.events import Event, MemoryCreated
from signet_desktop.domain.memory import Memory
from signet_desktop.harness.installers import claude_code, codex, opencode
from signet_desktop.harness.installers.files import Locations
from signet_desktop.service.facade import SignetService
from signet_desktop.service.verdict import Verdict, judge, read_facts
from signet_desktop.ui.activity_words import (
    MEMORY_VERBS,
    Detail,
    Line,
    describe,
)

TODAY_SCAN = 500  # newest memories looked at for "today"; past it: "500+"
SESSION_SCAN = 200  # newest sessions looked at (the transcripts' page limit)
RECENT_MEMORIES = 8  # the feed's first lines, before any event arrives
FEED_BATCH = 20  # memory events described one by one per batch; the rest are counted
HARNESSES: tuple[tuple[str, str, Callable[[Locations], dict[str, Any]]], ...] = (
    (claude_code.NAME, "Claude Code", claude_code.status),
    (codex.NAME, "Codex", codex.status),
    (opencode.NAME, "OpenCode", opencode.status),
)
MEMORY_KINDS = tuple(MEMORY_VERBS)


@dataclass(frozen=True, slots=True)
class AgentFact:
    """One harness: found on this machine, connected to Signet, its last retained session."""

    name: str
    label: str
    found: bool
    connected: bool
    last_session: str | None  # ISO time of its newest session's last change


@dataclass(frozen=True, slots=True)
class Counted:
    """`n` of something today; `capped` when the scan stopped before the day's start."""

    total: int
    today: int
    capped: bool = False


@dataclass(frozen=True, slots=True)
class OverviewReport:
    """One reading of everything the Overview shows."""

    verdict: Verdict
    runtime: Mapping[str, Any]  # the status board's `runtime` ({} in a bare service)
    agents: tuple[AgentFact, ...]
    memories: Counted
    sessions: Counted
    dreaming: DreamingStatus | None
    queue: Mapping[str, int]
    recent: tuple[Memory, ...]


def read_overview(
    service: SignetService,
    agent_id: str,
    env: Mapping[str, str] | None = None,
    now: datetime | None = None,
) -> OverviewReport:
    """Read everything (blocks: call it in a worker thread)."""
    since = day_start(now)
    newest = service.memories.browse(agent_id, BrowseQuery(), limit=TODAY_SCAN)
    listing = service.transcripts.sessions(agent_id, limit=SESSION_SCAN)
    sessions_today = sum(row.updated_at >= since for row in listing.rows)
    return OverviewReport(
        verdict=judge(read_facts(service, agent_id)),
        runtime=dict(service.status().process.get("runtime") or {}),
        agents=agent_facts(service, agent_id, Locations.from_env(env or os.environ)),
        memories=Counted(
            service.memories.count(agent_id),
            sum(m.created_at >= since for m in newest),
            len(newest) == TODAY_SCAN and newest[-1].created_at >= since,
        ),
        sessions=Counted(
            listing.total,
            sessions_today,
            len(listing.rows) == SESSION_SCAN and sessions_today == SESSION_SCAN,
        ),
        dreaming=service.dreaming.status(agent_id),
        queue=service.pipeline.queue.diagnostics(agent_id).counts,
        recent=tuple(newest[:RECENT_MEMORIES]),
    )


def day_start(now: datetime | None = None) -> str:
    """The local day's start as a stored timestamp (UTC, `2026-12-06T23:00:00.000Z`)."""
    local = (now or datetime.now(UTC)).astimezone()
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def agent_facts(
    service: SignetService, agent_id: str, locations: Locations
) -> tuple[AgentFact, ...]:
    """Each harness the installers know, as its own config files say, and its last session."""
    found = []
    for name, label, status in HARNESSES:
        facts = status(locations)
        connected = "error" not in facts and (
            facts.get("hooks", "none") != "none" or bool(facts.get("mcp"))
        )
        rows = service.transcripts.sessions(agent_id, harness=name, limit=1).rows
        last = rows[0].updated_at if rows else None
        found.append(AgentFact(name, label, bool(facts.get("found")), connected, last))
    return tuple(found)


def recent_lines(memories: Sequence[Memory]) -> list[tuple[str, Line]]:
    """(when, line) for the newest memories: the feed before anything happens."""
    found = []
    for memory in memories:
        event = MemoryCreated(memory_id=memory.id, memory_type=memory.type, embedded=False)
        line = describe(event, Detail(who=memory.updated_by, text=memory.content))
        if line is not None:
            found.append((memory.created_at, line))
    return found


def lines_for(service: SignetService, agent_id: str, events: Sequence[Event]) -> list[Line]:
    """The activity lines for a batch of events, oldest first (blocks: reads what they name)."""
    lines: list[Line] = []
    described = 0
    skipped: dict[str, int] = {}
    for event in events:
        if event.kind in MEMORY_KINDS and described >= FEED_BATCH:
            skipped[event.kind] = skipped.get(event.kind, 0) + 1
            continue
        line = describe(event, _detail(service, agent_id, event))
        if line is not None:
            described += event.kind in MEMORY_KINDS
            lines.append(line)
    for kind, count in skipped.items():
        verb = MEMORY_VERBS[kind][1]
        lines.append(Line(f"… and {count:,} more memories {verb}", "memories"))
    return lines


def _detail(service: SignetService, agent_id: str, event: Event) -> Detail | None:
    memory_id = getattr(event, "memory_id", None)
    document_id = getattr(event, "document_id", None)
    try:
        if event.kind in MEMORY_KINDS and isinstance(memory_id, str):
            memory = service.memories.inspect(agent_id, memory_id)
            return Detail(who=memory.updated_by, text=memory.content)
        if event.kind.startswith("document.") and isinstance(document_id, str):
            document = service.documents.get(agent_id, document_id)
            return Detail(text=document.title or document.source_url)
    except SignetError:  # gone since (deleted, purged): the line says it without the text
        return None
    return None
