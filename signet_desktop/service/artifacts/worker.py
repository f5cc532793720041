"""The artifacts capability's worker: transcript artifacts follow completed sessions.

`transcript.captured` events with `completed` (session end) queue the session; the worker
writes its artifact off the publisher's thread. Every `scan_interval_s` it also writes the
artifacts of completed transcripts that have none for their last capture: sessions completed
by recovery or the TTL (which publish no event) and any whose event was lost to a crash.
Its first step re-indexes `memory/` from the files, so a file a crash left without its row
(files are written first) is indexed again, and rows of files deleted by hand go.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from signet_desktop.domain.events import Event, TranscriptCaptured
from signet_desktop.service.artifacts.service import ArtifactService
from signet_desktop.service.workers import WorkerDeclaration

log = logging.getLogger(__name__)

NAME = "artifacts"
DEFAULT_SCAN_INTERVAL_S = 60.0
WAKE_POLL_S = 0.5


class ArtifactWorker:
    """Writes queued and missing transcript artifacts (a hosted `Worker`)."""

    def __init__(
        self,
        artifacts: ArtifactService,
        *,
        scan_interval_s: float = DEFAULT_SCAN_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._artifacts = artifacts
        self.scan_interval_s = scan_interval_s
        self._clock = clock
        self._lock = threading.Lock()
        self._queued: dict[tuple[str, str], None] = {}  # insertion-ordered set
        self._wake = threading.Event()
        self._next_scan = 0.0  # the first step scans
        self._reindexed = False

    def notice(self, event: Event) -> None:
        """Bus handler (publisher's thread, cheap): queue a session that just completed."""
        if isinstance(event, TranscriptCaptured) and event.completed and event.agent_id:
            with self._lock:
                self._queued[(event.agent_id, event.session_key)] = None
            self._wake.set()

    def run_once(self) -> bool:
        """Write the queued sessions' artifacts, and scan when it is time; True if any."""
        if not self._reindexed:
            self._reindexed = True
            report = self._artifacts.reindex()
            if report.indexed or report.removed:
                log.info(
                    "artifact index: %d rows adopted, %d dropped", report.indexed, report.removed
                )
        with self._lock:
            queued, self._queued = list(self._queued), {}
            self._wake.clear()
        written = 0
        for agent_id, key in queued:
            try:
                written += self._artifacts.write_transcript(agent_id, key) is not None
            except Exception:  # one bad session must not stop the others
                log.exception("transcript artifact for a session of %s failed", agent_id)
        if self._clock() >= self._next_scan:
            self._next_scan = self._clock() + self.scan_interval_s
            written += self._artifacts.write_pending_transcripts()
        return written > 0

    def run_forever(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                self.run_once()
            except Exception:  # a failed step is retried on the next wake or scan
                log.exception("artifact worker step failed")
            deadline = self._clock() + self.scan_interval_s
            while not stop.is_set() and not self._wake.is_set() and self._clock() < deadline:
                self._wake.wait(WAKE_POLL_S)

    def release_leases(self) -> int:
        return 0  # holds no job leases


def declaration(worker: ArtifactWorker) -> WorkerDeclaration:
    return WorkerDeclaration(name=NAME, job_types=(), factory=lambda: worker)
