"""The hint channel: BM25 over prospective hints, one hit per memory (its best hint).

A memory's hints are questions an LLM expected someone to ask of it (`service/hints/service.py`);
matching one says "this memory answers a question like yours", so the channel scores the
query against the hints exactly as the lexical channel scores it against memory text:

    score = min(1, |bm25 of the best hint| / sum(idf(t) for t in query terms))

with FTS5's IDF taken over the hints index (`recall/lexical.py: idf, query_ceiling`). Terms
are admitted rarest first within a postings budget (1,000; the most common terms are neither
matched nor scored; a query of only such terms matches no hint). Scope and filters are
`recall/filters.py`'s, over the hinted memory. `raw` keeps FTS5's bm25; `HintHit.hint` says
which hint matched. With no hint stored the channel costs one read of the index's averages
record; a query it matches nothing for leaves the channel out (`available: False`), so
recall ranks and labels exactly as without it.
"""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass

from signet_desktop.domain.recall import ChannelEvidence, RecallFilters
from signet_desktop.recall.channels import ChannelOutcome, ChannelRequest, Finish, StageClock
from signet_desktop.recall.filters import filter_sql
from signet_desktop.recall.lexical import LEXICAL_TOP_K, query_ceiling
from signet_desktop.recall.sanitize import match_expression, query_tokens
from signet_desktop.storage import hints as hint_rows
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres

NAME = "hint"
POOL_PER_HIT = 8  # hints ranked per wanted hit before scope (a memory holds up to 5-10)
# Postings the matched terms may read (rarest first). Tighter than the lexical channel's
# 10,000: hints are short, so their rare terms carry the match, and common ones only cost.
HINT_POSTINGS_BUDGET = 1000


@dataclass(frozen=True, slots=True)
class HintHit:
    """A memory matched through one of its hints: its evidence and the hint that matched."""

    memory_id: str
    evidence: ChannelEvidence
    hint: str


def _plan(conn: Connection, tokens: list[str]) -> tuple[list[str], dict[str, int]]:
    """Terms to match (rarest first within the postings budget) and every term's count."""
    cap = HINT_POSTINGS_BUDGET + 1
    counts = {t: hint_rows.hint_documents(conn, match_expression([t]) or "", cap) for t in tokens}
    matched: list[str] = []
    total = 0
    for token in sorted((t for t in tokens if counts[t] > 0), key=lambda t: counts[t]):
        if total + counts[token] > HINT_POSTINGS_BUDGET:
            break  # even the rarest term over budget: no match (too common to say anything)
        matched.append(token)
        total += counts[token]
    return matched, counts


def hint_search(
    conn: Connection, text: str, agent_id: str, filters: RecallFilters, k: int = LEXICAL_TOP_K
) -> list[HintHit]:
    """Top-k of the agent's live memories by their best matching hint, scored into (0, 1]."""
    tokens = query_tokens(text)
    rows = hint_rows.hint_rows(conn) if tokens else 0
    if not rows:  # no hint stored (by any agent): one read of the index's averages record
        return []
    matched, counts = _plan(conn, tokens)
    match = match_expression(matched)
    if match is None:
        return []
    postgres = is_postgres(conn)
    where, params = filter_sql(agent_id, filters, postgres=postgres)
    found = hint_rows.search_hints(conn, match, where, params, k, pool=k * POOL_PER_HIT)
    if not found:
        return []
    # PostgreSQL's ts_rank is normalised into (0, 1) already: no BM25 ceiling to scale by.
    ceiling = 1.0 if postgres else query_ceiling(counts, rows)
    ceiling = ceiling or max(abs(f.bm25) for f in found) or 1.0
    return [
        HintHit(
            f.memory_id,
            ChannelEvidence(score=min(1.0, abs(f.bm25) / ceiling), rank=i + 1, raw=f.bm25),
            f.hint,
        )
        for i, f in enumerate(found)
    ]


class HintChannel:
    """The `hint` recall channel: BM25 over the keyword text's hints, timed as stage `hint`."""

    name = NAME

    def start(self, conn: Connection, request: ChannelRequest, pool: Executor) -> Finish:
        """Nothing to start: the search runs in `finish`, on the caller's thread."""

        def finish(clock: StageClock) -> ChannelOutcome:
            with clock.stage(self.name):
                hits = hint_search(
                    conn, request.keyword_text, request.agent_id, request.filters, k=request.k
                )
            # No hint matched: the channel did not apply (as traversal without a focal entity),
            # so a store without hints recalls and labels exactly as without this channel.
            return ChannelOutcome(hits, available=bool(hits))

        return finish
