"""The Dreaming capability (`service.dreaming`): trigger, inspect and schedule passes.

`trigger` validates the agent and mode, resolves the inference provider (no provider: 503
`inference_not_configured` naming the key to set), inserts the running pass (one per agent:
409 `pass_running`) and runs it on a background thread; it answers with the pass id at once.
Manual triggers work whether or not `memory.dreaming.enabled` is set (that flag governs the
scheduler). `check_once` is the worker's scheduled sweep over every known agent
(`dreaming/scheduler.py` decides). `recover` marks passes a killed daemon left `running` as
failed with error "interrupted"; the operations they applied stay, attributed to them, and
their counts are recomputed from the seam's per-operation records. Reads are agent-scoped: an
agent never sees another's passes.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from signet_desktop.config.models import DreamingConfig
from signet_desktop.domain import scope
from signet_desktop.domain.dreaming import (
    INTERRUPTED,
    PASS_MODES,
    PASS_STATUSES,
    DreamingPass,
    DreamingStatus,
    PassDetail,
    PassMode,
    TriggerReason,
)
from signet_desktop.domain.errors import Conflict, InvalidInput, NotFound, Unavailable
from signet_desktop.domain.events import EventSink
from signet_desktop.dreaming import scheduler
from signet_desktop.dreaming.apply import PassSeam
from signet_desktop.dreaming.apply_checks import ApplyCaps
from signet_desktop.dreaming.graph_reads import StoredGraph
from signet_desktop.dreaming.harness_pass import kill_leftovers
from signet_desktop.dreaming.runner import Cancellation, PassRunner, mutation_counts
from signet_desktop.dreaming.scheduler import AgentFacts, Decision, Pressure
from signet_desktop.dreaming.tool_sessions import ToolSessions
from signet_desktop.inference.errors import ProviderNotConfigured
from signet_desktop.inference.harness_agent import HarnessAgent
from signet_desktop.inference.types import ChatProvider
from signet_desktop.queue import jobs
from signet_desktop.service.dreaming.pending_cache import PendingTokens
from signet_desktop.storage import attention, dreaming_evidence, dreaming_operations
from signet_desktop.storage import dreaming_passes as passes
from signet_desktop.storage.dialect import is_postgres
from signet_desktop.storage.handle import DatabaseHandle

log = logging.getLogger(__name__)

MAX_LIST = 200
ProviderFactory = Callable[[], ChatProvider]  # raises ProviderNotConfigured


def load_per_cpu() -> float:
    """The 1-minute load average per CPU (0 where the platform has none)."""
    try:
        return os.getloadavg()[0] / max(1, os.cpu_count() or 1)
    except (AttributeError, OSError):
        return 0.0


def _not_configured(reason: str) -> Unavailable:
    return Unavailable(
        f"Dreaming needs an inference provider: {reason}",
        code="inference_not_configured",
        details={"key": "inference.workloads.memoryExtraction"},
    )


class DreamingService:
    """Dreaming passes for every agent scope (one running pass per agent)."""

    def __init__(
        self,
        db: DatabaseHandle,
        config: DreamingConfig,
        runner: PassRunner,
        *,
        provider: ProviderFactory,
        load: Callable[[], float] = load_per_cpu,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._db = db
        self.config = config
        self._runner = runner
        self._provider = provider
        self._load = load
        self._now = now
        self._lock = threading.Lock()
        self._pending = PendingTokens()
        self._recovered = False
        self._threads: dict[str, threading.Thread] = {}
        self._cancels: dict[str, threading.Event] = {}  # a person's cancel, per running pass
        self.cancel = threading.Event()

    # -- harness passes ----------------------------------------------------------------------

    @property
    def tool_sessions(self) -> ToolSessions:
        """The live harness passes whose tools `/mcp/dream` serves."""
        return self._runner.tool_sessions

    def serve_tools_at(self, url: str, env: dict[str, str] | None = None) -> None:
        """Where a harness reaches a pass's tools (the daemon's own `/mcp/dream`), set once
        the daemon listens; `env` is the harness's environment (None: the daemon's)."""
        self._runner.tools_url = url
        self._runner.harness_env = env

    # -- start-up --------------------------------------------------------------------------

    def recover(self) -> int:
        """Passes left running by a killed daemon become failed ("interrupted"), and the
        harnesses they ran are killed; how many passes.

        SQLite: once, at the first sweep (the workspace lock: no other process runs passes).
        PostgreSQL: at every sweep, since any daemon sharing the database may die at any time,
        and only passes whose agent's pass lock is free (a held lock is a live pass)."""
        with self._lock:
            shared = is_postgres(self._db.reader())
            if self._recovered and not shared:
                return 0
            if not self._recovered:
                pid_dir = self._runner.harness_pid_dir
                if pid_dir is not None and kill_leftovers(pid_dir):
                    log.warning("killed the harness processes a stopped daemon left running")
            self._recovered = True
            found = self._interrupt_orphans() if shared else self._interrupt(None)
        for stale in found:
            log.warning("Dreaming pass %s was interrupted by a restart", stale.id)
        return len(found)

    def _interrupt(self, agent_id: str | None) -> list[DreamingPass]:
        with self._db.write() as conn:
            now = scheduler.iso(self._now())
            found = passes.interrupt_running(conn, INTERRUPTED, now, agent_id=agent_id)
            for stale in found:
                counts = dreaming_operations.status_counts(conn, stale.agent_id, stale.id)
                if counts:
                    passes.set_mutations(conn, stale.id, mutation_counts(counts))
        return found

    def _interrupt_orphans(self) -> list[DreamingPass]:
        """PostgreSQL: each running pass whose agent's lock can be taken is a dead daemon's;
        it is failed while the lock is held, so no new pass of that agent starts meanwhile."""
        found: list[DreamingPass] = []
        reader = self._db.reader()
        for agent_id in passes.running_agents(reader):
            lock = passes.take_pass_lock(reader, getattr(self._db, "url", None), agent_id)
            if lock is None:
                continue  # a live daemon (or a thread here) is running it
            try:
                found += self._interrupt(agent_id)
            finally:
                lock.release()
        return found

    # -- triggering ------------------------------------------------------------------------

    def provider(self) -> ChatProvider:
        """The configured provider; Unavailable (`inference_not_configured`) without one."""
        try:
            return self._provider()
        except ProviderNotConfigured as exc:
            raise _not_configured(exc.reason) from exc

    def trigger(self, agent_id: str, mode: str = "incremental") -> str:
        """Begin a manual pass and run it in the background; the pass id."""
        scope.check_agent_id(agent_id)
        if mode not in PASS_MODES:
            raise InvalidInput(f"mode must be one of {', '.join(PASS_MODES)}", code="mode_invalid")
        provider = self.provider()
        self.recover()
        pass_id = self._begin(agent_id, mode, "manual", provider)
        thread = threading.Thread(
            target=self._run_background,
            args=(agent_id, pass_id, provider),
            name=f"dream-{pass_id[:8]}",
        )
        with self._lock:
            self._threads[pass_id] = thread
        thread.start()
        return pass_id

    def _begin(
        self,
        agent_id: str,
        mode: PassMode,
        reason: TriggerReason,
        provider: ChatProvider,
    ) -> str:
        try:
            return self._runner.begin(agent_id, mode, reason, provider)
        except passes.PassAlreadyRunning as exc:
            raise Conflict(
                f"a Dreaming pass is already running for agent {agent_id!r}",
                code="pass_running",
                details={"pass_id": exc.pass_id},
            ) from exc

    def _run(
        self,
        agent_id: str,
        pass_id: str,
        provider: ChatProvider,
        cancel: threading.Event | None = None,
    ) -> DreamingPass:
        mine = threading.Event()
        with self._lock:
            self._cancels[pass_id] = mine
        try:
            return self._runner.run(
                agent_id, pass_id, provider, cancel=Cancellation(cancel or self.cancel, mine)
            )
        finally:
            with self._lock:
                self._threads.pop(pass_id, None)
                self._cancels.pop(pass_id, None)

    def _run_background(self, agent_id: str, pass_id: str, provider: ChatProvider) -> None:
        try:
            self._run(agent_id, pass_id, provider)
        except Exception as exc:
            if not self.cancel.is_set():
                raise
            # Closing past its wait: the database may be gone; the next start's recovery
            # marks the pass interrupted.
            log.info("Dreaming pass %s abandoned at shutdown (%s)", pass_id, exc)

    def cancel_pass(self, agent_id: str, pass_id: str) -> None:
        """Ask one running pass to stop (it ends `cancelled`; a harness is killed at once,
        an HTTP provider's loop stops before its next turn). Operations applied stay."""
        scope.check_agent_id(agent_id)
        found = passes.get_pass(self._db.reader(), agent_id, pass_id)
        if found is None:
            raise NotFound(f"no Dreaming pass {pass_id!r}", code="not_found")
        with self._lock:
            event = self._cancels.get(pass_id)
        if found.status != "running" or event is None:
            raise Conflict(
                f"pass {pass_id} is not running (it is {found.status})", code="pass_not_running"
            )
        event.set()

    def wait(self, pass_id: str, timeout: float = 30.0) -> bool:
        """Wait for a background pass of this process to end (tests, shutdown)."""
        with self._lock:
            thread = self._threads.get(pass_id)
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def close(self, timeout: float = 0.5) -> None:
        """Ask running passes to stop (they end `cancelled` between turns) and wait a bit."""
        self.cancel.set()
        with self._lock:
            threads = list(self._threads.values())
        for thread in threads:
            thread.join(timeout)

    # -- the schedule ----------------------------------------------------------------------

    def _facts(self, agent_id: str) -> AgentFacts:
        conn = self._db.reader()
        sources, tokens = self._pending.read(conn, agent_id)
        last = passes.list_passes(conn, agent_id, limit=1)
        truncated = bool(
            last
            and last[0].status == "completed"
            and (last[0].evidence_window or {}).get("truncated")
        )
        state = passes.get_state(conn, agent_id)
        pending = attention.list_attention(conn, agent_id, status="pending", limit=1_000)
        since = state.last_pass_at
        return AgentFacts(
            state=state,
            pending_sources=sources,
            pending_tokens=tokens,
            pending_attention=attention.count_pending(conn, agent_id),
            fresh_attention=sum(1 for a in pending if since is None or a.updated_at > since),
            running=passes.running_pass_id(conn, agent_id) is not None,
            last_window_truncated=truncated,
        )

    def _pressure(self) -> Pressure:
        pending = jobs.counts(self._db.reader()).get("pending", 0)
        return Pressure(pending_jobs=pending, load_per_cpu=self._load())

    def decisions(self) -> list[Decision]:
        """The scheduler's decision for every known agent now (reads only)."""
        now, pressure = self._now(), self._pressure()
        return [
            scheduler.decide(self.config, self._facts(agent), pressure, now)
            for agent in dreaming_evidence.evidence_agents(self._db.reader())
        ]

    def check_once(self, stop: threading.Event | None = None) -> list[DreamingPass]:
        """The scheduled sweep: run every due pass here, one after another (`stop` set: a
        running pass ends `cancelled` at its next turn and no further one starts)."""
        self.recover()
        if not self.config.enabled:
            return []
        try:
            provider = self.provider()
        except Unavailable:
            return []
        done: list[DreamingPass] = []
        for decision in self.decisions():
            if not decision.run or decision.reason is None:
                continue
            if self.cancel.is_set() or (stop is not None and stop.is_set()):
                break
            try:
                pass_id = self._begin(decision.agent_id, decision.mode, decision.reason, provider)
            except Conflict:
                continue  # a manual trigger won the race
            done.append(self._run(decision.agent_id, pass_id, provider, stop))
        return done

    # -- reads -----------------------------------------------------------------------------

    def status(self, agent_id: str) -> DreamingStatus:
        """Whether the agent's Dreaming is running, due or idle, and why."""
        scope.check_agent_id(agent_id)
        facts = self._facts(agent_id)
        configured, reason = True, None
        provider: ChatProvider | None = None
        try:
            provider = self._provider()
        except ProviderNotConfigured as exc:
            configured, reason = False, exc.reason
        harness = provider if isinstance(provider, HarnessAgent) else None
        running = passes.running_pass_id(self._db.reader(), agent_id)
        idle, detail, until = self._idle(facts, configured, reason)
        last = passes.list_passes(self._db.reader(), agent_id, limit=1)
        return DreamingStatus(
            agent_id=agent_id,
            enabled=self.config.enabled,
            inference_configured=configured,
            inference_reason=reason,
            running_pass_id=running,
            idle=idle,
            detail=detail,
            until=until,
            pending_sources=facts.pending_sources,
            pending_tokens=facts.pending_tokens,
            pending_attention=facts.pending_attention,
            token_threshold=self.config.token_threshold,
            state=facts.state,
            last_pass=last[0] if last else None,
            executor=None if provider is None else "acpx" if harness else "http",
            runner=None if provider is None else provider.name,
            runner_model=None if provider is None else provider.model,
            harness=None if harness is None else harness.binary,
        )

    def _idle(
        self, facts: AgentFacts, configured: bool, reason: str | None
    ) -> tuple[str | None, str, str | None]:
        if facts.running:
            return None, "a pass is running", None
        if not self.config.enabled:
            return "disabled", "scheduled passes are off (memory.dreaming.enabled: false)", None
        if not configured:
            return "no-inference", f"no inference provider: {reason}", None
        decision = scheduler.decide(self.config, facts, self._pressure(), self._now())
        if decision.run:
            return None, f"due ({decision.reason}); the next check starts it", None
        return decision.idle, decision.detail, decision.until

    def list_passes(
        self, agent_id: str, *, status: str | None = None, limit: int = 50
    ) -> list[DreamingPass]:
        """The agent's passes, newest first."""
        scope.check_agent_id(agent_id)
        if status is not None and status not in PASS_STATUSES:
            raise InvalidInput(
                f"status must be one of {', '.join(PASS_STATUSES)}", code="status_invalid"
            )
        if not 1 <= limit <= MAX_LIST:
            raise InvalidInput(f"limit must be between 1 and {MAX_LIST}", code="limit_invalid")
        return passes.list_passes(self._db.reader(), agent_id, status=status, limit=limit)

    def get_pass(self, agent_id: str, pass_id: str) -> PassDetail:
        """One pass of the agent with its trace, operations and exclusions; NotFound else."""
        scope.check_agent_id(agent_id)
        conn = self._db.reader()
        record = passes.get_pass(conn, agent_id, pass_id)
        if record is None:
            raise NotFound(f"no Dreaming pass {pass_id!r} for this agent", code="pass_not_found")
        return PassDetail(
            record=record,
            tool_calls=tuple(passes.tool_calls(conn, agent_id, pass_id)),
            operations=tuple(dreaming_operations.for_pass(conn, agent_id, pass_id)),
            exclusions=tuple(passes.exclusions_of_pass(conn, agent_id, pass_id)),
        )


def not_configured() -> ChatProvider:
    """The provider factory of a service built without `inference.*`."""
    raise ProviderNotConfigured(
        "no model is configured for the memory_extraction workload; set "
        "inference.workloads.memoryExtraction (see docs/INFERENCE.md)"
    )


def build_dreaming(
    db: DatabaseHandle,
    config: DreamingConfig,
    *,
    provider: ProviderFactory = not_configured,
    workspace: Path | None = None,
    events: EventSink | None = None,
) -> DreamingService:
    """The service with its runner over the real apply seam and graph reads."""
    caps = ApplyCaps(
        max_per_request=config.max_ops_per_request, max_per_pass=config.max_ops_per_pass
    )

    def seam(agent_id: str, pass_id: str) -> PassSeam:
        return PassSeam(db, agent_id, pass_id, caps=caps, workspace=workspace, events=events)

    runner = PassRunner(
        db,
        config=config,
        seam=seam,
        graph=lambda agent_id: StoredGraph(db.reader, agent_id),
        workspace=workspace,
        events=events,
    )
    return DreamingService(db, config, runner, provider=provider)
