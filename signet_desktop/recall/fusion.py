"""Fusing any number of channels into one ranking, keeping each channel's evidence.

Linear blend per memory id over the channels that returned anything for the query (the
*active* channels), with their weights renormalised to sum to 1:

    score = sum(weight[c] / total * score[c] for c in active)    total = sum(weight[c], active)

A memory that an active channel did not return gets a stand-in for that channel's score,
chosen by `single`:

- "raw" (Signet's rule): no stand-in; the memory is blended over the channels that returned it
  only (their weights renormalised among themselves), so a memory one channel returned keeps
  that channel's score as is;
- "zero": the missing channel counts as 0;
- "floor": the missing channel counts as the lowest score that channel returned, when it
  returned a full list of `depth` candidates: a memory outside a truncated top-k scores at
  most that much there, so the floor is the tightest bound known without another query, and it
  neither rewards nor punishes a memory for falling just outside one channel's list. A channel
  that returned fewer than `depth` had nothing more to give: the stand-in is then 0.

A channel that returned nothing at all takes no part, so when only one channel returned
anything every candidate keeps its one score: there is nothing to blend with. `ran` changes
that for channels that ran and matched nothing: with calibrated scores (a channel's score
means the same for every query) "no match" is evidence, so such a channel takes part with 0
for every memory, and a query only one channel can match scores no higher than that
channel's share. The engine passes the channels that ran; the default (None) is the rule
above. Active channels whose weights are all 0 weigh equally. With the two channels and
`channel_weights(alpha)` = {semantic: alpha, lexical: 1 - alpha} this is exactly
`alpha * semantic + (1 - alpha) * lexical` (the two weights already sum to 1).

**Augmenting channels** (`traversal`, `hint`: the graph and prospective hints) do not blend
linearly: they add to the flat blend of the other (*anchored*) channels, never taking from a
memory they did not return, so a query they match nothing for ranks exactly as without them:

    s = s_flat + w[c] * score[c] * (1 - s_flat)       for each augmenting channel c that saw it

(`w[c]` capped at 1, so s stays within [0, 1]). A memory only augmenting channels saw (a
*solo* hit) gets the flat blend of the stand-ins as `s_flat`, and a hint-only hit is capped at
HINT_ONLY_CAP (Signet's 0.75); the traversal-only cap depends on the final cut (`recall/
flat_share.py`). When no anchored channel is active, augmenting channels blend like any other.

`source` names who saw a memory: `hybrid` (two or more channels), else that one channel's
label (`keyword`, `vector`, or a newer channel's own name). Evidence is kept exactly as each
channel reported it; stand-ins never appear as evidence. The defaults are what measured best
on the LoCoMo dev split (see docs/RECALL.md).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, Protocol

from signet_desktop.domain.recall import (
    ChannelEvidence,
    ContextEvidence,
    HitAdjustment,
    channel_label,
    evidence_map,
)

SingleChannelRule = Literal["raw", "zero", "floor"]

DEFAULT_ALPHA = 0.5
DEFAULT_SINGLE: SingleChannelRule = "floor"
HYBRID = "hybrid"
# Augmenting channels' weights: how far full evidence moves a score towards 1 (see above).
# Conservative, not tuned on LoCoMo (docs/RECALL.md, "Graph-aware recall").
TRAVERSAL_WEIGHT = 0.2
HINT_WEIGHT = 0.3
AUGMENTING = frozenset({"traversal", "hint"})
HINT_ONLY_CAP = 0.75
ANCHORED = frozenset({"lexical", "semantic"})


def channel_weights(alpha: float = DEFAULT_ALPHA) -> dict[str, float]:
    """Every channel's fusion weight; `alpha` (search.alpha) is the semantic channel's share."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError("alpha must be within [0, 1]")
    return {
        "lexical": 1 - alpha,
        "semantic": alpha,
        "traversal": TRAVERSAL_WEIGHT,
        "hint": HINT_WEIGHT,
    }


def is_solo(hit: FusedHit, channel: str) -> bool:
    """Only `channel` saw this memory (no anchored evidence)."""
    return set(hit.channels) == {channel}


def is_anchored(hit: FusedHit) -> bool:
    """A lexical or semantic channel returned this memory."""
    return any(name in ANCHORED for name in hit.channels)


class ChannelHit(Protocol):
    """A memory id with one channel's evidence (what every channel returns)."""

    @property
    def memory_id(self) -> str: ...

    @property
    def evidence(self) -> ChannelEvidence: ...


@dataclass(frozen=True, slots=True)
class FusedHit:
    """A fused candidate: final score, which channels saw it, and their evidence."""

    memory_id: str
    score: float
    source: str  # hybrid | keyword | vector | another channel's name
    channels: Mapping[str, ChannelEvidence] = field(default_factory=evidence_map, hash=False)
    context: ContextEvidence | None = None  # set by recall.context
    adjustments: tuple[HitAdjustment, ...] = ()  # appended by post-fusion stages (recall.stages)

    def __post_init__(self) -> None:
        object.__setattr__(self, "channels", evidence_map(self.channels))


def source_of(names: Collection[str]) -> str:
    """`hybrid` for two or more channels, else the one channel's label."""
    if len(names) >= 2:
        return HYBRID
    [name] = names
    return channel_label(name)


def check_weights(names: Collection[str], weights: Mapping[str, float]) -> None:
    """Every channel needs a finite weight >= 0 (ValueError otherwise)."""
    for name in names:
        if name not in weights:
            raise ValueError(f"no fusion weight for channel {name!r}")
        if not math.isfinite(weights[name]) or weights[name] < 0:
            raise ValueError(f"the fusion weight of channel {name!r} must be finite and >= 0")


def _stand_in(
    scores: Mapping[str, ChannelEvidence], single: SingleChannelRule, depth: int | None
) -> float:
    truncated = depth is None or len(scores) >= depth
    if single == "floor" and truncated:
        return min(ev.score for ev in scores.values())
    return 0.0


def _shares(names: tuple[str, ...], weights: Mapping[str, float]) -> dict[str, float]:
    """Each channel's weight renormalised over `names` (all 0: equal shares)."""
    total = sum(weights[name] for name in names)
    if total <= 0:
        return dict.fromkeys(names, 1 / len(names))
    return {name: weights[name] / total for name in names}


def fuse(
    channels: Mapping[str, Sequence[ChannelHit]],
    weights: Mapping[str, float],
    *,
    single: SingleChannelRule = DEFAULT_SINGLE,
    depth: int | None = None,
    ran: Collection[str] | None = None,
) -> list[FusedHit]:
    """Union of every channel's candidates, best first (ties: best channel rank, then id).

    `channels` maps each channel name to its hits, in the order evidence is listed; `depth`
    is how many candidates each channel was asked for (None: treat every list as truncated);
    `ran`: channels that take part (at 0) even when they returned nothing.
    """
    check_weights(channels.keys(), weights)
    seen = {name: {h.memory_id: h.evidence for h in hits} for name, hits in channels.items()}
    ran = () if ran is None else ran
    active = tuple(name for name, found in seen.items() if found or name in ran)
    flat = tuple(name for name in active if name not in AUGMENTING) or active
    extra = tuple(name for name in active if name not in flat)
    stand_in = {name: _stand_in(seen[name], single, depth) if seen[name] else 0.0 for name in flat}
    shares: dict[tuple[str, ...], dict[str, float]] = {}  # by the channels blended
    fused: list[FusedHit] = []
    for memory_id in {memory_id for name in active for memory_id in seen[name]}:
        evidence = {name: seen[name][memory_id] for name in active if memory_id in seen[name]}
        names = flat if single != "raw" else tuple(n for n in evidence if n in flat)
        score = _blend(names, evidence, stand_in, weights, shares)
        for name in extra:
            found = evidence.get(name)
            if found is not None:
                score += min(1.0, weights[name]) * found.score * (1.0 - score)
        if extra and set(evidence) == {"hint"}:
            score = min(score, HINT_ONLY_CAP)
        source = source_of(evidence)
        fused.append(FusedHit(memory_id, score, source, MappingProxyType(evidence)))
    fused.sort(key=order_key)
    return fused


def _blend(
    names: tuple[str, ...],
    evidence: Mapping[str, ChannelEvidence],
    stand_in: Mapping[str, float],
    weights: Mapping[str, float],
    shares: dict[tuple[str, ...], dict[str, float]],
) -> float:
    """The linear blend over `names` (evidence, else each channel's stand-in)."""
    if not names:
        return 0.0
    if len(names) == 1:
        found = evidence.get(names[0])  # nothing to blend with: the score as reported
        return found.score if found is not None else stand_in[names[0]]
    if names not in shares:
        shares[names] = _shares(names, weights)
    score = 0.0
    for name, share in shares[names].items():
        found = evidence.get(name)
        score += share * (found.score if found is not None else stand_in[name])
    return score


def order_key(hit: FusedHit) -> tuple[float, int, str]:
    """Best score first; ties by the best rank in any channel, then by id (deterministic)."""
    return (-hit.score, min([ev.rank for ev in hit.channels.values()]), hit.memory_id)
