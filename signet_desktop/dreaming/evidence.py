"""The evidence window of a pass: new scoped evidence, gated, token-estimated, packed.

Candidates are the agent's completed transcripts, live memories, summary and compaction
artifacts and session summaries not yet consumed at their current revision
(`storage/dreaming_evidence.py: pending_sources`), oldest first. Each is rendered through
`dreaming/sources.py` (the text the apply seam checks quotes against, so a quote copied from
the window is verbatim there). A source content safety withholds becomes an exclusion with
its reason and a terminal `unsafe` review of that revision (so it is not a candidate again
until it changes); an in-progress transcript is never a candidate. Sources are packed until
`max_input_tokens` (less what the runbook and tools need) is reached; one source larger than
`MAX_ITEM_SHARE` of the budget goes in as its head, marked truncated (search_evidence reaches
the rest). What did not fit is listed as left out (`budget`) and the next pass continues.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from signet_desktop.dreaming import sources
from signet_desktop.storage import dreaming_evidence
from signet_desktop.storage.connect import Connection

CHARS_PER_TOKEN = dreaming_evidence.CHARS_PER_TOKEN
MAX_CANDIDATES = 5_000  # sources considered per pass (the rest wait for the next one)
MAX_ITEM_SHARE = 0.5  # one source takes at most half the evidence budget
RESERVED_TOKENS = 6_000  # system prompt, runbook and tool schemas


def estimate_tokens(text: str) -> int:
    """A provider-neutral estimate: four characters a token, rounded up."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


@dataclass(frozen=True, slots=True)
class WindowItem:
    """One source in the window (its rendered text is what the model reads)."""

    ref: str
    kind: str
    source_id: str
    revision: str
    at: str
    tokens: int
    text: str
    truncated: bool = False

    def record(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "kind": self.kind,
            "revision": self.revision,
            "at": self.at,
            "tokens": self.tokens,
            "truncated": self.truncated,
        }


@dataclass(frozen=True, slots=True)
class EvidenceWindow:
    """The packed window, what was left out (and why) and the exclusions to record."""

    items: tuple[WindowItem, ...]
    left_out: tuple[tuple[str, str], ...]  # (ref, reason)
    exclusions: tuple[tuple[str, str, str], ...]  # (kind, source_id, reason)
    unsafe: tuple[tuple[str, str, str, str], ...]  # (kind, source_id, revision, reason)
    attention: tuple[dict[str, Any], ...]
    budget_tokens: int
    candidates: int
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return sum(item.tokens for item in self.items)

    @property
    def truncated(self) -> bool:
        """Whether evidence was left out for lack of budget (a continuation is due)."""
        return any(reason == "budget" for _, reason in self.left_out)

    @property
    def empty(self) -> bool:
        """Nothing to consolidate: no evidence in the window and no pending attention."""
        return not self.items and not self.attention

    def record(self) -> dict[str, Any]:
        """The JSON stored in `dreaming_passes.evidence_window_json`."""
        return {
            "budgetTokens": self.budget_tokens,
            "tokens": self.tokens,
            "candidates": self.candidates,
            "items": [item.record() for item in self.items],
            "leftOut": [{"ref": ref, "reason": reason} for ref, reason in self.left_out],
            "excluded": [
                {"ref": f"{kind}:{source_id}", "reason": reason}
                for kind, source_id, reason in self.exclusions
            ],
            "attention": [str(a.get("id")) for a in self.attention],
            "truncated": self.truncated,
            **self.extra,
        }

    def consumption(self) -> list[tuple[str, str, str, int]]:
        """(kind, source_id, revision, tokens) to record once the pass completed."""
        return [(i.kind, i.source_id, i.revision, i.tokens) for i in self.items]

    def prompt_text(self) -> str:
        """The window as the model reads it: one block per source, then pending attention."""
        parts: list[str] = []
        for item in self.items:
            note = " (truncated: search_evidence for the rest)" if item.truncated else ""
            parts.append(f"<source ref={item.ref!r} at={item.at!r}{note}>\n{item.text}\n</source>")
        for row in self.attention:
            parts.append(
                f"<attention ref='attention:{row.get('id')}' kind={row.get('kind')!r}"
                f" subject={row.get('subject_ref')!r}>{row.get('details', {})}</attention>"
            )
        return "\n\n".join(parts) if parts else "(no new evidence)"


def build_window(
    conn: Connection,
    reader: sources.SourceReader,
    *,
    max_input_tokens: int,
    attention: tuple[dict[str, Any], ...] = (),
    reserved_tokens: int = RESERVED_TOKENS,
    max_candidates: int = MAX_CANDIDATES,
) -> EvidenceWindow:
    """Select and pack the agent's new evidence (reads only)."""
    budget = max(1_000, max_input_tokens - reserved_tokens)
    item_cap = int(budget * MAX_ITEM_SHARE)
    rows = dreaming_evidence.pending_sources(conn, reader.agent_id, max_candidates)
    items: list[WindowItem] = []
    left_out: list[tuple[str, str]] = []
    exclusions: list[tuple[str, str, str]] = []
    unsafe: list[tuple[str, str, str, str]] = []
    used = 0
    for kind, source_id, revision, at, _stored in rows:
        ref = f"{kind}:{source_id}"
        source = reader.load(ref)
        if not source.ok:
            if source.code == sources.BLOCKED:
                reason = source.reason or "withheld by content safety"
                exclusions.append((kind, source_id, reason))
                unsafe.append((kind, source_id, revision, reason))
            elif source.code == sources.IN_PROGRESS:
                left_out.append((ref, "in_progress"))
            else:
                left_out.append((ref, source.code or "unavailable"))
            continue
        text = source.text
        tokens = estimate_tokens(text)
        truncated = False
        if tokens > item_cap:
            text = text[: item_cap * CHARS_PER_TOKEN]
            tokens, truncated = estimate_tokens(text), True
        if used + tokens > budget:
            left_out.append((ref, "budget"))
            continue
        used += tokens
        items.append(WindowItem(ref, kind, source_id, revision, at, tokens, text, truncated))
    return EvidenceWindow(
        tuple(items),
        tuple(left_out),
        tuple(exclusions),
        tuple(unsafe),
        tuple(attention),
        budget,
        len(rows),
    )
