"""Context signals applied after fusion: who said it, and what was said beside it.

Two signals, each measured on the LoCoMo dev split (docs/RECALL.md), added to the fused score:

- **who**: when the query names a candidate's `who` (as a whole word, any case), the candidate
  gains `who_boost`. Questions about a person are mostly answered by what that person said.
- **session**: a candidate gains `session_weight` times the best fused score among its
  session neighbours (the previous and next live memory of the same session) that are
  candidates too. In a conversation an answer sits next to its question, and a short reply
  ("Yes, last week!") carries no terms of its own.

    score = fused + who + session        (both 0 when the signal does not apply)

A memory with neither signal keeps its fused score exactly, so `min_score` keeps its meaning;
a boosted score can exceed 1 by at most `who_boost + session_weight`. Neighbours only lend
what they scored themselves: a memory outside the candidate lists lends nothing, and nothing
enters the ranking through this stage.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from signet_desktop.domain.recall import ContextEvidence
from signet_desktop.recall.fusion import FusedHit, order_key
from signet_desktop.storage.recall_context import CandidateContext

DEFAULT_WHO_BOOST = 0.15
DEFAULT_SESSION_WEIGHT = 0.25
MIN_WHO_CHARS = 2


@dataclass(frozen=True, slots=True)
class ContextWeights:
    """How much each context signal may add (0 switches it off)."""

    who_boost: float = DEFAULT_WHO_BOOST
    session_weight: float = DEFAULT_SESSION_WEIGHT

    def __post_init__(self) -> None:
        for name in ("who_boost", "session_weight"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be within [0, 1]")

    @property
    def enabled(self) -> bool:
        return self.who_boost > 0 or self.session_weight > 0


def named_whos(query: str, whos: Iterable[str | None]) -> frozenset[str]:
    """The `who` values (lowercased) that `query` names as whole words."""
    text = query.lower()
    named = set()
    for who in {w.strip().lower() for w in whos if w}:
        if len(who) >= MIN_WHO_CHARS and re.search(rf"(?<!\w){re.escape(who)}(?!\w)", text):
            named.add(who)
    return frozenset(named)


def apply_context(
    fused: Sequence[FusedHit],
    facts: Mapping[str, CandidateContext],
    query: str,
    weights: ContextWeights,
) -> list[FusedHit]:
    """Add the context signals to each fused candidate and re-rank (best first)."""
    if not weights.enabled or not fused:
        return list(fused)
    fused_score = {hit.memory_id: hit.score for hit in fused}
    named = named_whos(query, (f.who for f in facts.values())) if weights.who_boost else ()
    out = []
    for hit in fused:
        fact = facts.get(hit.memory_id)
        if fact is None:
            out.append(hit)
            continue
        who = weights.who_boost if fact.who and fact.who.strip().lower() in named else 0.0
        session, neighbour = _best_neighbour(fact, fused_score, weights.session_weight)
        if who or session:
            context = ContextEvidence(who=who, session=session, neighbour_id=neighbour)
            hit = replace(hit, score=hit.score + who + session, context=context)
        out.append(hit)
    out.sort(key=order_key)
    return out


def _best_neighbour(
    fact: CandidateContext, fused_score: Mapping[str, float], weight: float
) -> tuple[float, str | None]:
    if not weight:
        return 0.0, None
    lent = [(fused_score[i], i) for i in fact.neighbour_ids if i in fused_score]
    if not lent:
        return 0.0, None
    score, neighbour = max(lent)
    return weight * score, neighbour
