"""Post-fusion dampening (Signet's `pipeline/dampening.ts`): gravity, hub and resolution.

Three independent stages, each switchable (`memory.pipelineV2.dampening.*`), each recording a
`HitAdjustment` on every hit it changed and leaving every other hit as it came:

- `dampening.gravity`: a hit only the semantic channel returned, scoring above 0.3, that
  shares no term with the query, is pulled down x0.5 (a vector neighbour with nothing in
  common with the question is the classic "gravity well" of embedding search);
- `dampening.hub`: a hit whose linked entities are all above the agent's P90 mention degree
  (it mentions only hubs, so the mention says little about it) x0.7;
- `dampening.resolution`: `constraint` and `decision` memories x1.2, temporally anchored ones
  (a date, a month and day, a time) x1.1; content under 50 characters gets no boost.

Each looks at the first `MAX_DAMPENED` candidates only (one bounded read each).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Mapping, Sequence

from signet_desktop.recall.channels import ChannelRequest, StageClock
from signet_desktop.recall.fusion import FusedHit
from signet_desktop.recall.sanitize import query_tokens
from signet_desktop.recall.stages import adjusted, resorted
from signet_desktop.storage import graph_reads as reads
from signet_desktop.storage.connect import Connection

MAX_DAMPENED = 50  # Signet's candidate budget at limit 10
GRAVITY_FACTOR = 0.5
GRAVITY_MIN_SCORE = 0.3
HUB_FACTOR = 0.7
HUB_PERCENTILE = 90.0
HUB_DEGREE_TTL_S = 60.0  # the P90 moves slowly: read once a minute per agent, not per recall
DECISION_FACTOR = 1.2
DECISION_TYPES = frozenset({"constraint", "decision"})
TEMPORAL_FACTOR = 1.1
MIN_BOOST_CHARS = 50

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
TEMPORAL = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b"  # 2026-03-14
    r"|\b\d{1,2}/\d{1,2}/\d{2,4}\b"  # 14/03/2026
    rf"|\b{_MONTH}\.?\s+\d{{1,4}}\b"  # March 14, May 2023
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}\b"  # 14 March
    r"|\b\d{1,2}:\d{2}\b",  # 14:30
    re.IGNORECASE,
)

CONTENTS = """
SELECT id, type, content FROM memories
WHERE agent_id = :agent_id AND id IN (SELECT value FROM json_each(:ids))
"""


def _contents(conn: Connection, agent_id: str, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
    """id -> (type, content) of the agent's memories among `ids`."""
    if not ids:
        return {}
    rows = conn.execute(CONTENTS, {"agent_id": agent_id, "ids": json.dumps(list(ids))})
    return {str(r["id"]): (str(r["type"]), str(r["content"])) for r in rows}


def _terms(text: str) -> set[str]:
    """Query-comparable terms: tokens without stop words, a plural `s` folded."""
    return {t[:-1] if len(t) > 3 and t.endswith("s") else t for t in query_tokens(text)}


def is_temporal(content: str) -> bool:
    """Does the text name a date, a month and day, or a time?"""
    return TEMPORAL.search(content) is not None


class GravityStage:
    """`dampening.gravity` (see the module docstring)."""

    name = "dampening.gravity"

    def apply(
        self, conn: Connection, request: ChannelRequest, hits: list[FusedHit], clock: StageClock
    ) -> list[FusedHit]:
        chosen = [
            h.memory_id
            for h in hits[:MAX_DAMPENED]
            if set(h.channels) == {"semantic"} and h.score > GRAVITY_MIN_SCORE
        ]
        if not chosen:
            return hits
        asked = _terms(request.text)
        rows = _contents(conn, request.agent_id, chosen)
        pulled = {mid for mid, (_, content) in rows.items() if not asked & _terms(content)}
        reason = "semantic-only match sharing no term with the query"
        return _apply(hits, self.name, {mid: (GRAVITY_FACTOR, reason) for mid in pulled})


class HubStage:
    """`dampening.hub` (see the module docstring)."""

    name = "dampening.hub"

    def __init__(self, ttl_s: float = HUB_DEGREE_TTL_S) -> None:
        self._ttl = ttl_s
        self._degrees: dict[str, tuple[float, int | None]] = {}
        self._lock = threading.Lock()

    def hub_degree(self, conn: Connection, agent_id: str) -> int | None:
        """The agent's P90 mention degree, cached for `ttl_s`."""
        now = time.monotonic()
        with self._lock:
            cached = self._degrees.get(agent_id)
        if cached is not None and now - cached[0] < self._ttl:
            return cached[1]
        value = reads.mention_degree_percentile(conn, agent_id, HUB_PERCENTILE)
        with self._lock:
            self._degrees[agent_id] = (now, value)
        return value

    def apply(
        self, conn: Connection, request: ChannelRequest, hits: list[FusedHit], clock: StageClock
    ) -> list[FusedHit]:
        ids = [h.memory_id for h in hits[:MAX_DAMPENED]]
        linked = reads.linked_entities(conn, request.agent_id, ids)
        if not linked:
            return hits
        p90 = self.hub_degree(conn, request.agent_id)
        if p90 is None:
            return hits
        reason = f"every linked entity is a hub (mentions above the P90 of {p90})"
        hubs = {
            mid: (HUB_FACTOR, reason)
            for mid, degrees in linked.items()
            if degrees and all(d > p90 for d in degrees.values())
        }
        return _apply(hits, self.name, hubs)


class ResolutionStage:
    """`dampening.resolution` (see the module docstring)."""

    name = "dampening.resolution"

    def apply(
        self, conn: Connection, request: ChannelRequest, hits: list[FusedHit], clock: StageClock
    ) -> list[FusedHit]:
        rows = _contents(conn, request.agent_id, [h.memory_id for h in hits[:MAX_DAMPENED]])
        changes: dict[str, list[tuple[float, str]]] = {}
        for mid, (kind, content) in rows.items():
            if len(content) < MIN_BOOST_CHARS:
                continue
            if kind in DECISION_TYPES:
                changes.setdefault(mid, []).append((DECISION_FACTOR, f"a {kind} memory"))
            if is_temporal(content):
                changes.setdefault(mid, []).append((TEMPORAL_FACTOR, "temporally anchored"))
        if not changes:
            return hits
        out = []
        for hit in hits:
            for factor, reason in changes.get(hit.memory_id, ()):
                hit = adjusted(hit, self.name, factor, reason)
            out.append(hit)
        return resorted(out)


def _apply(
    hits: list[FusedHit], stage: str, changes: Mapping[str, tuple[float, str]]
) -> list[FusedHit]:
    if not changes:
        return hits
    out = []
    for hit in hits:
        change = changes.get(hit.memory_id)
        out.append(hit if change is None else adjusted(hit, stage, *change))
    return resorted(out)


def dampening_stages(
    *, gravity: bool = True, hub: bool = True, resolution: bool = True
) -> tuple[GravityStage | HubStage | ResolutionStage, ...]:
    """The enabled dampening stages, in Signet's order."""
    chosen: list[GravityStage | HubStage | ResolutionStage] = []
    if gravity:
        chosen.append(GravityStage())
    if hub:
        chosen.append(HubStage())
    if resolution:
        chosen.append(ResolutionStage())
    return tuple(chosen)
