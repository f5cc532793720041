"""The `preference` post-fusion stage: what the asker said about themselves answers them.

Two cues, both read from each memory's text at write time (`storage/memory_cues.py`,
`domain/preferences.py`), applied to the top `top_n` candidates:

    + self_weight        the question asks about the asker in the first person ("what play
                         did I attend?", "can you suggest something for my commute?") and the
                         memory speaks in the first person ("I went to a play ...")
    + preference_weight  the question asks for a recommendation or a habit and the memory,
                         spoken in the first person, states a preference, habit or decision
                         ("I prefer winding down by 9:30 pm", "I usually take the train")

"Can you suggest some activities for the evening?" shares no word with "I prefer winding
down by 9:30 pm"; a reply addressed to the asker ("your evening routine ...") shares more. A
question about what the other party said ("what did you recommend?") gets neither cue, and a
question in the third person ("what does Caroline like?") is left as fused, so are memories
written about someone ("billing runs on Postgres 16"). Each raised hit records why.
Weights: docs/RECALL.md, "Preferences and the asker's own words".
"""

from __future__ import annotations

from signet_desktop.domain.preferences import asks_about_self, asks_for_preference
from signet_desktop.recall.channels import ChannelRequest, StageClock
from signet_desktop.recall.cue_boost import raise_by_cues
from signet_desktop.recall.fusion import FusedHit
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.memory_cues import MemoryCues

STAGE_NAME = "preference"
DEFAULT_TOP_N = 50
DEFAULT_SELF_WEIGHT = 0.2
DEFAULT_PREFERENCE_WEIGHT = 0.05


class PreferenceEvidence:
    """The `preference` stage (see the module docstring); implements `PostFusionStage`."""

    name = STAGE_NAME

    def __init__(
        self,
        *,
        top_n: int = DEFAULT_TOP_N,
        self_weight: float = DEFAULT_SELF_WEIGHT,
        preference_weight: float = DEFAULT_PREFERENCE_WEIGHT,
    ) -> None:
        if top_n < 1 or min(self_weight, preference_weight) < 0:
            raise ValueError("top_n must be at least 1 and every weight >= 0")
        self.top_n = top_n
        self.self_weight = self_weight
        self.preference_weight = preference_weight

    def apply(
        self,
        conn: Connection,
        request: ChannelRequest,
        hits: list[FusedHit],
        clock: StageClock,
    ) -> list[FusedHit]:
        """Raise the top `top_n` hits in the asker's own words (best first again)."""
        if not asks_about_self(request.text):
            return list(hits)
        wants = asks_for_preference(request.text)
        return raise_by_cues(
            conn,
            request.agent_id,
            hits,
            top_n=self.top_n,
            stage=STAGE_NAME,
            bonus=lambda cues: self._bonus(cues, wants),
        )

    def _bonus(self, cues: MemoryCues, wants: bool) -> tuple[float, str]:
        if not cues.first_person:
            return 0.0, ""
        bonus = self.self_weight
        why = f"+{self.self_weight:g}: a question about the asker, answered in the first person"
        if wants and cues.preference and self.preference_weight:
            bonus += self.preference_weight
            why += (
                f"; +{self.preference_weight:g}: states a preference ('{cues.preference}') "
                "and the question asks for a recommendation or a habit"
            )
        return bonus, why
