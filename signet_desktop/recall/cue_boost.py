"""What the cue stages (`time`, `preference`) share: raise the top candidates by what each
one's write-time cues (`storage/memory_cues.py`) earn it, then put them in order again."""

from __future__ import annotations

from collections.abc import Callable

from signet_desktop.recall.fusion import FusedHit
from signet_desktop.recall.stages import resorted, scored
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.memory_cues import MemoryCues, cues_for

Bonus = Callable[[MemoryCues], tuple[float, str]]  # cues -> (score added, why)


def raise_by_cues(
    conn: Connection,
    agent_id: str,
    hits: list[FusedHit],
    *,
    top_n: int,
    stage: str,
    bonus: Bonus,
) -> list[FusedHit]:
    """The first `top_n` hits, each raised by `bonus(its cues)` (recorded as an adjustment
    of `stage`) and re-sorted; the rest unchanged after them."""
    head, tail = hits[:top_n], hits[top_n:]
    cues = cues_for(conn, agent_id, [hit.memory_id for hit in head])
    out = []
    for hit in head:
        found = cues.get(hit.memory_id)
        added, why = bonus(found) if found else (0.0, "")
        out.append(scored(hit, stage, hit.score + added, why) if added else hit)
    return resorted(out) + tail
