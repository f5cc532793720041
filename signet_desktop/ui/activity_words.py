"""Bus events in words a person reads ("Claude Code remembered “billing runs on…”"), no Qt.

`describe(event, detail)` says what happened and which pane shows it; `detail` carries what
the event itself does not (a memory's text and who stored it, a document's title), read off
the GUI thread by whoever shows the line. Events that are bookkeeping (`status.changed`, a
lease, coverage ticks) say nothing: `describe` returns None.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from signet_desktop.domain.events import Event

QUOTE_CHARS = 60
DOCUMENT_ACTOR = "document-ingest"
ACTORS = {
    "claude-code": "Claude Code",
    "claude": "Claude Code",
    "codex": "Codex",
    "opencode": "OpenCode",
    "inspector": "You",
    "user": "You",
    "mcp": "An MCP client",
    "signet-hook": "An agent",
    "document-ingest": "Document ingest",
    "retention": "Retention",
    "dreaming": "Dreaming",
}
# A memory event's verb, active (who did it) and passive (when who is not known).
MEMORY_VERBS = {
    "memory.created": ("remembered", "stored"),
    "memory.updated": ("changed", "changed"),
    "memory.deleted": ("forgot", "forgotten"),
    "memory.recovered": ("brought back", "brought back"),
}
REPAIRED = {
    "requeue": "retried",
    "release": "released",
    "cancel": "cancelled",
    "prune": "pruned",
}
QUIET = frozenset(
    {
        "status.changed",
        "job.leased",
        "job.completed",
        "embedding.progress",
        "memory.embedded",
        "import.progress",
        "projection.progress",
        "document.progress",
        "artifact.written",
        "worker.state",
    }
)


@dataclass(frozen=True, slots=True)
class Detail:
    """What a line needs beyond the event: who did it and the text it is about."""

    who: str | None = None
    text: str | None = None


@dataclass(frozen=True, slots=True)
class Line:
    """One activity line: its words, and the pane (with its reveal) that shows more."""

    text: str
    pane: str
    reveal: dict[str, Any] = field(default_factory=dict)
    level: str = "info"  # info | warn


def actor_name(name: str | None) -> str:
    """`claude-code` → `Claude Code`; an unknown name as it is; none → `An agent`."""
    if not name:
        return "An agent"
    return ACTORS.get(name.lower(), name)


def quoted(text: str | None, width: int = QUOTE_CHARS) -> str:
    """`“billing runs on Postgres 16…”` on one line."""
    flat = " ".join((text or "").split())
    if len(flat) > width:
        flat = flat[: width - 1].rstrip() + "…"
    return f"“{flat}”"


def describe(event: Event, detail: Detail | None = None) -> Line | None:
    """What `event` means to a person, or None when it is bookkeeping."""
    if event.kind in QUIET:
        return None
    d = detail or Detail()
    facts: dict[str, Any] = {name: getattr(event, name, None) for name in _FIELDS}
    job = str(facts["job_type"] or "").replace("_", " ")
    facts["job_type"] = ("An " if job[:1] in "aeiou" else "A ") + job
    facts["action"] = REPAIRED.get(str(facts["action"]), facts["action"])
    say = _SAYINGS.get(event.kind)
    if say is None:
        return Line(event.kind.replace("_", " ").replace(".", " ").capitalize(), "health")
    return say(facts, d)


_FIELDS = (
    "memory_id",
    "job_type",
    "error",
    "document_id",
    "status",
    "chunk_count",
    "retrying",
    "harness",
    "session_key",
    "completed",
    "appended",
    "records_imported",
    "turns_imported",
    "applied",
    "proposed",
    "pass_id",
    "mode",
    "purged_memories",
    "action",
    "affected",
    "changed",
    "points",
    "outcome",
)


def _memory(verb: str, passive: str) -> Saying:
    def say(f: dict[str, Any], d: Detail) -> Line:
        reveal = {"memory_id": f["memory_id"]}
        if d.who is None and d.text is None:
            return Line(f"A memory was {passive}", "memories", reveal)
        if d.who == DOCUMENT_ACTOR:  # a document's chunk, not something an agent said
            return Line(f"A document chunk was {passive}: {quoted(d.text)}", "memories", reveal)
        about = f" {quoted(d.text)}" if d.text else " a memory"
        return Line(f"{actor_name(d.who)} {verb}{about}", "memories", reveal)

    return say


def _document(f: dict[str, Any], d: Detail) -> Line:
    name = quoted(d.text, 40) if d.text else "A document"
    reveal = {"document_id": f["document_id"]}
    if f["status"] == "done":
        n = int(f["chunk_count"] or 0)
        return Line(f"{name} is searchable ({n:,} chunks)", "documents", reveal)
    if f["status"] == "deleted":
        return Line(f"{name} was deleted", "documents", reveal)
    if f["retrying"]:
        return Line(f"{name} failed and will be retried: {f['error']}", "documents", reveal)
    return Line(f"{name} failed: {f['error']}", "documents", reveal, "warn")


def _transcript(f: dict[str, Any], d: Detail) -> Line:
    who = actor_name(f["harness"])
    reveal = {"session_key": f["session_key"]}
    if f["completed"]:
        return Line(f"{who} finished a session", "transcripts", reveal)
    n = int(f["appended"] or 0)
    noun = "turn" if n == 1 else "turns"
    return Line(f"{who} kept {n:,} more {noun} of a session", "transcripts", reveal)


def _pass_finished(f: dict[str, Any], d: Detail) -> Line:
    reveal = {"pass_id": f["pass_id"]}
    if f["status"] == "completed":
        n = int(f["applied"] or 0)
        return Line(f"Dreaming finished a pass: {n:,} changes applied", "dreaming", reveal)
    return Line(f"A Dreaming pass ended {f['status']}", "dreaming", reveal, "warn")


def _import(f: dict[str, Any], d: Detail) -> Line:
    if f["status"] == "completed":
        text = f"An import finished: {int(f['turns_imported'] or 0):,} turns brought in"
        return Line(text, "transcripts")
    return Line(f"An import ended {f['status']}: {f['error']}", "transcripts", {}, "warn")


def _repaired(f: dict[str, Any], d: Detail) -> Line:
    n = int(f["affected"] or 0)
    return Line(f"The queue was repaired: {n:,} job{'' if n == 1 else 's'} {f['action']}", "queue")


def _worded(text: str, pane: str, level: str = "info") -> Saying:
    return lambda f, d: Line(text.format(**f), pane, {}, level)


Saying = Callable[[dict[str, Any], Detail], Line]

_SAYINGS: dict[str, Saying] = {
    **{kind: _memory(*verbs) for kind, verbs in MEMORY_VERBS.items()},
    "job.failed": _worded("{job_type} attempt failed and will be retried", "queue"),
    "job.dead": _worded("{job_type} job failed for good: {error}", "queue", "warn"),
    "document.finished": _document,
    "transcript.captured": _transcript,
    "import.finished": _import,
    "dream.pass_started": _worded("Dreaming started a {mode} pass", "dreaming"),
    "dream.pass_finished": _pass_finished,
    "pass.reverted": _worded("A Dreaming pass was reverted", "dreaming"),
    "ontology.changed": _worded("The knowledge graph took a reviewed change", "proposals"),
    "knowledge.changed": _worded("The knowledge graph changed", "entities"),
    "maintenance.finished": _worded(
        "Maintenance ran: {purged_memories} old memories purged", "health"
    ),
    "queue.repaired": _repaired,
    "memory_md.rebuilt": _worded("MEMORY.md was rewritten", "health"),
    "memory_md.failed": _worded("MEMORY.md could not be written: {error}", "health", "warn"),
    "projection.finished": _worded("The map was laid out ({points} points)", "map"),
}
