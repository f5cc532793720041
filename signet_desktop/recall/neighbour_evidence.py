"""The `neighbours` post-fusion stage: a turn two steps from a top hit shares its evidence.

In a conversation the answer often sits a few turns away from the turn that matched: the
same speaker goes on about it ("... the kids loved it"), or answers with a pronoun or a short
reply. The context signal (`recall/context.py`) already lends a candidate a share of its next
or previous neighbour's score; this stage looks one ring further, where the same speaker
speaks again in a two-party conversation. Among the candidates, one that lies `distance` live
memories before or after one of the top `anchors` hits in the same session gains

    + weight x the anchor's score, capped just below the lowest of the top `anchors` hits

(the best anchor's, when several reach it). A lifted hit never passes any of the top hits, so
the head of the ranking keeps its order and members: the stage brings evidence into the
places after it (`below_anchors=False` caps below the lender only: more MRR on LoCoMo, less
on LongMemEval). Only candidates move: a memory no channel returned enters nothing (measured:
none would have reached the top 10). Each raised hit records which hit lent to it. Weights:
docs/RECALL.md, "Lists and neighbouring turns".
"""

from __future__ import annotations

from collections.abc import Mapping

from signet_desktop.recall.channels import ChannelRequest, StageClock
from signet_desktop.recall.fusion import FusedHit
from signet_desktop.recall.stages import resorted, scored
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.recall_context import session_rings

STAGE_NAME = "neighbours"
DEFAULT_ANCHORS = 5
DEFAULT_DISTANCE = 2
DEFAULT_WEIGHT = 0.15
BELOW_ANCHOR = 1e-6  # a lifted hit stays this much below the score it is capped at
Rings = tuple[tuple[str, ...], ...]  # memory ids 1, 2, ... steps away (`session_rings`)


class NeighbourEvidence:
    """The `neighbours` stage (see the module docstring); implements `PostFusionStage`."""

    name = STAGE_NAME

    def __init__(
        self,
        *,
        anchors: int = DEFAULT_ANCHORS,
        distance: int = DEFAULT_DISTANCE,
        weight: float = DEFAULT_WEIGHT,
        below_anchors: bool = True,
    ) -> None:
        if anchors < 1 or distance < 1 or not 0 <= weight <= 1:
            raise ValueError("anchors and distance must be at least 1, weight within [0, 1]")
        self.anchors = anchors
        self.distance = distance
        self.weight = weight
        self.below_anchors = below_anchors  # cap below every top hit (else below the lender)

    def apply(
        self,
        conn: Connection,
        request: ChannelRequest,
        hits: list[FusedHit],
        clock: StageClock,
    ) -> list[FusedHit]:
        """Raise the candidates `distance` turns from a top hit (best first again)."""
        if not self.weight or len(hits) < 2:
            return list(hits)
        head = [hit.memory_id for hit in hits[: self.anchors]]
        return self.lift(hits, session_rings(conn, request.agent_id, head, self.distance))

    def lift(self, hits: list[FusedHit], rings: Mapping[str, Rings]) -> list[FusedHit]:
        """The rule on `hits` given the top hits' session `rings` (no database: the replays
        in `bench/locomo_lists_replay.py` call it with recorded rings)."""
        index = {hit.memory_id: i for i, hit in enumerate(hits)}
        lifted: dict[int, tuple[float, str]] = {}
        head = hits[: self.anchors]
        lowest = min(hit.score for hit in head) if head else 0.0
        for rank, anchor in enumerate(head, start=1):
            ring = rings.get(anchor.memory_id, ())
            near = ring[self.distance - 1] if len(ring) >= self.distance else ()
            for memory_id in near:
                i = index.get(memory_id)
                if i is None:
                    continue
                own = hits[i].score
                cap = lowest if self.below_anchors else anchor.score
                raised = min(own + self.weight * anchor.score, cap - BELOW_ANCHOR)
                if raised > max(own, lifted.get(i, (own, ""))[0]):
                    lifted[i] = (raised, self._reason(raised - own, rank, anchor))
        if not lifted:
            return list(hits)
        out = [
            scored(hit, STAGE_NAME, *lifted[i]) if i in lifted else hit
            for i, hit in enumerate(hits)
        ]
        return resorted(out)

    def _reason(self, added: float, rank: int, anchor: FusedHit) -> str:
        below = f"the top {self.anchors}" if self.below_anchors else "it"
        return (
            f"+{added:.3f} neighbouring turn: {self.distance} turns from {anchor.memory_id} "
            f"in the same session (#{rank} when this stage ran, score {anchor.score:.3f}); "
            f"{self.weight:g} x its score, kept below {below}"
        )
