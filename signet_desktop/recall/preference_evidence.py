"""The `preference` post-fusion stage: stated preferences answer recommendation questions.

"Can you suggest some activities for the evening?" is best answered by "I prefer winding
down by 9:30 pm", which shares none of its words. Each memory's stated preference, habit or
decision was recognised at write time (`storage/memory_cues.py`, `domain/preferences.py`);
when the question asks for a recommendation, a suggestion or what someone usually does
(`asks_for_preference`), each of the top `top_n` candidates that states one gains `weight`
and records why. Any other question is left as fused. Weight: docs/RECALL.md, "Preferences".
"""

from __future__ import annotations

from signet_desktop.domain.preferences import asks_for_preference
from signet_desktop.recall.channels import ChannelRequest, StageClock
from signet_desktop.recall.fusion import FusedHit
from signet_desktop.recall.stages import resorted, scored
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.memory_cues import cues_for

STAGE_NAME = "preference"
DEFAULT_TOP_N = 50
DEFAULT_WEIGHT = 0.1


class PreferenceEvidence:
    """The `preference` stage (see the module docstring); implements `PostFusionStage`."""

    name = STAGE_NAME

    def __init__(self, *, top_n: int = DEFAULT_TOP_N, weight: float = DEFAULT_WEIGHT) -> None:
        if top_n < 1 or weight < 0:
            raise ValueError("top_n must be at least 1 and weight >= 0")
        self.top_n = top_n
        self.weight = weight

    def apply(
        self,
        conn: Connection,
        request: ChannelRequest,
        hits: list[FusedHit],
        clock: StageClock,
    ) -> list[FusedHit]:
        """Raise the top `top_n` hits that state a preference, for a question asking for one."""
        if not self.weight or not asks_for_preference(request.text):
            return list(hits)
        head, tail = hits[: self.top_n], hits[self.top_n :]
        cues = cues_for(conn, request.agent_id, [hit.memory_id for hit in head])
        out = []
        for hit in head:
            found = cues.get(hit.memory_id)
            if found is None or found.preference is None:
                out.append(hit)
                continue
            why = (f"+{self.weight:g} states a preference ('{found.preference}') and the "
                   "question asks for a recommendation or a habit")  # fmt: skip
            out.append(scored(hit, STAGE_NAME, hit.score + self.weight, why))
        return resorted(out) + tail
