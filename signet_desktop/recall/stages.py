"""Post-fusion stages: what may change the fused ranking before the final cut.

After fusion and the context signals, the engine runs its post-fusion stages in order
(dampening, reranking, ...). A stage receives the fused candidates best first and returns them
best first again; when it changes a hit's score it appends a `HitAdjustment` (its name, the
factor, a reason a person can read), so every ranking explains itself in `adjustments` of the
hit in HTTP, MCP and the window. Stages read (never inside a write transaction) and must keep
to their own time budget: a stage that runs out returns what it has, unchanged beyond that.

Adding a stage: a class implementing `PostFusionStage`, passed to `RecallEngine(stages=...)`
in `service/container.py`; `RecallQuery.stages` selects stages by name (None: all of them),
so benchmarks compare with and without it through the one implementation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from signet_desktop.domain.recall import HitAdjustment
from signet_desktop.recall.channels import ChannelRequest, StageClock
from signet_desktop.recall.fusion import FusedHit, order_key
from signet_desktop.storage.connect import Connection


class PostFusionStage(Protocol):
    """One step between fusion and the final cut (see the module docstring)."""

    @property
    def name(self) -> str: ...

    def apply(
        self,
        conn: Connection,
        request: ChannelRequest,
        hits: list[FusedHit],
        clock: StageClock,
    ) -> list[FusedHit]:
        """Return `hits` re-scored and re-sorted best first (unchanged hits as they came)."""
        ...


def adjusted(hit: FusedHit, stage: str, factor: float, reason: str) -> FusedHit:
    """`hit` with its score multiplied by `factor` and the adjustment recorded."""
    return replace(
        hit,
        score=hit.score * factor,
        adjustments=(*hit.adjustments, HitAdjustment(stage, factor, reason)),
    )


def scored(hit: FusedHit, stage: str, score: float, reason: str) -> FusedHit:
    """`hit` with a new score; the adjustment records the factor new / old."""
    factor = score / hit.score if hit.score else 1.0
    return replace(
        hit,
        score=score,
        adjustments=(*hit.adjustments, HitAdjustment(stage, factor, reason)),
    )


def reordered(
    head: Sequence[FusedHit], ranks: Sequence[int], stage: str, reasons: Sequence[str]
) -> list[FusedHit]:
    """`head[i] for i in ranks`; the hit at each rank takes the score that rank had.

    So the hits keep the score scale fusion gave them: a hit outside `head`, or a later stage
    that sorts again, meets the same scores, only in a new order. A hit whose score this
    leaves as it was (its rank kept) records nothing; a moved one records `reasons[i]`.
    """
    scores = sorted((hit.score for hit in head), reverse=True)
    return [
        head[i] if score == head[i].score else scored(head[i], stage, score, reasons[i])
        for i, score in zip(ranks, scores, strict=True)
    ]


def resorted(hits: list[FusedHit]) -> list[FusedHit]:
    """Best first again after a stage changed scores (same tie rule as fusion)."""
    return sorted(hits, key=order_key)
