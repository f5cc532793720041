"""Events of the projection capability: a background UMAP run's progress and its end."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from signet_desktop.domain.events import Event


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectionProgress(Event):
    """A UMAP run moved on: `phase` (loading, neighbours, layout) and `fraction` of the whole."""

    kind: ClassVar[str] = "projection.progress"
    dimensions: int
    phase: str
    fraction: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectionFinished(Event):
    """A UMAP run ended: `outcome` completed (cached), failed (`error`) or cancelled."""

    kind: ClassVar[str] = "projection.finished"
    dimensions: int
    outcome: str
    points: int
    error: str | None = None
