"""The transcripts capability: capture harness sessions as canonical evidence, read them back.

Capture order (the spec's "canonical filesystem append happens before DB finalisation"):

1. bring the harness's canonical file in step with the database (`_reconcile`: adopt
   complete lines past the committed offset, cut a torn last line);
2. append the session's turns the database does not have yet (by ordinal), fsync;
3. one write transaction: the `session_transcripts` row (text, turn count, hash, completion)
   and the file's committed offset.

A crash after 2 leaves lines the next capture or start adopts; a crash inside 2 leaves a
torn line that is cut; a retried session-end appends nothing twice. Session end, start-up
recovery and the idle TTL mark rows complete directly: there is no summary job.

Live capture (`capture_later`): a prompt-submit hook names the session's transcript file; it
is captured on this service's own thread after the hook has answered (one pending capture per
session, at most one every LIVE_INTERVAL_S: a long session's file is re-read whole; a failure —
the file gone, a path outside the roots — is logged), so what a live session said is
recallable from its previous prompts on, without waiting for its end.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from signet_desktop.domain import remember as checks
from signet_desktop.domain import scope
from signet_desktop.domain.errors import InvalidInput, NotFound
from signet_desktop.domain.events import DiscardEvents, EventSink, TranscriptCaptured
from signet_desktop.domain.memory import utc_now
from signet_desktop.domain.sessions import (
    SessionTranscript,
    TranscriptHit,
    Turn,
    normalize_harness,
)
from signet_desktop.evidence.canonical import CanonicalFile, CanonicalTurn
from signet_desktop.evidence.transcript_formats import (
    check_transcript_path,
    open_transcript,
    parse_transcript,
)
from signet_desktop.recall.expand import split_turns
from signet_desktop.recall.sanitize import fts_match_expression
from signet_desktop.safety.local_files import FileRoots
from signet_desktop.service.safety.service import policy_gate
from signet_desktop.storage import transcript_turns as turn_rows
from signet_desktop.storage import transcripts as rows
from signet_desktop.storage.handle import DatabaseHandle
from signet_desktop.storage.transcript_turns import TurnRow

log = logging.getLogger(__name__)

SessionId = tuple[str, str]  # (agent id, session key)
ROLE_LABELS = {"user": "User", "assistant": "Assistant"}
LABEL_ROLES = {f"{label}: ": role for role, label in ROLE_LABELS.items()}
BACKFILL_BATCH = 200  # sessions indexed per write transaction at start-up
MAX_LIST_LIMIT = 200
MAX_SEARCH_LIMIT = 20
MAX_OFFSET = 10_000_000
LIVE_INTERVAL_S = 15.0  # at most one live capture of a session this often


@dataclass(frozen=True, slots=True)
class CaptureOutcome:
    """What a capture did: turns seen, turns newly appended, whether the row is complete."""

    session_key: str
    turns: int
    appended: int
    completed: bool
    skipped_lines: int = 0


@dataclass(frozen=True, slots=True)
class RecoveryReport:
    """What start-up recovery did."""

    adopted_turns: int
    cut_bytes: int
    completed_sessions: int


def render_content(turns: Sequence[Turn]) -> str:
    """The row's searchable text: `User: …` / `Assistant: …` paragraphs."""
    return "\n\n".join(f"{ROLE_LABELS.get(t.role, t.role)}: {t.text}" for t in turns)


def content_turns(content: str) -> list[TurnRow]:
    """A session's turns recovered from its rendered content (no canonical lines: a Signet
    workspace import); a paragraph without a known label is one `user` turn's text."""
    found: list[TurnRow] = []
    for ordinal, part in enumerate(split_turns(content)):
        role, text = "user", part
        for label, name in LABEL_ROLES.items():
            if part.startswith(label):
                role, text = name, part[len(label) :]
                break
        found.append(TurnRow(ordinal, role, text))
    return found


def turn_rows_of(turns: Sequence[tuple[int, Turn]]) -> list[TurnRow]:
    """(ordinal, turn) pairs as rows of the turn index."""
    return [TurnRow(ordinal, t.role, t.text, t.timestamp) for ordinal, t in turns]


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class TranscriptService:
    """Capture (hooks, later importers) and scoped reads of retained transcripts."""

    def __init__(
        self,
        db: DatabaseHandle,
        workspace: Path,
        *,
        allowed_roots: Sequence[Path] = (),
        configured_roots: Sequence[Path] = (),
        events: EventSink | None = None,
    ) -> None:
        self._db = db
        self._root = workspace
        # `allowed_roots` are the local user's defaults; `configured_roots` is files.roots.
        self._roots = FileRoots.of(configured_roots, [workspace, *allowed_roots])
        self._events = events or DiscardEvents()
        self._lock = threading.Lock()  # the daemon is the canonical files' only writer
        self._opened_at = utc_now()  # rows last written before this were left by a crash
        self._later = ThreadPoolExecutor(1, thread_name_prefix="transcript-live")
        self._queued: set[SessionId] = set()  # live captures waiting for the thread
        self._last_live: dict[SessionId, float] = {}  # when each session was last queued
        self._queued_lock = threading.Lock()

    # -- capture ---------------------------------------------------------------------------

    def capture_file(
        self,
        agent_id: str,
        session_key: str,
        harness: str,
        transcript_path: str,
        *,
        project: str | None = None,
        complete: bool = False,
        local: bool = True,
    ) -> CaptureOutcome:
        """Read a harness's transcript file and capture it. The file is checked as opened:
        inside the roots the caller may read (`local`: the machine's own user), never a
        credential store (Forbidden otherwise)."""
        harness = normalize_harness(harness)
        path = check_transcript_path(transcript_path)
        with open_transcript(path, self._roots.for_caller(local)) as handle:
            parsed = parse_transcript(harness, handle)
        outcome = self.capture(
            agent_id, session_key, harness, parsed.turns, project=project, complete=complete
        )
        if parsed.skipped_lines:
            log.info("transcript %s: %d unreadable lines skipped", path, parsed.skipped_lines)
        return CaptureOutcome(
            outcome.session_key,
            outcome.turns,
            outcome.appended,
            outcome.completed,
            parsed.skipped_lines,
        )

    def capture(
        self,
        agent_id: str,
        session_key: str,
        harness: str,
        turns: Sequence[Turn],
        *,
        project: str | None = None,
        complete: bool = False,
    ) -> CaptureOutcome:
        """Append the turns not yet retained, then commit the row (see the module docstring)."""
        scope.check_agent_id(agent_id)
        key = _require_session(session_key)
        harness = normalize_harness(harness)
        project = checks.check_text_field("project", project)
        with self._lock:
            canonical = CanonicalFile(self._root, harness)
            self._reconcile(canonical)
            existing = rows.get_transcript(self._db.reader(), agent_id, key)
            committed = existing.turn_count if existing else 0
            fresh = [
                CanonicalTurn(agent_id, key, harness, project, ordinal, turn)
                for ordinal, turn in enumerate(turns)
                if ordinal >= committed
            ]
            size = canonical.append(fresh)
            total = max(committed, len(turns))
            content = (
                render_content(turns)
                if existing is None or len(turns) >= committed
                else existing.content
            )
            with self._db.write() as conn:
                rows.save_transcript(
                    conn,
                    agent_id=agent_id,
                    session_key=key,
                    harness=harness,
                    project=project,
                    content=content,
                    turn_count=total,
                    content_hash=_hash(content),
                    complete=complete,
                )
                rows.set_committed_bytes(conn, canonical.relative, size)
                if len(turns) >= committed:
                    whole = existing is None or turn_rows.is_pending(conn, agent_id, key)
                    start = 0 if whole else committed
                    turn_rows.index_turns(
                        conn, agent_id, key, turn_rows_of(list(enumerate(turns))[start:])
                    )
                    if whole:
                        turn_rows.settle_backfill(conn, agent_id, key)
        completed = complete or bool(existing and existing.completed_at)
        self._events.publish(
            TranscriptCaptured(
                agent_id=agent_id,
                session_key=key,
                harness=harness,
                turns=total,
                appended=len(fresh),
                completed=completed,
            )
        )
        return CaptureOutcome(key, total, len(fresh), completed)

    def capture_later(
        self,
        agent_id: str,
        session_key: str,
        harness: str,
        transcript_path: str,
        *,
        project: str | None = None,
        local: bool = True,
    ) -> bool:
        """Capture a live session's file on the background thread; False when one capture of
        the session is already waiting (it will read the file as it is by then) or one was
        queued less than LIVE_INTERVAL_S ago."""
        key = (agent_id, session_key)
        now = time.monotonic()
        with self._queued_lock:
            if key in self._queued or now - self._last_live.get(key, -LIVE_INTERVAL_S) < (
                LIVE_INTERVAL_S
            ):
                return False
            if len(self._last_live) > 10_000:  # forget old sessions
                self._last_live.clear()
            self._queued.add(key)
            self._last_live[key] = now
        try:
            self._later.submit(self._live, key, harness, transcript_path, project, local)
        except RuntimeError:  # shut down: the session's end will capture it
            with self._queued_lock:
                self._queued.discard(key)
            return False
        return True

    def _live(
        self,
        key: SessionId,
        harness: str,
        transcript_path: str,
        project: str | None,
        local: bool,
    ) -> None:
        with self._queued_lock:
            self._queued.discard(key)
        try:
            self.capture_file(
                key[0], key[1], harness, transcript_path, project=project, local=local
            )
        except Exception as exc:  # a live capture that fails leaves the session as it was
            log.info("live capture of a %s session skipped: %s", harness, exc)

    def wait_live(self) -> None:
        """Block until the live captures queued so far are done (tests, shutdown)."""
        self._later.submit(lambda: None).result()

    def close(self) -> None:
        """Stop the live-capture thread (a queued capture is dropped; session end redoes it)."""
        self._later.shutdown(wait=True, cancel_futures=True)

    def complete(self, agent_id: str, session_key: str) -> bool:
        """Mark the session's row complete (no summary job); False when none was open."""
        scope.check_agent_id(agent_id)
        key = _require_session(session_key)
        with self._db.write() as conn:
            return rows.complete_transcript(conn, agent_id, key)

    def recover(self) -> RecoveryReport:
        """At start: reconcile every canonical file, then complete rows a crash left open."""
        adopted: dict[SessionId, int] = {}
        cut = 0
        with self._lock:
            for canonical in self._known_files():
                sessions, torn = self._reconcile(canonical)
                adopted.update(sessions)
                cut += torn
            with self._db.write() as conn:
                completed = rows.complete_open_since_before(conn, self._opened_at)
                # Rows just adopted were written now, but they too were left by the crash.
                for agent_id, key in adopted:
                    completed += rows.complete_transcript(conn, agent_id, key)
            indexed = self._backfill_turns()
        if adopted or cut or completed or indexed:
            log.info(
                "transcript recovery: %d turns adopted, %d torn bytes cut, %d sessions "
                "completed, %d sessions' turns indexed",
                sum(adopted.values()),
                cut,
                completed,
                indexed,
            )
        return RecoveryReport(sum(adopted.values()), cut, completed)

    def _backfill_turns(self) -> int:
        """Index the turns of sessions retained before the turn index existed (migration
        0014): from the canonical lines, else from the row's rendered content. Sessions settle
        in batches, each in one transaction with its turns; a crash leaves the rest pending."""
        pending = turn_rows.pending_backfill(self._db.reader(), BACKFILL_BATCH)
        if not pending:
            return 0
        lines = self._canonical_sessions({p.harness for p in pending if p.harness})
        done = 0
        while pending:
            with self._db.write() as conn:
                for session in pending:
                    own = _own_lines(
                        lines.get((session.agent_id, session.session_key), []), session.source_id
                    )
                    found = (
                        turn_rows_of([(t.ordinal, t.turn) for t in own])
                        if own
                        else content_turns(session.content)
                    )
                    turn_rows.index_turns(conn, session.agent_id, session.session_key, found)
                    turn_rows.settle_backfill(conn, session.agent_id, session.session_key)
                    done += 1
            pending = turn_rows.pending_backfill(self._db.reader(), BACKFILL_BATCH)
        return done

    def _canonical_sessions(self, harnesses: set[str]) -> dict[SessionId, list[CanonicalTurn]]:
        """Every canonical line of these harnesses, by session (one read of each file)."""
        found: dict[SessionId, list[CanonicalTurn]] = {}
        for harness in sorted(harnesses):
            for turn in CanonicalFile(self._root, harness).tail(0).turns:
                found.setdefault((turn.agent_id, turn.session_key), []).append(turn)
        return found

    def _known_files(self) -> list[CanonicalFile]:
        harnesses = {
            path.parent.parent.name
            for path in (self._root / "memory").glob("*/transcripts/transcript.jsonl")
        }
        return [CanonicalFile(self._root, harness) for harness in sorted(harnesses)]

    def _reconcile(self, canonical: CanonicalFile) -> tuple[dict[SessionId, int], int]:
        """Adopt complete lines past the committed offset and cut a torn rest: the turns
        adopted per session, and the bytes cut."""
        committed = rows.committed_bytes(self._db.reader(), canonical.relative)
        size = canonical.size()
        if size == committed:
            return {}, 0
        if size < committed:  # shrunk behind our back: nothing to adopt, follow the file
            log.warning("%s is shorter than its committed offset", canonical.path)
            with self._db.write() as conn:
                rows.set_committed_bytes(conn, canonical.relative, size)
            return {}, 0
        tail = canonical.tail(committed)
        if tail.torn_bytes:
            canonical.cut(tail.complete_end)
        adopted = self._adopt(tail.turns, canonical.relative, tail.complete_end)
        return adopted, tail.torn_bytes

    def _adopt(
        self, turns: Sequence[CanonicalTurn], relative: str, end: int
    ) -> dict[SessionId, int]:
        by_session: dict[SessionId, list[CanonicalTurn]] = {}
        for turn in turns:
            if turn.source_id is not None:  # an import's line: its importer settles it on rerun
                continue
            by_session.setdefault((turn.agent_id, turn.session_key), []).append(turn)
        adopted: dict[SessionId, int] = {}
        with self._db.write() as conn:
            for (agent_id, key), lines in by_session.items():
                existing = rows.get_transcript(conn, agent_id, key)
                committed = existing.turn_count if existing else 0
                new = sorted((t for t in lines if t.ordinal >= committed), key=lambda t: t.ordinal)
                if not new:
                    continue
                head = existing.content if existing else ""
                extra = render_content([t.turn for t in new])
                content = f"{head}\n\n{extra}" if head else extra
                rows.save_transcript(
                    conn,
                    agent_id=agent_id,
                    session_key=key,
                    harness=new[0].harness,
                    project=new[0].project,
                    content=content,
                    turn_count=new[-1].ordinal + 1,
                    content_hash=_hash(content),
                    complete=False,
                )
                turn_rows.index_turns(
                    conn, agent_id, key, turn_rows_of([(t.ordinal, t.turn) for t in new])
                )
                adopted[(agent_id, key)] = len(new)
            rows.set_committed_bytes(conn, relative, end)
        return adopted

    # -- imports (service/imports/harness.py) -------------------------------------------------

    @contextmanager
    def exclusive(self, harness: str) -> Iterator[CanonicalFile]:
        """The harness's canonical file, reconciled, with every other writer held off: an
        importer appends and commits its rows inside (the order capture keeps, above)."""
        with self._lock:
            canonical = CanonicalFile(self._root, normalize_harness(harness))
            self._reconcile(canonical)
            yield canonical

    def drop_source_lines(self, harness: str, agent_id: str, source_id: str) -> int:
        """Remove a removed source's lines from the harness's canonical file; how many."""
        with self.exclusive(harness) as canonical:
            dropped, size = canonical.drop_source(agent_id, source_id)
            if dropped:
                with self._db.write() as conn:
                    rows.set_committed_bytes(conn, canonical.relative, size)
        return dropped

    # -- reads -----------------------------------------------------------------------------

    def get(self, agent_id: str, session_key: str) -> SessionTranscript:
        scope.check_agent_id(agent_id)
        found = rows.get_transcript(self._db.reader(), agent_id, _require_session(session_key))
        if found is None:
            raise NotFound(f"no transcript for session {session_key!r}", code="session_not_found")
        return found

    def turns(self, agent_id: str, session_key: str) -> list[Turn]:
        """The session's retained turns from its canonical file, in order."""
        found = self.get(agent_id, session_key)
        if not found.harness:
            return []
        lines = CanonicalFile(self._root, found.harness).read_session(agent_id, session_key)
        # An imported session's own lines (a removed source's leftovers, if a crash kept any,
        # are not); lines written without a source tag count when none carry one.
        own = [line for line in lines if line.source_id == found.source_id] or lines
        by_ordinal = {line.ordinal: line.turn for line in own}
        return [by_ordinal[i] for i in sorted(by_ordinal)]

    def sessions(
        self,
        agent_id: str,
        *,
        harness: str | None = None,
        project: str | None = None,
        status: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> rows.TranscriptListing:
        scope.check_agent_id(agent_id)
        if not 1 <= limit <= MAX_LIST_LIMIT or not 0 <= offset <= MAX_OFFSET:
            raise InvalidInput(
                f"limit must be 1..{MAX_LIST_LIMIT} and offset 0..{MAX_OFFSET}", code="bad_paging"
            )
        if status not in (None, "open", "completed", "imported"):
            raise InvalidInput("status must be open, completed or imported", code="bad_status")
        return rows.list_transcripts(
            self._db.reader(),
            agent_id,
            harness=None if harness is None else normalize_harness(harness),
            project=checks.check_text_field("project", project),
            status=status,
            limit=limit,
            offset=offset,
        )

    def search(
        self,
        agent_id: str,
        query: str,
        *,
        session_key: str | None = None,
        project: str | None = None,
        limit: int = 10,
    ) -> list[TranscriptHit]:
        """Transcripts whose text matches `query` (BM25), with a highlighted excerpt (gated:
        secrets redacted, an unsafe excerpt replaced by the withheld marker)."""
        scope.check_agent_id(agent_id)
        if not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise InvalidInput(f"limit must be 1..{MAX_SEARCH_LIMIT}", code="bad_limit")
        match = fts_match_expression(query if isinstance(query, str) else "")
        if match is None:
            return []
        key = None if session_key is None else _require_session(session_key)
        project = checks.check_text_field("project", project)
        hits = rows.search_transcripts(
            self._db.reader(), agent_id, match, session_key=key, project=project, limit=limit
        )
        # Excerpts reach agents (MCP session_search): through the content-safety policy.
        texts = policy_gate(agent_id, "transcript", [(h.session_key, h.excerpt) for h in hits])
        return [replace(hit, excerpt=text) for hit, text in zip(hits, texts, strict=True)]

    def count_matches(self, agent_id: str, query: str, *, project: str | None = None) -> int:
        """How many of the agent's sessions `search` would rank for `query`, without a limit."""
        scope.check_agent_id(agent_id)
        match = fts_match_expression(query if isinstance(query, str) else "")
        if match is None:
            return 0
        project = checks.check_text_field("project", project)
        return rows.count_transcript_matches(self._db.reader(), agent_id, match, project=project)

    def expire_idle(self, idle_before: str | None = None) -> int:
        """TTL: complete open rows not updated since `idle_before` (default: now)."""
        with self._db.write() as conn:
            return rows.complete_open_before(conn, idle_before or utc_now())


def _own_lines(lines: list[CanonicalTurn], source_id: str | None) -> list[CanonicalTurn]:
    """The session's own lines, one per ordinal (as `TranscriptService.turns` picks them)."""
    own = [line for line in lines if line.source_id == source_id] or lines
    by_ordinal = {line.ordinal: line for line in own}
    return [by_ordinal[i] for i in sorted(by_ordinal)]


def default_transcript_roots() -> list[Path]:
    """Where harness transcripts may be read from: home (which holds ~/.claude and ~/.codex),
    the harnesses' own homes when moved (CODEX_HOME, CLAUDE_CONFIG_DIR), and /tmp/signet."""
    roots = [Path.home(), Path("/tmp/signet")]
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR"):
        value = os.environ.get(name)
        if value:
            roots.append(Path(value))
    return roots


def _require_session(session_key: object) -> str:
    if not isinstance(session_key, str) or not session_key.strip():
        raise InvalidInput("sessionKey is required", code="session_required")
    checked = scope.check_session_key(session_key.strip())
    assert checked is not None
    return checked
