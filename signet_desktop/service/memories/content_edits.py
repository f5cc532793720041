"""What a memory's content edit does beyond its row, inside the same write transaction.

The row itself (text, hash, version, extraction status) is written by the memory service and
FTS follows by trigger. Here, everything derived from the old text is brought in line:

- its vectors are dropped in every generation; the new one follows the write (the vector
  batcher, or the inline vector attached by the caller), never a provider call in here;
- its prospective hints are dropped (the hints worker asks again for the new text);
- remember-time entity links are derived from the new text (existing entities only);
- every derived graph row citing the memory (storage/citations.py) whose quotes the new text
  no longer holds gets a pending `review_due` attention on itself (`claim:<id>`, `link:<id>`,
  `entity:<id>`) for Dreaming: the next pass re-reads the memory (its new version is new
  evidence) and keeps, supersedes or archives the row (an archive cites that attention).
  Rows are not changed here: whether a claim still holds is Dreaming's judgement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from signet_desktop.domain.memory import Memory
from signet_desktop.dreaming.sources import Source, SourceReader
from signet_desktop.embedding.vectors import delete_source_vectors
from signet_desktop.service.knowledge.mention_linking import link_mentions
from signet_desktop.storage import attention, citations
from signet_desktop.storage import hints as hint_rows
from signet_desktop.storage.connect import Connection

REVIEW_KIND = "review_due"
REVIEW_REASON = "evidence_changed"
REVIEW_PRIORITY = 60  # above the default 50: a row's cited text is gone
QUOTE_CHARS = 200  # per missing quote kept in the attention's details
MAX_QUOTES = 5
MAX_LISTED = 50  # flagged refs named in the history event (all are counted)


@dataclass(frozen=True, slots=True)
class EditEffects:
    """What one content edit did to the memory's derived rows."""

    flagged: tuple[str, ...] = ()
    vectors_dropped: int = 0
    hints_dropped: int = 0
    mentions_added: int = 0

    def as_metadata(self) -> dict[str, Any]:
        """The history event's account of it (refs only, never quoted text)."""
        return {
            "flaggedForReview": len(self.flagged),
            "flaggedRefs": list(self.flagged[:MAX_LISTED]),
            "vectorsDropped": self.vectors_dropped,
            "hintsDropped": self.hints_dropped,
            "mentionsAdded": self.mentions_added,
        }


def apply_content_edit(conn: Connection, before: Memory, after: Memory) -> EditEffects:
    """Bring the memory's derived rows in line with its new text (`after`, as written)."""
    vectors = delete_source_vectors(conn, [after.id])
    hints = hint_rows.delete_for_memory(conn, after.agent_id, after.id)
    added = link_mentions(conn, after)
    flagged = flag_citations(conn, before, after)
    return EditEffects(flagged, vectors, hints, added)


def flag_citations(conn: Connection, before: Memory, after: Memory) -> tuple[str, ...]:
    """Open a review attention on every row whose cited text `after` no longer holds."""
    source = SourceReader(conn, after.agent_id).load(f"memory:{after.id}")
    flagged: list[str] = []
    for citation in citations.citing_rows(conn, after.agent_id, after.id):
        missing = [q for q in citation.quotes if not _holds(source, q, citation.kind)]
        if citation.quotes and not missing:
            continue
        attention.create_attention(
            conn,
            agent_id=after.agent_id,
            kind=REVIEW_KIND,
            subject_ref=citation.ref,
            details=_details(before, after, missing),
            priority=REVIEW_PRIORITY,
        )
        flagged.append(citation.ref)
    return tuple(flagged)


def _holds(source: Source, quote: str, kind: str) -> bool:
    """Whether the new text still holds a quote, as the apply seam checks quotes (verbatim
    in the rendered source); an entity's name or mention may differ in case."""
    if source.contains(quote):
        return True
    needle = quote.strip().casefold()
    return kind == "entity" and source.ok and bool(needle) and needle in source.text.casefold()


def _details(before: Memory, after: Memory, missing: list[str]) -> dict[str, Any]:
    quotes = [q[:QUOTE_CHARS] for q in missing if q][:MAX_QUOTES]
    return {
        "reason": REVIEW_REASON,
        "sourceRef": f"memory:{after.id}",
        "memoryId": after.id,
        "fromVersion": before.version,
        "toVersion": after.version,
        "missingQuotes": quotes,
        "note": (
            "the memory's content was edited; this row cites text the memory no longer "
            "holds (its whole text when no quote is named): re-read the memory and keep, "
            "supersede or archive the row"
        ),
    }
