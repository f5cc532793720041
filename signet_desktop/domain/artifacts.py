"""Markdown artifacts (transcript, summary, compaction history) and MEMORY.md: values, events.

An artifact is an immutable Markdown file under `$SIGNET_WORKSPACE/memory/` named
`{captured_at}--{session_token}--{kind}.md`; `memory_artifacts` indexes it and can be
rebuilt from the files. A session token names a session on disk: a readable slug of the
session key plus a hash of (agent, session key), so two agents' sessions never share files.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import ClassVar, Literal

from signet_desktop.domain.events import Event

ArtifactKind = Literal["transcript", "summary", "compaction"]
ARTIFACT_KINDS: tuple[ArtifactKind, ...] = ("transcript", "summary", "compaction")
_SLUG_UNSAFE = re.compile(r"[^a-z0-9]+")
SLUG_CHARS = 24


def session_token(agent_id: str, session_key: str) -> str:
    """`{slug}-{hash8}`: lower-case letters, digits and single dashes (never `--`)."""
    slug = _SLUG_UNSAFE.sub("-", session_key.lower()).strip("-")[:SLUG_CHARS].strip("-")
    digest = hashlib.sha256(f"{agent_id}\x00{session_key}".encode()).hexdigest()[:8]
    return f"{slug}-{digest}" if slug else digest


@dataclass(frozen=True, slots=True)
class ArtifactMeta:
    """What an artifact's frontmatter says (and its index row repeats)."""

    kind: ArtifactKind
    agent_id: str
    session_key: str
    session_token: str
    captured_at: str
    harness: str | None = None
    project: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    memory_sentence: str | None = None


@dataclass(frozen=True, slots=True)
class Artifact:
    """One indexed artifact: its metadata, its path under the workspace, its hash and body."""

    meta: ArtifactMeta
    source_path: (
        str  # relative to the workspace root, e.g. memory/2026...--s1-ab12cd34--transcript.md
    )
    content_hash: str
    content: str


@dataclass(frozen=True, slots=True)
class ReindexReport:
    """What a re-index did: rows written or refreshed, rows removed, files left out."""

    indexed: int
    removed: int
    tombstoned: int
    unreadable: int


@dataclass(frozen=True, slots=True)
class RemovedSession:
    """A session's artifacts removed: rows deleted, files deleted, the tombstone kept."""

    session_token: str
    rows: int
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ArtifactWritten(Event):
    """A Markdown artifact was written and indexed."""

    kind: ClassVar[str] = "artifact.written"
    session_key: str
    artifact_kind: str
    path: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryMdRebuilt(Event):
    """MEMORY.md was rebuilt (`changed`: the bytes differ from the previous file)."""

    kind: ClassVar[str] = "memory_md.rebuilt"
    path: str
    changed: bool
    size: int


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryMdFailed(Event):
    """MEMORY.md could not be written; the previous file is intact."""

    kind: ClassVar[str] = "memory_md.failed"
    path: str
    error: str
