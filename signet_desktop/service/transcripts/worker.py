"""The transcripts capability's worker: sessions idle past the TTL are marked complete.

A harness that never sent session-end (killed, closed laptop, no SessionEnd hook) leaves its
row open; once nothing was captured for `idle_ttl_s` the row is complete, the spec's TTL
path, so Dreaming can read it. A later capture of the same session still appends its new
turns. No job queue: one cheap statement per interval.
"""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime, timedelta

from signet_desktop.service.transcripts.service import TranscriptService
from signet_desktop.service.workers import WorkerDeclaration, repeat

log = logging.getLogger(__name__)

NAME = "transcript-ttl"
DEFAULT_IDLE_TTL_S = 6 * 3600.0
DEFAULT_INTERVAL_S = 300.0


def iso_before(seconds: float, now: datetime | None = None) -> str:
    """The `utc_now()`-format timestamp `seconds` ago."""
    moment = (now or datetime.now(UTC)) - timedelta(seconds=seconds)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TranscriptTtlWorker:
    """Completes idle sessions every `interval_s` (a hosted `Worker`)."""

    def __init__(
        self,
        transcripts: TranscriptService,
        *,
        idle_ttl_s: float = DEFAULT_IDLE_TTL_S,
        interval_s: float = DEFAULT_INTERVAL_S,
    ) -> None:
        self._transcripts = transcripts
        self.idle_ttl_s = idle_ttl_s
        self.interval_s = interval_s

    def run_once(self) -> bool:
        """One sweep; True when it completed a session."""
        completed = self._transcripts.expire_idle(iso_before(self.idle_ttl_s))
        if completed:
            log.info("%d idle sessions marked complete (TTL %.0f s)", completed, self.idle_ttl_s)
        return completed > 0

    def run_forever(self, stop: threading.Event) -> None:
        repeat(stop, self.interval_s, self.run_once, log=log, failed="transcript TTL sweep failed")

    def release_leases(self) -> int:
        return 0  # holds no job leases


def declaration(worker: TranscriptTtlWorker) -> WorkerDeclaration:
    return WorkerDeclaration(name=NAME, job_types=(), factory=lambda: worker)
