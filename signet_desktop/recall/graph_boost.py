"""The legacy graph boost: hits linked to the query's focal entities move towards 1.

When traversal is not the primary path (`memory.pipelineV2.traversal.primary: false`), recall
is the flat hybrid with this optional augmentation (Signet's non-primary mode): a hit that
mentions an entity the query names gets `s = (1 - w) * s + w`, w = `graph.boostWeight` (0.15),
recorded as a `graph.boost` adjustment. Focal entities are resolved exactly as the traversal
channel resolves them, in the query's agent scope only.
"""

from __future__ import annotations

from signet_desktop.recall.channels import ChannelRequest, StageClock
from signet_desktop.recall.fusion import FusedHit
from signet_desktop.recall.stages import resorted, scored
from signet_desktop.recall.traversal import focal_entities
from signet_desktop.storage import graph_reads as reads
from signet_desktop.storage.connect import Connection

DEFAULT_BOOST_WEIGHT = 0.15
MAX_BOOSTED = 100


class GraphBoostStage:
    """`graph.boost` (see the module docstring)."""

    name = "graph.boost"

    def __init__(self, weight: float = DEFAULT_BOOST_WEIGHT) -> None:
        if not 0.0 <= weight <= 1.0:
            raise ValueError("the graph boost weight must be within [0, 1]")
        self.weight = weight

    def apply(
        self, conn: Connection, request: ChannelRequest, hits: list[FusedHit], clock: StageClock
    ) -> list[FusedHit]:
        focal = {
            entity.id: entity for entity in focal_entities(conn, request.agent_id, request.text)
        }
        if not focal or self.weight == 0:
            return hits
        ids = [h.memory_id for h in hits[:MAX_BOOSTED]]
        linked = reads.linked_entities(conn, request.agent_id, ids)
        out = []
        for hit in hits:
            named = [focal[e].name for e in linked.get(hit.memory_id, {}) if e in focal]
            if named:
                boosted = (1 - self.weight) * hit.score + self.weight
                reason = f"mentions {', '.join(sorted(named))}, named in the query"
                hit = scored(hit, self.name, boosted, reason)
            out.append(hit)
        return resorted(out)
