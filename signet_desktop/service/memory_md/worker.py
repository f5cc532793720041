"""The MEMORY.md capability's worker: rebuild an agent's file a few seconds after it changed.

A bus handler marks the agent dirty on `memory.created|updated|deleted|recovered` and
`artifact.written` (cheap: a dict write on the publisher's thread). The worker rebuilds an
agent once nothing changed for `debounce_s`, or `max_delay_s` after the first unhandled
change, so a 10k-memory import rebuilds a few times rather than 10k times, and a steady
trickle still shows up. Every agent with memories (and the default agent) is rebuilt at the
first step, so a content-safety policy shipped with a new version (the policy lives in the
code) or a file edited while the daemon was down is made right at start. A rebuild that fails
(target unwritable) was reported by the service; it is tried again on the next change.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

from signet_desktop.domain.errors import SignetError
from signet_desktop.domain.events import Event
from signet_desktop.domain.memory import DEFAULT_AGENT_ID
from signet_desktop.service.memory_md.service import MemoryMdService
from signet_desktop.service.workers import WorkerDeclaration

log = logging.getLogger(__name__)

NAME = "memory-md"
DEFAULT_DEBOUNCE_S = 3.0
DEFAULT_MAX_DELAY_S = 30.0
WAKE_POLL_S = 0.25
TRIGGERS = frozenset(
    {"memory.created", "memory.updated", "memory.deleted", "memory.recovered", "artifact.written"}
)


class MemoryMdWorker:
    """Debounced MEMORY.md rebuilds (a hosted `Worker`)."""

    def __init__(
        self,
        memory_md: MemoryMdService,
        *,
        debounce_s: float = DEFAULT_DEBOUNCE_S,
        max_delay_s: float = DEFAULT_MAX_DELAY_S,
        clock: Callable[[], float] = time.monotonic,
        initial: Sequence[str] | None = None,
    ) -> None:
        self._memory_md = memory_md
        self.debounce_s = debounce_s
        self.max_delay_s = max_delay_s
        self._clock = clock
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._dirty: dict[str, tuple[float, float]] = {}
        self._initial = None if initial is None else tuple(initial)
        self._started = False
        self.rebuilds = 0

    def notice(self, event: Event) -> None:
        """Bus handler: note that an agent's MEMORY.md is out of date."""
        if event.kind not in TRIGGERS or event.agent_id is None:
            return
        now = self._clock()
        with self._lock:
            first, _ = self._dirty.get(event.agent_id, (now, now))
            self._dirty[event.agent_id] = (first, now)
        self._wake.set()

    def _start(self) -> None:
        """At the first step: every agent (or `initial`) is due at once."""
        self._started = True
        found = self._initial
        if found is None:
            found = tuple(sorted({DEFAULT_AGENT_ID, *self._memory_md.agents()}))
        start = self._clock() - self.max_delay_s
        with self._lock:
            for agent_id in found:
                self._dirty[agent_id] = (start, start)  # due now, even if an event came first

    def due(self) -> list[str]:
        """Agents whose changes have settled (or waited `max_delay_s`), in name order."""
        if not self._started:
            self._start()
        now = self._clock()
        with self._lock:
            return sorted(
                agent
                for agent, (first, last) in self._dirty.items()
                if now - last >= self.debounce_s or now - first >= self.max_delay_s
            )

    def run_once(self) -> bool:
        """Rebuild every due agent; True when any was rebuilt."""
        done = False
        for agent_id in self.due():
            with self._lock:
                self._dirty.pop(agent_id, None)
            try:
                self._memory_md.rebuild(agent_id)
            except SignetError as exc:  # reported by the service (event + status)
                log.warning("MEMORY.md rebuild for %s failed: %s", agent_id, exc.message)
                continue
            except Exception:  # the safety gate or a read failed: try again on a change
                log.exception("MEMORY.md rebuild for %s failed", agent_id)
                continue
            self.rebuilds += 1
            done = True
        return done

    def run_forever(self, stop: threading.Event) -> None:
        while not stop.is_set():
            self._wake.clear()
            try:
                self.run_once()
            except Exception:  # a failed step is tried again on the next change
                log.exception("MEMORY.md worker step failed")
            with self._lock:
                waiting = bool(self._dirty)
            if waiting:
                stop.wait(WAKE_POLL_S)
            else:
                while not stop.is_set() and not self._wake.wait(WAKE_POLL_S):
                    pass

    def release_leases(self) -> int:
        return 0  # holds no job leases


def declaration(worker: MemoryMdWorker) -> WorkerDeclaration:
    return WorkerDeclaration(name=NAME, job_types=(), factory=lambda: worker)
