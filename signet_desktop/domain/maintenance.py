"""A recorded retention/maintenance run (storage/maintenance_runs.py keeps them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class MaintenanceRun:
    """A run: `steps` maps a step name to its counters."""

    id: str
    trigger: str  # schedule | manual
    status: str  # running | completed | failed | interrupted
    started_at: str
    finished_at: str | None
    steps: Mapping[str, Mapping[str, Any]]
    error: str | None
