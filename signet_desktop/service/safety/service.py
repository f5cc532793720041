"""The content-safety capability: the gate every prompt-facing text passes, and its ledger.

`prompt_texts` turns retained text into what may enter a prompt: secrets redacted when the
policy finds it eligible, `WITHHELD_MARKER` when not. It reads the ledger
(`memory_content_safety`) and trusts a decision only when its policy version and content hash
match the text in hand; otherwise it scans in memory (deterministic, ~tens of µs) and writes
nothing — read paths never write. Decisions are recorded by the background side: memories
named by `memory.*` events are queued and recorded within moments of their write
(`record_queued`), and `scan_pending` sweeps whatever has no decision of the current policy
version (a version bump rescans everything, in bounded batches). The evidence is never
changed. The worker that drives both lives in `service/safety/worker.py`.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from signet_desktop.domain import scope
from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.events import Event, MemoryCreated, MemoryRecovered, MemoryUpdated
from signet_desktop.domain.memory import utc_now
from signet_desktop.safety.policy import (
    POLICY_VERSION,
    WITHHELD_MARKER,
    SafetyVerdict,
    Status,
    scan,
)
from signet_desktop.safety.policy import text_hash as policy_text_hash
from signet_desktop.safety.redact import redact_secrets
from signet_desktop.storage import content_safety, memories
from signet_desktop.storage.content_safety import SafetyDecision, ScanItem
from signet_desktop.storage.handle import DatabaseHandle

log = logging.getLogger(__name__)

SOURCE_KINDS = content_safety.SOURCE_KINDS
QUEUE_LIMIT = 10_000  # queued memory ids beyond this are left to the sweep
RECORD_BATCH = 200  # decisions per write transaction

PromptGate = Callable[[str, str, Sequence[tuple[str, str]]], list[str]]


@dataclass(frozen=True, slots=True)
class SafetyPolicy:
    """A policy version and its scan function (tests swap in a bumped version)."""

    version: str
    scan: Callable[[str], SafetyVerdict]


DEFAULT_POLICY = SafetyPolicy(POLICY_VERSION, scan)


@dataclass(frozen=True, slots=True)
class SafetyStatus:
    """One agent's ledger: decisions of the current version per status, and what waits."""

    agent_id: str
    policy_version: str
    counts: Mapping[str, int]
    reasons: Mapping[str, int]  # decisions per reason at the current version
    stale: int  # decisions of an older policy version
    pending: int  # memories, transcripts, artifacts, summaries without one


def gated_text(text: str, verdict: SafetyVerdict) -> str:
    """What `text` may look like in a prompt under `verdict`."""
    return redact_secrets(text) if verdict.context_eligible else WITHHELD_MARKER


def policy_gate(agent_id: str, source_kind: str, items: Sequence[tuple[str, str]]) -> list[str]:
    """The gate without a ledger: the current policy scanned in memory (same answers)."""
    del agent_id, source_kind
    return [gated_text(text, scan(text)) for _, text in items]


def _check_kind(source_kind: str) -> None:
    if source_kind not in SOURCE_KINDS:
        raise InvalidInput(
            f"source_kind must be one of {', '.join(SOURCE_KINDS)}", code="source_kind_invalid"
        )


class ContentSafetyService:
    """Gate prompt-facing text; record and report content-safety decisions per agent."""

    def __init__(self, db: DatabaseHandle, policy: SafetyPolicy = DEFAULT_POLICY) -> None:
        self._db = db
        self._policy = policy
        self._queue: deque[tuple[str, str]] = deque()
        self._lock = threading.Lock()
        # Where each (kind, agent) sweep goes on from: rowids only grow, so a batch never
        # walks the rows the sweep already decided (at 100k memories that was a quadratic
        # walk of the whole table).
        self._sweep_after: dict[tuple[str, str | None], int] = {}
        self.wake = threading.Event()  # set when a memory was queued (the worker waits on it)

    @property
    def policy(self) -> SafetyPolicy:
        return self._policy

    def set_policy(self, policy: SafetyPolicy) -> None:
        """Use another policy from now on; decisions of the old version become pending."""
        self._policy = policy
        self._sweep_after.clear()  # every row needs the new version's decision
        self.wake.set()

    # -- the gate (read path: never writes) ------------------------------------------------

    def verdicts(
        self, agent_id: str, source_kind: str, items: Sequence[tuple[str, str]]
    ) -> list[SafetyVerdict]:
        """The verdict for each (source_id, text): a matching ledger decision, else a scan."""
        scope.check_agent_id(agent_id)
        _check_kind(source_kind)
        if not items:
            return []
        policy = self._policy
        ids = [source_id for source_id, _ in items]
        decisions = content_safety.get_decisions(self._db.reader(), agent_id, source_kind, ids)
        found: list[SafetyVerdict] = []
        for source_id, text in items:
            decision = decisions.get(source_id)
            if (
                decision is not None
                and decision.policy_version == policy.version
                and decision.content_hash == policy_text_hash(text)
            ):
                found.append(_verdict_of(decision))
            else:
                found.append(policy.scan(text))
        return found

    def prompt_texts(
        self, agent_id: str, source_kind: str, items: Sequence[tuple[str, str]]
    ) -> list[str]:
        """Each (source_id, text) as it may enter a prompt: redacted, or the withheld marker."""
        verdicts = self.verdicts(agent_id, source_kind, items)
        return [gated_text(text, v) for (_, text), v in zip(items, verdicts, strict=True)]

    # -- recording (background side) -------------------------------------------------------

    def record(self, items: Sequence[ScanItem]) -> int:
        """Scan `items` with the current policy and store the decisions (one transaction)."""
        if not items:
            return 0
        policy = self._policy  # one version for the whole batch, read once
        now = utc_now()
        decisions = []
        for item in items:
            verdict = policy.scan(item.text)
            decisions.append(
                SafetyDecision(
                    agent_id=item.agent_id,
                    source_kind=item.source_kind,
                    source_id=item.source_id,
                    status=verdict.status,
                    context_eligible=verdict.context_eligible,
                    reasons=verdict.reasons,
                    policy_version=policy.version,
                    content_hash=policy_text_hash(item.text),
                    scanned_at=now,
                )
            )
        with self._db.write() as conn:
            return content_safety.record_decisions(conn, decisions)

    def on_event(self, event: Event) -> None:
        """Bus handler: a created, changed or recovered memory is queued for its decision."""
        if not isinstance(event, MemoryCreated | MemoryUpdated | MemoryRecovered):
            return
        if event.agent_id is None:
            return
        with self._lock:
            if len(self._queue) < QUEUE_LIMIT:
                self._queue.append((event.agent_id, event.memory_id))
        self.wake.set()

    def queued(self) -> int:
        with self._lock:
            return len(self._queue)

    def record_queued(self, limit: int = RECORD_BATCH) -> int:
        """Record decisions for up to `limit` queued memories; how many were recorded."""
        with self._lock:
            taken = [self._queue.popleft() for _ in range(min(limit, len(self._queue)))]
        if not taken:
            return 0
        by_agent: dict[str, list[str]] = {}
        for agent_id, memory_id in dict.fromkeys(taken):
            by_agent.setdefault(agent_id, []).append(memory_id)
        reader = self._db.reader()
        items: list[ScanItem] = []
        for agent_id, ids in by_agent.items():
            live = memories.get_memories(reader, agent_id, ids)  # one query; forgotten: absent
            items.extend(ScanItem(agent_id, "memory", i, live[i].content) for i in ids if i in live)
        return self.record(items)

    def scan_pending(self, agent_id: str | None, limit: int) -> int:
        """Record decisions for up to `limit` items without a current one (memories first)."""
        if agent_id is not None:
            scope.check_agent_id(agent_id)
        if limit < 1:
            raise InvalidInput("limit must be at least 1", code="limit_invalid")
        version = self._policy.version
        done = 0
        for kind in content_safety.PENDING_KINDS:
            key = (kind, agent_id)
            while done < limit:
                batch = min(RECORD_BATCH, limit - done)
                items, last = content_safety.pending_items(
                    self._db.reader(), kind, agent_id, version, batch, self._sweep_after.get(key, 0)
                )
                done += self.record(items) if items else 0
                if len(items) < batch:  # the end of the table: the next sweep starts over
                    self._sweep_after.pop(key, None)
                    break
                self._sweep_after[key] = last
        return done

    # -- reporting -------------------------------------------------------------------------

    def status(self, agent_id: str) -> SafetyStatus:
        """Counts per status at the current version, stale decisions and pending items."""
        scope.check_agent_id(agent_id)
        version = self._policy.version
        reader = self._db.reader()
        pending = sum(
            content_safety.pending_count(reader, kind, agent_id, version)
            for kind in content_safety.PENDING_KINDS
        )
        return SafetyStatus(
            agent_id=agent_id,
            policy_version=version,
            counts=content_safety.status_counts(reader, agent_id, version),
            reasons=content_safety.reason_counts(reader, agent_id, version),
            stale=content_safety.stale_count(reader, agent_id, version),
            pending=pending,
        )


def _verdict_of(decision: SafetyDecision) -> SafetyVerdict:
    """A stored decision as a verdict (the table's CHECKs keep status and eligibility apart)."""
    status: Status = _STATUSES.get(decision.status, "blocked")
    return SafetyVerdict(status, decision.context_eligible and status == "clean", decision.reasons)


_STATUSES: dict[str, Status] = {"clean": "clean", "tainted": "tainted", "blocked": "blocked"}
