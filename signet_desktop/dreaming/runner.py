"""One Dreaming pass: record it, build its window and runbook, run one bounded agent loop.

`PassRunner.begin` takes the agent's pass lock (PostgreSQL: held across daemons) and inserts
the running pass row (the unique index allows one per agent: a second trigger gets
`PassAlreadyRunning`); `run` does the rest, always ends the row, then releases the lock:

1. the evidence window (`dreaming/evidence.py`) and the runbook (`dreaming/runbook.py`) are
   built on a read connection and stored with the exclusions in one short write;
2. a pass with no new evidence and no pending attention ends `completed` with the summary
   `NO_NEW_EVIDENCE` and never calls the provider;
3. otherwise one agent loop over a `ChatProvider`: at most `max_turns` completions and
   `max_tool_calls` tool calls, all within the pass timeout (each request gets what is left
   of it). Every provider call runs outside any write transaction; its usage is recorded as
   it returns; every tool call is recorded in order with arguments, result, status and time;
4. on a final answer the pass completes (consumption rows written, state cleared); a
   provider error (timeout, 429 after retries, garbage) or an exhausted deadline fails it with
   the reason and backs the agent off. Operations applied before a failure stay: the apply
   seam attributed them to the pass as it wrote them.

With `executor: acpx` the provider is a `HarnessAgent`: step 3 is the user's own harness
running the loop (`dreaming/harness_pass.py`), its tool calls reaching this pass's tools
through `/mcp/dream` and recorded the same way (`dreaming/tool_sessions.py`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from signet_desktop.config.models import DreamingConfig
from signet_desktop.domain.dreaming import (
    NO_NEW_EVIDENCE,
    DreamingPass,
    DreamPassFinished,
    DreamPassStarted,
    MutationCounts,
    PassMode,
    PassStatus,
    PassUsage,
    TriggerReason,
)
from signet_desktop.domain.events import DiscardEvents, EventSink
from signet_desktop.domain.ontology import Attention
from signet_desktop.dreaming import scheduler, sources
from signet_desktop.dreaming.evidence import EvidenceWindow, build_window, estimate_tokens
from signet_desktop.dreaming.harness_pass import HarnessFailed, HarnessResult, run_harness
from signet_desktop.dreaming.runbook import Runbook, build_runbook
from signet_desktop.dreaming.tool_sessions import ToolSession, ToolSessions
from signet_desktop.dreaming.tools import (
    GraphReads,
    NoGraph,
    PassTools,
    Seam,
    ToolOutcome,
    result_text,
)
from signet_desktop.inference.errors import ProviderError
from signet_desktop.inference.harness_agent import HarnessAgent
from signet_desktop.inference.types import ChatMessage, ChatProvider, ChatRequest, ToolCall
from signet_desktop.storage import attention as attention_rows
from signet_desktop.storage import dreaming_evidence, dreaming_operations
from signet_desktop.storage import dreaming_passes as passes
from signet_desktop.storage.guard import assert_provider_call_allowed
from signet_desktop.storage.handle import DatabaseHandle

log = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "You are Signet's Dreaming agent. You read one agent's new episodic evidence and"
    " consolidate it into that agent's knowledge graph through the tools you are given."
    " Follow the runbook. Cite exact quotes. Stop calling tools when you are done and answer"
    " with a one-paragraph summary."
)
MAX_SUMMARY_CHARS = 2_000


@dataclass(frozen=True, slots=True)
class PassLimits:
    """The bounds of one pass (from `memory.dreaming`)."""

    timeout_s: float = 1_200.0
    max_turns: int = 40
    max_tool_calls: int = 200
    max_input_tokens: int = 128_000
    max_output_tokens: int = 16_000
    ops_per_request: int = 100
    ops_per_pass: int = 500

    @staticmethod
    def from_config(config: DreamingConfig) -> PassLimits:
        return PassLimits(
            timeout_s=config.timeout_ms / 1000,
            max_turns=config.max_turns,
            max_tool_calls=config.max_tool_calls,
            max_input_tokens=config.max_input_tokens,
            max_output_tokens=config.max_output_tokens,
            ops_per_request=config.max_ops_per_request,
            ops_per_pass=config.max_ops_per_pass,
        )


class PassFailed(Exception):
    """The agent loop cannot go on; the message is the pass's error."""


STOPPING = "cancelled: the daemon is stopping"
CANCELLED_BY_PERSON = "cancelled: a person cancelled the pass"
LOCK_LOST = "cancelled: the pass lock was lost with its database connection"


class Cancellation:
    """Whether a running pass must stop: the daemon stopping, a person cancelling it, or (on
    PostgreSQL) the agent's pass lock lost with its connection, when another daemon may
    already have taken the agent over (`intact`, see storage/dreaming_passes.py)."""

    def __init__(
        self,
        stopping: threading.Event,
        cancelled: threading.Event,
        intact: Callable[[], bool] | None = None,
    ) -> None:
        self.stopping = stopping
        self.cancelled = cancelled
        self._intact = intact
        self.lock_lost = False

    def is_set(self) -> bool:
        if self.stopping.is_set() or self.cancelled.is_set():
            return True
        if self._intact is not None and not self.lock_lost and not self._intact():
            self.lock_lost = True
        return self.lock_lost

    @property
    def summary(self) -> str:
        if self.cancelled.is_set():
            return CANCELLED_BY_PERSON
        return LOCK_LOST if self.lock_lost and not self.stopping.is_set() else STOPPING


def _guarded(
    cancel: threading.Event | Cancellation | None, lock: passes.PassLock | None
) -> threading.Event | Cancellation | None:
    """`cancel`, also set once the pass lock is lost."""
    if lock is None:
        return cancel
    if isinstance(cancel, Cancellation):
        return Cancellation(cancel.stopping, cancel.cancelled, lock.intact)
    return Cancellation(cancel or threading.Event(), threading.Event(), lock.intact)


def _cancelled_summary(cancel: threading.Event | Cancellation | None) -> str:
    return cancel.summary if isinstance(cancel, Cancellation) else STOPPING


SeamFactory = Callable[[str, str], Seam]  # (agent_id, pass_id) -> the bound apply seam
AttentionReads = Callable[[str, str, int], list[dict[str, Any]]]  # (agent, status, limit)


def attention_json(row: Attention) -> dict[str, Any]:
    """An attention record as the tools and the window show it."""
    return {
        "id": row.id,
        "kind": row.kind,
        "subject_ref": row.subject_ref,
        "details": dict(row.details),
        "priority": row.priority,
        "status": row.status,
        "created_at": row.created_at,
    }


class PassRunner:
    """Runs passes over one database; safe to share across threads (one pass per agent)."""

    def __init__(
        self,
        db: DatabaseHandle,
        *,
        config: DreamingConfig,
        seam: SeamFactory,
        attention: AttentionReads | None = None,
        graph: Callable[[str], GraphReads] | None = None,
        workspace: Path | None = None,
        events: EventSink | None = None,
        limits: PassLimits | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._db = db
        self._config = config
        self._seam = seam
        self._attention = attention or self._stored_attention
        self._graph = graph or (lambda agent_id: NoGraph())
        self._workspace = workspace
        self._events: EventSink = events or DiscardEvents()
        self.limits = limits or PassLimits.from_config(config)
        self._now = now
        self._monotonic = monotonic
        # Harness passes: the live passes' tools, and where the daemon serves them (set by the
        # daemon once it listens; None in-process, where a harness pass cannot run).
        self.tool_sessions = ToolSessions()
        self.tools_url: str | None = None
        self.harness_env: dict[str, str] | None = None  # None: the daemon's environment
        self._locks: dict[str, passes.PassLock] = {}  # pass id -> its agent's pass lock
        self._locks_guard = threading.Lock()

    @property
    def harness_pid_dir(self) -> Path | None:
        """Where running harnesses are noted, for start-up recovery after a kill."""
        return None if self._workspace is None else self._workspace / ".daemon" / "harness"

    def _stored_attention(self, agent_id: str, status: str, limit: int) -> list[dict[str, Any]]:
        rows = attention_rows.list_attention(
            self._db.reader(), agent_id, status=status, limit=limit
        )
        return [attention_json(row) for row in rows]

    # -- the pass row ----------------------------------------------------------------------

    def begin(
        self,
        agent_id: str,
        mode: PassMode,
        reason: TriggerReason | None,
        provider: ChatProvider | None = None,
    ) -> str:
        """Take the agent's pass lock and insert the running pass row; PassAlreadyRunning when
        the agent has one (here, or on another daemon: the lock is held). `run` releases it."""
        reader = self._db.reader()
        lock = passes.take_pass_lock(reader, getattr(self._db, "url", None), agent_id)
        if lock is None:
            raise passes.PassAlreadyRunning(agent_id, passes.running_pass_id(reader, agent_id))
        try:
            with self._db.write() as conn:
                pass_id = passes.create_pass(
                    conn,
                    agent_id=agent_id,
                    mode=mode,
                    trigger_reason=reason,
                    provider=None if provider is None else provider.name,
                    model=None if provider is None else provider.model,
                    now=scheduler.iso(self._now()),
                )
        except BaseException:
            lock.release()
            raise
        with self._locks_guard:
            self._locks[pass_id] = lock
        self._events.publish(
            DreamPassStarted(agent_id=agent_id, pass_id=pass_id, mode=mode, trigger_reason=reason)
        )
        return pass_id

    def run(
        self,
        agent_id: str,
        pass_id: str,
        provider: ChatProvider | None,
        *,
        cancel: threading.Event | Cancellation | None = None,
    ) -> DreamingPass:
        """Run a begun pass to its end and return the finished row (never raises for it);
        the agent's pass lock is released once the row is finished."""
        with self._locks_guard:
            lock = self._locks.pop(pass_id, None)
        try:
            return self._run(agent_id, pass_id, provider, _guarded(cancel, lock))
        finally:
            if lock is not None:
                lock.release()

    def _run(
        self,
        agent_id: str,
        pass_id: str,
        provider: ChatProvider | None,
        cancel: threading.Event | Cancellation | None,
    ) -> DreamingPass:
        record = passes.get_pass(self._db.reader(), agent_id, pass_id)
        if record is None or record.status != "running":
            raise ValueError(f"pass {pass_id} is not running")
        mode = record.mode
        status: PassStatus = "completed"
        summary: str | None = None
        error: str | None = None
        window: EvidenceWindow | None = None
        try:
            window, runbook = self._prepare(agent_id, pass_id, mode)
            if window.empty:
                summary = NO_NEW_EVIDENCE
            elif provider is None:
                raise PassFailed("no inference provider is configured for Dreaming")
            elif isinstance(provider, HarnessAgent):
                tools = self._tools(agent_id, pass_id, window, runbook)
                summary, status = self._harness(agent_id, pass_id, provider, window, tools, cancel)
            else:
                tools = self._tools(agent_id, pass_id, window, runbook)
                summary, status = self._loop(agent_id, pass_id, provider, window, tools, cancel)
        except (ProviderError, PassFailed, HarnessFailed) as exc:
            status, error = "failed", str(exc)
        except Exception as exc:  # a bug or a database error: the pass still ends
            log.exception("Dreaming pass %s failed", pass_id)
            status, error = "failed", f"{type(exc).__name__}: {exc}"
        return self._finish(agent_id, pass_id, mode, status, summary, error, window)

    # -- steps -----------------------------------------------------------------------------

    def _prepare(
        self, agent_id: str, pass_id: str, mode: PassMode
    ) -> tuple[EvidenceWindow, Runbook]:
        conn = self._db.reader()
        reader = sources.SourceReader(conn, agent_id, self._workspace)
        attention = tuple(self._attention(agent_id, "pending", 100))
        window = build_window(
            conn, reader, max_input_tokens=self.limits.max_input_tokens, attention=attention
        )
        previous = _previous_runbook(conn, agent_id, pass_id)
        focus = scheduler.focus_for(mode, None if previous is None else previous.get("focus"))
        runbook = build_runbook(
            mode,
            focus,
            per_request=self.limits.ops_per_request,
            per_pass=self.limits.ops_per_pass,
            previous=previous,
        )
        with self._db.write() as wconn:
            passes.set_context(
                wconn, pass_id, evidence_window=window.record(), runbook=runbook.record()
            )
            passes.record_exclusions(wconn, agent_id, pass_id, window.exclusions)
            dreaming_evidence.record_unsafe(
                wconn, agent_id, pass_id, window.unsafe, scheduler.iso(self._now())
            )
        return window, runbook

    def _tools(
        self, agent_id: str, pass_id: str, window: EvidenceWindow, runbook: Runbook
    ) -> PassTools:
        def store_runbook(record: dict[str, Any]) -> None:
            with self._db.write() as conn:
                passes.set_context(conn, pass_id, runbook=record)

        return PassTools(
            agent_id=agent_id,
            pass_id=pass_id,
            reader=lambda: sources.SourceReader(self._db.reader(), agent_id, self._workspace),
            window=window,
            runbook=runbook,
            seam=self._seam(agent_id, pass_id),
            attention=lambda status, limit: self._attention(agent_id, status, limit),
            graph=self._graph(agent_id),
            max_ops_per_request=self.limits.ops_per_request,
            max_ops_per_pass=self.limits.ops_per_pass,
            on_runbook=store_runbook,
            search=lambda terms, limit, kind: dreaming_evidence.search_sources(
                self._db.reader(), agent_id, terms, limit, kind
            ),
        )

    def _loop(
        self,
        agent_id: str,
        pass_id: str,
        provider: ChatProvider,
        window: EvidenceWindow,
        tools: PassTools,
        cancel: threading.Event | Cancellation | None,
    ) -> tuple[str, PassStatus]:
        limits = self.limits
        deadline = self._monotonic() + limits.timeout_s
        messages: list[ChatMessage] = [
            ChatMessage.system(SYSTEM_PROMPT + "\n\n" + tools.runbook.prompt_text()),
            ChatMessage.user("New evidence for this pass:\n\n" + window.prompt_text()),
        ]
        calls = 0
        for _turn in range(limits.max_turns):
            if cancel is not None and cancel.is_set():
                return _cancelled_summary(cancel), "cancelled"
            left = deadline - self._monotonic()
            if left <= 0:
                raise PassFailed(f"pass timeout: {limits.timeout_s:g} s elapsed")
            _fit(messages, limits.max_input_tokens)
            request = ChatRequest(
                tuple(messages),
                tools=tools.specs(),
                max_output_tokens=limits.max_output_tokens,
                timeout_s=left,
            )
            assert_provider_call_allowed("Dreaming provider call")
            response = provider.complete(request)
            self._record_usage(pass_id, response.usage, response.cost_usd)
            messages.append(response.as_message())
            if not response.tool_calls:
                return _summary(tools.runbook, response.text), "completed"
            for call in response.tool_calls:
                if calls >= limits.max_tool_calls:
                    return (
                        _summary(tools.runbook, "")
                        + f" (stopped at the {limits.max_tool_calls}-tool-call bound)",
                        "completed",
                    )
                calls += 1
                started = self._monotonic()
                outcome = tools.call(call)
                elapsed_ms = int((self._monotonic() - started) * 1000)
                self._record_call(agent_id, pass_id, call, outcome, elapsed_ms)
                messages.append(ChatMessage.tool_result(call, result_text(outcome)))
        return (
            _summary(tools.runbook, "") + f" (stopped at the {limits.max_turns}-turn bound)",
            "completed",
        )

    def _record_call(
        self, agent_id: str, pass_id: str, call: ToolCall, outcome: ToolOutcome, elapsed_ms: int
    ) -> None:
        """Append one tool call to the pass's trace (and what its writers did)."""
        with self._db.write() as conn:
            passes.record_tool_call(
                conn,
                agent_id=agent_id,
                pass_id=pass_id,
                tool_call_id=call.id,
                tool_name=call.name,
                input_value=outcome.arguments,
                output_value=outcome.output,
                status=outcome.status,
                error=outcome.error,
                duration_ms=elapsed_ms,
            )
            if outcome.mutations != MutationCounts():
                passes.add_mutations(conn, pass_id, outcome.mutations)

    def _harness(
        self,
        agent_id: str,
        pass_id: str,
        agent: HarnessAgent,
        window: EvidenceWindow,
        tools: PassTools,
        cancel: threading.Event | Cancellation | None,
    ) -> tuple[str, PassStatus]:
        """The pass run by the user's harness, its tools served at `tools_url` meanwhile."""
        if self.tools_url is None:
            raise PassFailed(
                f"{agent.label} reaches the pass's tools through the daemon's /mcp/dream, "
                "which only a running daemon serves"
            )

        def record(call: ToolCall, outcome: ToolOutcome, elapsed_ms: int) -> None:
            self._record_call(agent_id, pass_id, call, outcome, elapsed_ms)

        session = ToolSession(tools, record, max_calls=self.limits.max_tool_calls)
        token = self.tool_sessions.open(session)
        try:
            assert_provider_call_allowed("Dreaming harness pass")
            result = run_harness(
                agent,
                system_prompt=SYSTEM_PROMPT + "\n\n" + tools.runbook.prompt_text(),
                prompt="New evidence for this pass:\n\n" + window.prompt_text(),
                tools_url=self.tools_url,
                token=token,
                timeout_s=self.limits.timeout_s,
                max_turns=self.limits.max_turns,
                refuse_tool=lambda name, arguments: session.refuse(
                    name, arguments, f"{name} is not a tool of this pass; only Dreaming's are"
                ),
                cancel=cancel,
                pid_dir=self.harness_pid_dir,
                env=self.harness_env,
            )
        finally:
            self.tool_sessions.close(token)  # a call after this is refused: the pass is over
        self._record_harness(pass_id, result)
        if result.status == "cancelled":
            return _cancelled_summary(cancel), "cancelled"
        return _summary(tools.runbook, result.summary), "completed"

    def _record_harness(self, pass_id: str, result: HarnessResult) -> None:
        with self._db.write() as conn:
            passes.add_usage(conn, pass_id, result.usage)
            if result.model:
                passes.set_model(conn, pass_id, result.model)

    def _record_usage(self, pass_id: str, usage: Any, cost: float | None) -> None:
        with self._db.write() as conn:
            passes.add_usage(
                conn,
                pass_id,
                PassUsage(
                    usage.input_tokens,
                    usage.output_tokens,
                    usage.cache_read,
                    usage.cache_write,
                    cost,
                ),
            )

    def _finish(
        self,
        agent_id: str,
        pass_id: str,
        mode: PassMode,
        status: PassStatus,
        summary: str | None,
        error: str | None,
        window: EvidenceWindow | None,
    ) -> DreamingPass:
        now = self._now()
        with self._db.write() as conn:
            passes.finish_pass(
                conn, pass_id, status=status, summary=summary, error=error, now=scheduler.iso(now)
            )
            seen = dreaming_operations.status_counts(conn, agent_id, pass_id)
            if seen:  # the seam's own per-operation records are the authority
                passes.set_mutations(conn, pass_id, mutation_counts(seen))
            state = passes.get_state(conn, agent_id)
            if status == "completed":
                if window is not None:
                    dreaming_evidence.record_consumption(
                        conn, agent_id, pass_id, window.consumption(), scheduler.iso(now)
                    )
                _, remaining = dreaming_evidence.pending_tokens(conn, agent_id)
                state = scheduler.after_success(state, pass_id, mode, remaining, now)
            elif status == "failed":
                state = scheduler.after_failure(self._config, state, error or "failed", now)
            passes.put_state(conn, state, scheduler.iso(now))
            finished = passes.get_pass(conn, agent_id, pass_id)
        assert finished is not None
        self._events.publish(
            DreamPassFinished(
                agent_id=agent_id,
                pass_id=pass_id,
                mode=mode,
                status=finished.status,
                applied=finished.mutations.applied,
                skipped=finished.mutations.skipped,
                failed=finished.mutations.failed,
                error=finished.error,
            )
        )
        return finished


def mutation_counts(seen: dict[str, int]) -> MutationCounts:
    """Per-status operation counts as pass counts (a proposal wrote nothing to the graph)."""
    return MutationCounts(
        seen.get("applied", 0),
        seen.get("skipped", 0) + seen.get("proposed", 0),
        seen.get("failed", 0),
    )


ELIDED = "[earlier tool result elided to stay within the input budget; call the tool again]"


def _fit(messages: list[ChatMessage], max_tokens: int) -> int:
    """Elide the oldest tool results until the conversation fits `max_tokens` (estimated);
    the system prompt, the window and the model's own turns are kept. How many were elided."""
    total = sum(estimate_tokens(m.content) for m in messages)
    elided = 0
    for index, message in enumerate(messages):
        if total <= max_tokens:
            break
        if message.role != "tool" or message.content == ELIDED:
            continue
        total -= estimate_tokens(message.content) - estimate_tokens(ELIDED)
        messages[index] = ChatMessage(
            "tool", ELIDED, tool_call_id=message.tool_call_id, name=message.name
        )
        elided += 1
    return elided


def _summary(runbook: Runbook, text: str) -> str:
    chosen = runbook.summary or text.strip() or "pass finished without a summary"
    return chosen[:MAX_SUMMARY_CHARS]


def _previous_runbook(conn: Any, agent_id: str, pass_id: str) -> dict[str, Any] | None:
    for earlier in passes.list_passes(conn, agent_id, status="completed", limit=5):
        if earlier.id != pass_id and earlier.runbook is not None:
            return earlier.runbook
    return None
