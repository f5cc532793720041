"""The `time` post-fusion stage: a memory's resolved times as evidence for the question's.

Each memory's time expressions were resolved at write time against its own date
(`storage/memory_cues.py`: "yesterday" said on 8 May 2023 is 7 May 2023). The question's are
resolved against when it is asked (`RecallQuery.as_of`, else now): "in May 2023", "the week
before 16 November 2023", "last week", "two weeks ago". Among the top `top_n` candidates:

    + window_weight   a memory's resolved time falls in the question's window
    + created_weight  else, the memory itself was written on a day in that window
    + when_weight     a when/how-long-ago question, and the memory says when (any time)

A question with neither a window nor a "when" leaves every score as fused. Each hit it
raises records a `HitAdjustment` naming the expression and the days it resolved to, so the
explanation shows what was matched. Weights: docs/RECALL.md, "Time as evidence".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, date, datetime

from signet_desktop.domain.time_expressions import TimeSpan, anchor_date, resolve
from signet_desktop.recall.channels import ChannelRequest, StageClock
from signet_desktop.recall.cue_boost import raise_by_cues
from signet_desktop.recall.fusion import FusedHit
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.memory_cues import MemoryCues

STAGE_NAME = "time"
DEFAULT_TOP_N = 50
DEFAULT_WINDOW_WEIGHT = 0.2
DEFAULT_CREATED_WEIGHT = 0.05
DEFAULT_WHEN_WEIGHT = 0.05

WHEN = re.compile(
    r"^\s*(?:when|what (?:date|day|time|year|month)|which (?:year|month|day)|how long ago"
    r"|how (?:many|long) (?:days|weeks|months|years))|\bwhen (?:did|was|is|will|were|do)\b",
    re.IGNORECASE,
)


def asks_when(query: str) -> bool:
    """Is `query` a when / how-long-ago question (its answer is a time)?"""
    return WHEN.search(query) is not None


def question_window(query: str, as_of: str | None) -> list[TimeSpan]:
    """The question's own time expressions, resolved against when it is asked."""
    anchor = anchor_date(as_of) if as_of else None
    return resolve(query, anchor or datetime.now(UTC).date())


class TimeEvidence:
    """The `time` stage (see the module docstring); implements `PostFusionStage`."""

    name = STAGE_NAME

    def __init__(
        self,
        *,
        top_n: int = DEFAULT_TOP_N,
        window_weight: float = DEFAULT_WINDOW_WEIGHT,
        created_weight: float = DEFAULT_CREATED_WEIGHT,
        when_weight: float = DEFAULT_WHEN_WEIGHT,
    ) -> None:
        if top_n < 1 or min(window_weight, created_weight, when_weight) < 0:
            raise ValueError("top_n must be at least 1 and every weight >= 0")
        self.top_n = top_n
        self.window_weight = window_weight
        self.created_weight = created_weight
        self.when_weight = when_weight

    def apply(
        self,
        conn: Connection,
        request: ChannelRequest,
        hits: list[FusedHit],
        clock: StageClock,
    ) -> list[FusedHit]:
        """Raise the top `top_n` hits whose times match the question's (best first again)."""
        when = asks_when(request.text)
        window = question_window(request.text, request.as_of)
        if not (when and self.when_weight) and not window:
            return list(hits)
        return raise_by_cues(
            conn,
            request.agent_id,
            hits,
            top_n=self.top_n,
            stage=STAGE_NAME,
            bonus=lambda cues: self._bonus(cues, window, when),
        )

    def _bonus(self, cues: MemoryCues, window: Sequence[TimeSpan], when: bool) -> tuple[float, str]:
        """What the memory's times add for this question, and the reason."""
        bonus, parts = 0.0, []
        match = next((s for s in cues.times for w in window if s.overlaps(w)), None)
        if match is not None:
            asked = next(w for w in window if match.overlaps(w))
            bonus += self.window_weight
            parts.append(
                f"says '{match.expression}' ({match.label()}), within the question's "
                f"'{asked.expression}' ({asked.label()})"
            )
        elif window and cues.created and _within(cues.created, window):
            asked = next(w for w in window if w.start <= cues.created <= w.end)
            bonus += self.created_weight
            parts.append(
                f"written {cues.created.isoformat()}, within the question's "
                f"'{asked.expression}' ({asked.label()})"
            )
        if when and cues.times and self.when_weight:
            bonus += self.when_weight
            spans = ", ".join(f"'{s.expression}' = {s.label()}" for s in cues.times[:3])
            parts.append(f"a when-question, and it says when: {spans}")
        return bonus, f"+{bonus:.2f} time evidence: " + "; ".join(parts)


def _within(day: date, window: Sequence[TimeSpan]) -> bool:
    return any(w.start <= day <= w.end for w in window)
