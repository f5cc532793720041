"""Evidence sources named by `source_ref` (`kind:id`): parse, load in scope, render canonically.

The text `render` returns is exactly what Dreaming shows a model (its evidence window and
search results use this module) and exactly what the apply seam checks quotes against, so a
quote the model copied from what it saw is verbatim here.

- `memory:<id>` — a live memory's content;
- `transcript:<session_key>` — a completed `session_transcripts` row; its canonical JSONL
  turns rendered one `role: text` per line (the row's stored text when the canonical file has
  no lines for it); an open (in-progress) transcript is refused;
- `artifact:<source_path>` — a live memory artifact's Markdown;
- `summary:<id>` — a `session_summaries` row.

Content safety: the source's stored text gets a verdict (a ledger decision of the current
policy version whose hash matches, else a scan in memory — reads never write); a source that
is not context-eligible is not evidence. An eligible one is rendered with secrets redacted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from signet_desktop.evidence.canonical import CanonicalFile
from signet_desktop.safety.policy import POLICY_VERSION, SafetyVerdict, scan, text_hash
from signet_desktop.safety.redact import redact_secrets
from signet_desktop.storage import content_safety
from signet_desktop.storage import memories as memory_rows
from signet_desktop.storage import transcripts as transcript_rows
from signet_desktop.storage.connect import Connection

SOURCE_KINDS = ("memory", "transcript", "artifact", "summary")
MAX_REF_CHARS = 1024

# Why a source cannot be evidence (stable codes; the seam reports them per operation).
BAD_REF = "source_ref_invalid"
NOT_FOUND = "source_not_found"
SCOPE_MISMATCH = "scope_mismatch"
IN_PROGRESS = "source_in_progress"
BLOCKED = "source_blocked"


@dataclass(frozen=True, slots=True)
class SourceRef:
    """A parsed `kind:id`."""

    kind: str
    source_id: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.source_id}"


@dataclass(frozen=True, slots=True)
class Source:
    """One loaded source: usable as evidence (`ok`) with its canonical text, or why not."""

    ref: SourceRef | None
    raw_ref: str
    ok: bool
    code: str | None = None
    reason: str | None = None
    text: str = ""
    complete: bool = True

    def contains(self, quote: str) -> bool:
        """Whether the trimmed quote occurs verbatim in the rendered text."""
        needle = quote.strip()
        return self.ok and bool(needle) and needle in self.text


def parse_ref(value: object) -> SourceRef | None:
    """`kind:id` with a known kind and a non-empty id, else None."""
    if not isinstance(value, str) or not value or len(value) > MAX_REF_CHARS:
        return None
    kind, sep, source_id = value.partition(":")
    kind = kind.strip().lower()
    if not sep or kind not in SOURCE_KINDS or not source_id.strip():
        return None
    return SourceRef(kind, source_id.strip())


def _refused(raw: str, ref: SourceRef | None, code: str, reason: str) -> Source:
    return Source(ref, raw, False, code, reason, complete=code != IN_PROGRESS)


class SourceReader:
    """Loads and renders sources for one agent scope, caching per reader (one call batch).

    Build one per tool call or apply request; it never writes. `workspace` is where the
    canonical transcript files live (None: render transcripts from their stored rows).
    """

    def __init__(self, conn: Connection, agent_id: str, workspace: Path | None = None) -> None:
        self._conn = conn
        self._agent = agent_id
        self._workspace = workspace
        self._cache: dict[str, Source] = {}
        self._canonical: dict[str, dict[str, list[tuple[int, str, str]]]] = {}

    @property
    def agent_id(self) -> str:
        return self._agent

    def load(self, raw_ref: object) -> Source:
        """The source `raw_ref` names, in this reader's scope (cached)."""
        key = raw_ref if isinstance(raw_ref, str) else repr(raw_ref)
        found = self._cache.get(key)
        if found is None:
            found = self._load(key, parse_ref(raw_ref))
            self._cache[key] = found
        return found

    def load_many(self, refs: Iterable[object]) -> list[Source]:
        return [self.load(ref) for ref in refs]

    def render(self, raw_ref: object) -> str | None:
        """The canonical text of a usable source, else None."""
        source = self.load(raw_ref)
        return source.text if source.ok else None

    # -- loading ---------------------------------------------------------------------------

    def _load(self, raw: str, ref: SourceRef | None) -> Source:
        if ref is None:
            return _refused(
                raw,
                None,
                BAD_REF,
                f"source_ref {raw[:80]!r} is not kind:id (kind one of {', '.join(SOURCE_KINDS)})",
            )
        loaded = _LOADERS[ref.kind](self, ref)
        if isinstance(loaded, Source):
            return loaded
        stored, rendered = loaded
        verdict = self._verdict(ref, stored)
        if not verdict.context_eligible:
            reasons = ", ".join(verdict.reasons) or verdict.status
            return _refused(raw, ref, BLOCKED, f"{ref} is withheld by content safety ({reasons})")
        return Source(ref, raw, True, text=redact_secrets(rendered))

    def _missing(self, ref: SourceRef, elsewhere: bool) -> Source:
        if elsewhere:
            return _refused(
                str(ref), ref, SCOPE_MISMATCH, f"scope mismatch: {ref} is not in this agent's scope"
            )
        return _refused(str(ref), ref, NOT_FOUND, f"{ref} does not exist")

    def _memory(self, ref: SourceRef) -> Source | tuple[str, str]:
        memory = memory_rows.get_memory(self._conn, self._agent, ref.source_id)
        if memory is None or memory.is_deleted:
            return self._missing(ref, memory is None and self._other_agent(ref))
        return memory.content, memory.content

    def _transcript(self, ref: SourceRef) -> Source | tuple[str, str]:
        row = transcript_rows.get_transcript(self._conn, self._agent, ref.source_id)
        if row is None:
            return self._missing(ref, self._other_agent(ref))
        if row.completed_at is None:  # live, or imported from a file still being written
            return _refused(
                str(ref), ref, IN_PROGRESS, f"{ref} is in progress (only completed transcripts)"
            )
        rendered = self._canonical_text(row.harness, ref.source_id, row.source_id)
        return row.content, rendered if rendered is not None else row.content

    def _artifact(self, ref: SourceRef) -> Source | tuple[str, str]:
        row = self._conn.execute(
            "SELECT content FROM memory_artifacts"
            " WHERE agent_id = :a AND source_path = :p AND removed_at IS NULL",
            {"a": self._agent, "p": ref.source_id},
        ).fetchone()
        if row is None:
            return self._missing(ref, self._other_agent(ref))
        return str(row["content"]), str(row["content"])

    def _summary(self, ref: SourceRef) -> Source | tuple[str, str]:
        row = self._conn.execute(
            "SELECT content FROM session_summaries WHERE agent_id = :a AND id = :i",
            {"a": self._agent, "i": ref.source_id},
        ).fetchone()
        if row is None:
            return self._missing(ref, self._other_agent(ref))
        return str(row["content"]), str(row["content"])

    def _other_agent(self, ref: SourceRef) -> bool:
        """Whether the id exists in some other agent's scope (to say "scope mismatch")."""
        table, column, live = _OWNER_LOOKUP[ref.kind]
        row = self._conn.execute(
            f"SELECT 1 FROM {table} WHERE {column} = :i AND agent_id <> :a{live} LIMIT 1",
            {"i": ref.source_id, "a": self._agent},
        ).fetchone()
        return row is not None

    # -- transcripts -----------------------------------------------------------------------

    def _canonical_text(
        self, harness: str | None, session_key: str, source_id: str | None
    ) -> str | None:
        """The session's canonical turns as `role: text` lines (None without a file)."""
        if self._workspace is None or not harness:
            return None
        sessions = self._canonical.get(harness)
        if sessions is None:
            sessions = self._read_canonical(harness)
            self._canonical[harness] = sessions
        lines = sessions.get(f"{session_key}\x00{source_id or ''}") or sessions.get(
            f"{session_key}\x00*"
        )
        if not lines:
            return None
        by_ordinal = {ordinal: f"{role}: {text}" for ordinal, role, text in lines}
        return "\n".join(by_ordinal[i] for i in sorted(by_ordinal))

    def _read_canonical(self, harness: str) -> dict[str, list[tuple[int, str, str]]]:
        assert self._workspace is not None
        found: dict[str, list[tuple[int, str, str]]] = {}
        for line in CanonicalFile(self._workspace, harness).tail(0).turns:
            if line.agent_id != self._agent:
                continue
            entry = (line.ordinal, line.turn.role, line.turn.text)
            found.setdefault(f"{line.session_key}\x00{line.source_id or ''}", []).append(entry)
            found.setdefault(f"{line.session_key}\x00*", []).append(entry)
        return found

    # -- content safety --------------------------------------------------------------------

    def _verdict(self, ref: SourceRef, stored: str) -> SafetyVerdict:
        decisions = content_safety.get_decisions(self._conn, self._agent, ref.kind, [ref.source_id])
        decision = decisions.get(ref.source_id)
        if (
            decision is not None
            and decision.policy_version == POLICY_VERSION
            and decision.content_hash == text_hash(stored)
        ):
            status: Any = decision.status
            return SafetyVerdict(status, decision.context_eligible, decision.reasons)
        return scan(stored)


_LOADERS = {
    "memory": SourceReader._memory,
    "transcript": SourceReader._transcript,
    "artifact": SourceReader._artifact,
    "summary": SourceReader._summary,
}
_OWNER_LOOKUP = {
    "memory": ("memories", "id", ""),
    "transcript": ("session_transcripts", "session_key", ""),
    "artifact": ("memory_artifacts", "source_path", " AND removed_at IS NULL"),
    "summary": ("session_summaries", "id", ""),
}


def evidence_json(evidence: Iterable[tuple[str, str]]) -> str:
    """`[{quote, source_ref}]` as stored beside applied rows and proposals."""
    return json.dumps(
        [{"quote": quote, "source_ref": ref} for quote, ref in evidence], ensure_ascii=False
    )
