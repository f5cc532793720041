"""Fusing the lexical and semantic channels into one ranking, keeping each channel's evidence.

Linear blend per memory id: `alpha * semantic + (1 - alpha) * lexical`. A memory that only
one channel returned gets a stand-in for the other channel's score, chosen by `single`:

- "raw" (Signet's rule): no blend, its one channel score as is;
- "zero": the missing channel counts as 0;
- "floor": the missing channel counts as the lowest score that channel returned, when it
  returned a full list of `depth` candidates: a memory outside a truncated top-k scores at
  most that much there, so the floor is the tightest bound known without another query, and it
  neither rewards nor punishes a memory for falling just outside one channel's list. A channel
  that returned fewer than `depth` had nothing more to give: the stand-in is then 0.

When a channel returned nothing at all (not asked, unavailable, or no match), every candidate
keeps its one score: there is nothing to blend with. Evidence is kept exactly as each channel
reported it; stand-ins never appear as evidence. The default is what measured best on the
LoCoMo dev split (see docs/RECALL.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from signet_desktop.domain.recall import ChannelEvidence, ContextEvidence

SingleChannelRule = Literal["raw", "zero", "floor"]

DEFAULT_ALPHA = 0.7
DEFAULT_SINGLE: SingleChannelRule = "floor"


class ChannelHit(Protocol):
    """A memory id with one channel's evidence (what lexical and semantic search return)."""

    @property
    def memory_id(self) -> str: ...

    @property
    def evidence(self) -> ChannelEvidence: ...


@dataclass(frozen=True, slots=True)
class FusedHit:
    """A fused candidate: final score, which channels saw it, and their evidence."""

    memory_id: str
    score: float
    source: str  # hybrid | keyword | vector
    lexical: ChannelEvidence | None
    semantic: ChannelEvidence | None
    context: ContextEvidence | None = None  # set by recall.context


def _stand_in(
    scores: Mapping[str, ChannelEvidence], single: SingleChannelRule, depth: int | None
) -> float:
    truncated = depth is None or len(scores) >= depth
    if single == "floor" and truncated:
        return min(ev.score for ev in scores.values())
    return 0.0


def fuse(
    lexical: Sequence[ChannelHit],
    semantic: Sequence[ChannelHit],
    *,
    alpha: float = DEFAULT_ALPHA,
    single: SingleChannelRule = DEFAULT_SINGLE,
    depth: int | None = None,
) -> list[FusedHit]:
    """Union of both channels' candidates, best first (ties: better channel rank, then id).

    `depth` is how many candidates each channel was asked for (None: treat both lists as
    truncated).
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError("alpha must be within [0, 1]")
    lex = {h.memory_id: h.evidence for h in lexical}
    sem = {h.memory_id: h.evidence for h in semantic}
    blending = bool(lex) and bool(sem)
    lex_missing = _stand_in(lex, single, depth) if blending else 0.0
    sem_missing = _stand_in(sem, single, depth) if blending else 0.0
    fused: list[FusedHit] = []
    for memory_id in lex.keys() | sem.keys():
        lex_ev, sem_ev = lex.get(memory_id), sem.get(memory_id)
        if lex_ev is not None and sem_ev is not None:
            score, source = alpha * sem_ev.score + (1 - alpha) * lex_ev.score, "hybrid"
        elif sem_ev is not None:
            score, source = sem_ev.score, "vector"
            if blending and single != "raw":
                score = alpha * sem_ev.score + (1 - alpha) * lex_missing
        else:
            assert lex_ev is not None  # every id came from one of the two maps
            score, source = lex_ev.score, "keyword"
            if blending and single != "raw":
                score = alpha * sem_missing + (1 - alpha) * lex_ev.score
        fused.append(FusedHit(memory_id, score, source, lex_ev, sem_ev))
    fused.sort(key=order_key)
    return fused


def order_key(hit: FusedHit) -> tuple[float, int, str]:
    """Best score first; ties by the better channel rank, then by id (deterministic)."""
    ranks = [ev.rank for ev in (hit.lexical, hit.semantic) if ev is not None]
    return (-hit.score, min(ranks), hit.memory_id)
