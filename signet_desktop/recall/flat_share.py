"""The final cut with graph evidence: traversal-only hits capped, a flat share reserved.

Two rules keep a highly connected entity from drowning direct matches, applied after fusion,
the context signals and the post-fusion stages, on the candidates that pass `min_score`:

1. **Traversal-only cap.** A memory only the traversal channel saw is capped just below the
   lowest *anchored* score (lexical or semantic evidence) among the top `limit` results, so
   it never ranks above a memory a direct channel found; it may still fill a slot below them.
2. **Reserved flat share** (Signet's): with candidateBudget = max(limit, min(top_k, 4 * limit)),
   *flat-only* candidates (anchored evidence, not reached by traversal) keep at least
   ceil(share * budget) of the budget's slots, and ceil(share * limit) of the final `limit`
   slots, when that many exist. The lowest graph-reached hits in the window make room: each
   is scored just below the lowest flat-only hit promoted past it.

Both record a `HitAdjustment` on every hit they moved (`cap.traversal_only`, `flat_share`),
and neither does anything when no hit has traversal evidence (recall is then the flat hybrid).
"""

from __future__ import annotations

import math

from signet_desktop.recall.fusion import FusedHit, is_anchored, is_solo
from signet_desktop.recall.stages import resorted, scored

EPSILON = 1e-6
DEFAULT_FLAT_SHARE = 0.4
TRAVERSAL = "traversal"


def candidate_budget(limit: int, top_k: int) -> int:
    """Signet's candidateBudget = max(limit, min(top_k, 4 * limit))."""
    return max(limit, min(top_k, 4 * limit))


def is_flat_only(hit: FusedHit) -> bool:
    """Anchored evidence and not reached by traversal."""
    return is_anchored(hit) and TRAVERSAL not in hit.channels


def cap_traversal_only(hits: list[FusedHit], limit: int) -> list[FusedHit]:
    """Traversal-only hits scored just below the lowest anchored score in the top `limit`."""
    anchored = [h.score for h in hits[:limit] if is_anchored(h)]
    if not anchored or not any(is_solo(h, TRAVERSAL) for h in hits):
        return hits
    cap = min(anchored)
    out: list[FusedHit] = []
    place = 0
    for hit in hits:
        if is_solo(hit, TRAVERSAL) and hit.score >= cap:
            place += 1
            reason = f"traversal-only: capped below the lowest anchored score ({cap:.3f})"
            out.append(scored(hit, "cap.traversal_only", cap - EPSILON * place, reason))
        else:
            out.append(hit)
    return resorted(out)


def reserve_flat(hits: list[FusedHit], slots: int, share: float) -> list[FusedHit]:
    """At least ceil(share * slots) flat-only hits within the first `slots` (when available)."""
    window = hits[:slots]
    need = math.ceil(share * min(slots, len(hits)))
    have = sum(1 for h in window if is_flat_only(h))
    if have >= need:
        return hits
    promoted = [h for h in hits[slots:] if is_flat_only(h)][: need - have]
    if not promoted:
        return hits
    movable = [i for i, h in enumerate(window) if not is_flat_only(h)]
    demote = set(movable[-len(promoted) :])
    floor = min(h.score for h in promoted)
    reason = f"reserved flat share: {need} of {slots} slots kept for direct matches"
    out: list[FusedHit] = []
    for i, hit in enumerate(hits):
        if i in demote:
            out.append(scored(hit, "flat_share", floor - EPSILON * (i + 1), reason))
        else:
            out.append(hit)
    return resorted(out)


def final_order(
    hits: list[FusedHit], *, limit: int, top_k: int, share: float = DEFAULT_FLAT_SHARE
) -> list[FusedHit]:
    """Both rules, when any hit carries traversal evidence (else `hits` unchanged)."""
    if not any(TRAVERSAL in h.channels for h in hits):
        return hits
    hits = cap_traversal_only(hits, limit)
    if share > 0:
        hits = reserve_flat(hits, candidate_budget(limit, top_k), share)
        hits = reserve_flat(hits, limit, share)
    return hits
