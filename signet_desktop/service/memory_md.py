"""The MEMORY.md capability: a deterministic projection of an agent's durable memory.

`build` chooses what the file shows from the database (pinned and important memories of no
project as the Global Head, each project's best as its Thread Head, the session ledger from
`memory_artifacts`, open issues, durable notes by type, a month index) and passes every text
through the content-safety gate; `projection/memory_md.py` renders it. Nothing reads the
wall clock: the ledger's 30 days count back from an explicit `now`, else from the newest
evidence (the latest memory change or artifact capture), so rebuilding an unchanged
database gives the same bytes tomorrow.

Safety: only text the gate returns enters the file. An item the gate withholds (it answers
with `WITHHELD_MARKER`) is left out, not shown as a marker: MEMORY.md is read by agents
and people as a summary, a line of markers says nothing, and the header counts what was
withheld. Redacted text (secrets masked) is shown as redacted.

`rebuild` writes atomically (temp file + rename) after copying the previous file to
`memory/MEMORY.backup-<ts>.md` (the newest `backups` kept). An unwritable target leaves the
previous file as it was and is reported three ways: a `memory_md.failed` event, the
`memoryMd` fact on the status board, and `Unavailable(code="memory_md_unwritable")` to the
caller (HTTP 503, the CLI's message).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from signet_desktop.domain import scope
from signet_desktop.domain.artifacts import Artifact, MemoryMdFailed, MemoryMdRebuilt
from signet_desktop.domain.errors import InvalidInput, Unavailable
from signet_desktop.domain.events import DiscardEvents, EventSink
from signet_desktop.domain.memory import DEFAULT_AGENT_ID, utc_now
from signet_desktop.evidence.artifacts import compact_time, write_atomic
from signet_desktop.projection import memory_md as page
from signet_desktop.safety.policy import WITHHELD_MARKER
from signet_desktop.storage import artifacts as artifact_rows
from signet_desktop.storage import memory_md_reads as reads
from signet_desktop.storage.database import Database

log = logging.getLogger(__name__)

__all__ = ["WITHHELD_MARKER", "MemoryMdService", "PromptSafety"]
STATUS_KEY = "memoryMd"
HEAD_LIMIT = 20
HEAD_MIN_IMPORTANCE = 0.8
THREAD_PER_PROJECT = 5
MAX_THREADS = 20
DURABLE_TYPES = (
    "constraint", "rule", "decision", "preference", "fact", "learning", "procedural",
    "rationale", "semantic",
)  # fmt: skip
OPEN_THREAD_TYPE = "issue"
OPEN_THREADS = 30
PER_TYPE = 15
LEDGER_DAYS = 30
LEDGER_ARTIFACTS = 500
LEDGER_SESSIONS = 50
MONTHS = 12
DEFAULT_BACKUPS = 5
BACKUP_GLOB = "MEMORY.backup-*.md"
KIND_ORDER = ("transcript", "summary", "compaction")


class PromptSafety(Protocol):
    """The content-safety gate (`service/safety.py: ContentSafetyService` implements it).

    For each `(source_id, text)` the text as it may enter a prompt: as is, redacted, or
    `WITHHELD_MARKER`.
    """

    def prompt_texts(
        self, agent_id: str, source_kind: str, items: Sequence[tuple[str, str]]
    ) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class Head:
    """The Global Head as session start injects it, and the memories it shows."""

    text: str
    memory_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MemoryMdDocument:
    """A built (not yet written) MEMORY.md."""

    agent_id: str
    text: str
    as_of: str | None
    shown: int
    withheld: int


@dataclass(frozen=True, slots=True)
class RebuildOutcome:
    """What a rebuild did; `backup` is the workspace-relative backup written, if any."""

    agent_id: str
    path: str
    changed: bool
    size: int
    backup: str | None
    as_of: str | None
    shown: int
    withheld: int


def normalize_time(value: str) -> str:
    """An ISO-8601 instant as `utc_now()` writes it (InvalidInput otherwise)."""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except (AttributeError, ValueError):
        raise InvalidInput("now must be an ISO-8601 time", code="now_invalid") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _days_before(iso: str, days: int) -> str:
    moment = datetime.fromisoformat(iso.replace("Z", "+00:00")) - timedelta(days=days)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Gate:
    """One build's safety calls: keeps what may be shown, counts what was withheld."""

    def __init__(self, safety: PromptSafety, agent_id: str) -> None:
        self._safety = safety
        self._agent_id = agent_id
        self._withheld: set[tuple[str, str]] = set()

    @property
    def withheld(self) -> int:
        """Distinct items withheld so far (an item asked about twice counts once)."""
        return len(self._withheld)

    def texts(self, source_kind: str, items: Sequence[tuple[str, str]]) -> dict[str, str]:
        if not items:
            return {}
        answers = self._safety.prompt_texts(self._agent_id, source_kind, list(items))
        if len(answers) != len(items):  # fail closed: a confused gate shows nothing
            raise RuntimeError("the safety gate answered a different number of items")
        kept = {}
        for (source_id, _), text in zip(items, answers, strict=True):
            if text.strip() == WITHHELD_MARKER:
                self._withheld.add((source_kind, source_id))
            else:
                kept[source_id] = text
        return kept

    def entries(self, memories: Sequence[reads.MdMemory]) -> list[page.Entry]:
        unique = list({m.id: m for m in memories}.values())
        kept = self.texts("memory", [(m.id, m.content) for m in unique])
        shown = {m.id: m for m in unique if m.id in kept}
        return [
            page.Entry(m.id, kept[m.id], m.type, m.created_at, m.pinned, m.project)
            for m in memories
            if m.id in shown
        ]


class MemoryMdService:
    """Build, write and report MEMORY.md per agent; the Global Head for session start."""

    def __init__(
        self,
        db: Database,
        workspace: Path,
        *,
        safety: PromptSafety,
        events: EventSink | None = None,
        status: Callable[[str, Any], None] | None = None,
        backups: int = DEFAULT_BACKUPS,
        clock: Callable[[], str] = utc_now,
    ) -> None:
        self._db = db
        self._root = workspace
        self._safety = safety
        self._events = events or DiscardEvents()
        self._status = status
        self._backups = max(0, backups)
        self._clock = clock
        self._lock = threading.Lock()  # one writer of the files at a time
        self._outcomes_lock = threading.Lock()
        self._outcomes: dict[str, dict[str, Any]] = {}

    def path_for(self, agent_id: str) -> Path:
        """`<workspace>/MEMORY.md` for the default agent, `agents/<id>/MEMORY.md` for others."""
        scope.check_agent_id(agent_id)
        if agent_id == DEFAULT_AGENT_ID:
            return self._root / "MEMORY.md"
        return self._root / "agents" / agent_id / "MEMORY.md"

    # -- building --------------------------------------------------------------------------

    def head(self, agent_id: str, max_chars: int) -> Head:
        """The Global Head section within `max_chars`, exactly as MEMORY.md starts it."""
        scope.check_agent_id(agent_id)
        entries = self._head_entries(_Gate(self._safety, agent_id), agent_id)
        text, ids = page.head_block(entries, max_chars)
        return Head(text, ids)

    def _head_entries(self, gate: _Gate, agent_id: str) -> list[page.Entry]:
        rows = reads.global_head(
            self._db.reader(), agent_id, min_importance=HEAD_MIN_IMPORTANCE, limit=HEAD_LIMIT * 2
        )
        return gate.entries(rows)[:HEAD_LIMIT]

    def build(self, agent_id: str, now: str | None = None) -> MemoryMdDocument:
        """The file's text for `agent_id` as of `now` (default: the newest evidence)."""
        scope.check_agent_id(agent_id)
        conn = self._db.reader()
        gate = _Gate(self._safety, agent_id)
        as_of = normalize_time(now) if now is not None else self._newest_evidence(agent_id)
        head = self._head_entries(gate, agent_id)
        shown = {e.memory_id for e in head}
        threads = self._threads(gate, reads.thread_heads(conn, agent_id, THREAD_PER_PROJECT * 2))
        typed = gate.entries(
            reads.by_type(conn, agent_id, (*DURABLE_TYPES, OPEN_THREAD_TYPE), PER_TYPE * 2)
        )
        open_threads = [
            e for e in typed if e.type == OPEN_THREAD_TYPE and e.memory_id not in shown
        ][:OPEN_THREADS]
        shown |= {e.memory_id for _, entries in threads for e in entries}
        shown |= {e.memory_id for e in open_threads}
        durable = []
        for memory_type in DURABLE_TYPES:
            fresh = [e for e in typed if e.type == memory_type and e.memory_id not in shown]
            if fresh:
                durable.append((memory_type, fresh[:PER_TYPE]))
        ledger = self._ledger(gate, agent_id, as_of)
        doc = page.MemoryMdInput(
            agent_id=agent_id,
            as_of=as_of,
            memory_count=reads.count_durable(conn, agent_id),
            withheld=gate.withheld,
            head=head,
            threads=threads,
            ledger=ledger,
            open_threads=open_threads,
            durable=durable,
            months=[page.MonthCount(*m) for m in reads.months(conn, agent_id, MONTHS)],
        )
        count = len(shown) + sum(len(entries) for _, entries in durable)
        return MemoryMdDocument(agent_id, page.render(doc), as_of, count, gate.withheld)

    def _newest_evidence(self, agent_id: str) -> str | None:
        conn = self._db.reader()
        found = [
            t
            for t in (
                reads.newest_change(conn, agent_id),
                artifact_rows.newest_capture(conn, agent_id),
            )
            if t
        ]
        return max(found) if found else None

    def _threads(
        self, gate: _Gate, rows: Sequence[reads.MdMemory]
    ) -> list[tuple[str, list[page.Entry]]]:
        by_project: dict[str, list[page.Entry]] = {}
        for entry in gate.entries(rows):
            assert entry.project is not None
            by_project.setdefault(entry.project, []).append(entry)
        chosen = list(by_project.items())[:MAX_THREADS]  # rows come most active project first
        return [(project, entries[:THREAD_PER_PROJECT]) for project, entries in chosen]

    def _ledger(self, gate: _Gate, agent_id: str, as_of: str | None) -> list[page.LedgerEntry]:
        if as_of is None:
            return []
        since = _days_before(as_of, LEDGER_DAYS)
        found = artifact_rows.ledger(self._db.reader(), agent_id, since, LEDGER_ARTIFACTS)
        sessions: dict[str, list[Artifact]] = {}
        for artifact in found:  # newest first
            if artifact.meta.captured_at <= as_of:
                sessions.setdefault(artifact.meta.session_token, []).append(artifact)
        chosen = list(sessions.values())[:LEDGER_SESSIONS]
        voice = [_voice(group) for group in chosen]
        kept = gate.texts(
            "artifact",
            [(a.source_path, a.meta.memory_sentence or "") for a in voice if a is not None],
        )
        entries = []
        for group, speaker in zip(chosen, voice, strict=True):
            newest = group[0].meta
            kinds = tuple(k for k in KIND_ORDER if any(a.meta.kind == k for a in group))
            sentence = kept.get(speaker.source_path) if speaker is not None else None
            entries.append(
                page.LedgerEntry(
                    newest.session_key,
                    newest.captured_at,
                    newest.harness,
                    newest.project,
                    kinds,
                    sentence,
                )
            )
        return entries

    # -- writing ---------------------------------------------------------------------------

    def rebuild(self, agent_id: str, now: str | None = None) -> RebuildOutcome:
        """Build and write the agent's MEMORY.md (unchanged bytes: nothing is written)."""
        doc = self.build(agent_id, now)
        data = doc.text.encode("utf-8")
        path = self.path_for(agent_id)
        backup: Path | None = None
        with self._lock:
            try:
                previous = path.read_bytes() if path.is_file() else None
                changed = previous != data
                if changed:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    if previous is not None:
                        backup = self._backup(path, previous)
                    write_atomic(path, data)
            except OSError as exc:
                self._failed(agent_id, path, exc)
                raise Unavailable(
                    f"MEMORY.md could not be written at {path}: {exc.strerror or exc}; "
                    "the previous file is unchanged",
                    code="memory_md_unwritable",
                    details={"path": str(path)},
                ) from exc
        outcome = RebuildOutcome(
            agent_id,
            str(path),
            changed,
            len(data),
            None if backup is None else self._relative(backup),
            doc.as_of,
            doc.shown,
            doc.withheld,
        )
        self._report(agent_id, {"state": "ok", "path": str(path), "error": None})
        self._events.publish(
            MemoryMdRebuilt(agent_id=agent_id, path=str(path), changed=changed, size=len(data))
        )
        return outcome

    def _backup(self, path: Path, previous: bytes) -> Path | None:
        """Copy the previous file to memory/MEMORY.backup-<ts>.md; keep the newest N."""
        if self._backups == 0:
            return None
        folder = path.parent / "memory"
        folder.mkdir(parents=True, exist_ok=True)
        existing = sorted(folder.glob(BACKUP_GLOB))
        if existing and existing[-1].read_bytes() == previous:
            return None  # the newest backup already holds it
        target = folder / f"MEMORY.backup-{compact_time(self._clock())}.md"
        write_atomic(target, previous)
        for old in sorted(folder.glob(BACKUP_GLOB))[: -self._backups]:
            try:
                old.unlink()
            except OSError:
                log.warning("old MEMORY.md backup %s could not be removed", old)
        return target

    def _failed(self, agent_id: str, path: Path, exc: OSError) -> None:
        error = f"{type(exc).__name__}: {exc.strerror or exc}"
        log.error("MEMORY.md for %s could not be written at %s: %s", agent_id, path, error)
        self._report(agent_id, {"state": "error", "path": str(path), "error": error})
        self._events.publish(MemoryMdFailed(agent_id=agent_id, path=str(path), error=error))

    def _report(self, agent_id: str, fact: dict[str, Any]) -> None:
        with self._outcomes_lock:
            self._outcomes[agent_id] = {**fact, "at": self._clock()}
            snapshot = {"agents": {k: dict(v) for k, v in sorted(self._outcomes.items())}}
        if self._status is not None:
            self._status(STATUS_KEY, snapshot)

    def last_outcome(self, agent_id: str) -> dict[str, Any] | None:
        """The agent's last rebuild as the status board shows it (None: not rebuilt yet)."""
        scope.check_agent_id(agent_id)
        with self._outcomes_lock:
            found = self._outcomes.get(agent_id)
        return None if found is None else dict(found)

    def _relative(self, path: Path) -> str:
        try:
            return path.relative_to(self._root).as_posix()
        except ValueError:
            return str(path)


def _voice(group: Sequence[Artifact]) -> Artifact | None:
    """The artifact whose sentence speaks for a session: newest summary, else transcript."""
    for kinds in (("compaction", "summary"), ("transcript",)):
        for artifact in group:
            if artifact.meta.kind in kinds and artifact.meta.memory_sentence:
                return artifact
    return None
