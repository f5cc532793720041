"""Import sources: a harness history (or another store) registered to bring evidence in.

A source is one root (`~/.claude/projects`, `~/.codex/sessions`, a Signet workspace) of one
kind for one agent. Each import over it is a run with counters; each file it staged and each
record (one harness session) it imported are rows that let a restart resume. Removing it
purges what it brought and keeps a bounded tombstone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from signet_desktop.domain.errors import check_match

SOURCE_KINDS_PATTERN = re.compile(r"[a-z][a-z0-9-]{0,31}")
_SOURCE_ID = re.compile(r"src_[0-9a-f]{32}")
_RUN_ID = re.compile(r"run_[0-9a-f]{32}")
RECORD_OUTCOMES = ("pending", "imported", "skipped", "failed", "duplicate")


def check_source_id(value: object) -> str:
    """A source id as `new_source_id` makes them; anything else is refused (not looked up)."""
    return check_match(
        value, _SOURCE_ID, "source id must look like src_<32 hex>", "source_id_invalid"
    )


def check_run_id(value: object) -> str:
    return check_match(value, _RUN_ID, "run id must look like run_<32 hex>", "run_id_invalid")


@dataclass(frozen=True, slots=True)
class Source:
    """A registered import root (`status` active|paused|error|removing|removed)."""

    id: str
    agent_id: str
    kind: str
    name: str
    root_path: str
    status: str
    last_error: str | None
    created_at: str
    updated_at: str
    removed_at: str | None = None


@dataclass(frozen=True, slots=True)
class ImportCounts:
    """A run's counters (also the increments an importer adds as it goes)."""

    files_seen: int = 0
    files_changed: int = 0
    records_seen: int = 0
    records_imported: int = 0
    records_skipped: int = 0
    records_duplicate: int = 0
    records_failed: int = 0
    turns_imported: int = 0

    def plus(self, other: ImportCounts) -> ImportCounts:
        return ImportCounts(*(getattr(self, name) + getattr(other, name) for name in COUNT_FIELDS))


COUNT_FIELDS = tuple(ImportCounts.__dataclass_fields__)


@dataclass(frozen=True, slots=True)
class RunAccount:
    """What one run did with every file and session it read, by outcome and reason (read
    from the file and record rows the run wrote, so it agrees with them after a crash)."""

    files: Mapping[str, int] = field(default_factory=dict)  # imported, in_progress, skipped, …
    file_reasons: Mapping[str, int] = field(default_factory=dict)  # why not imported
    record_reasons: Mapping[str, int] = field(default_factory=dict)  # "duplicate: captured live"
    subagents: int = 0  # subagent transcripts among the sessions imported
    kept_out: Mapping[str, int] = field(default_factory=dict)  # messages that are not turns


@dataclass(frozen=True, slots=True)
class ImportRun:
    """One import attempt (`status` running|completed|failed|cancelled|interrupted)."""

    id: str
    source_id: str
    agent_id: str
    status: str
    triggered_by: str
    counts: ImportCounts
    error: str | None
    started_at: str
    finished_at: str | None
    files_total: int | None = None  # while running: files the importer found to go through
    account: RunAccount | None = None  # filled by `ImportService.run`


@dataclass(frozen=True, slots=True)
class ImportFile:
    """One file of a source as last inventoried and staged."""

    id: str
    source_id: str
    relative_path: str
    staged_path: str | None
    byte_offset: int
    content_hash: str | None
    size_bytes: int | None
    mtime: str | None
    status: str
    last_error: str | None


@dataclass(frozen=True, slots=True)
class ImportRecord:
    """One source record (a harness session) and where its turns went."""

    id: str
    source_id: str
    source_record_id: str
    file_id: str | None
    session_key: str | None
    content_hash: str | None
    outcome: str
    attempts: int
    turn_count: int
    canonical_path: str | None
    canonical_offset: int | None
    last_error: str | None


@dataclass(frozen=True, slots=True)
class SourceTotals:
    """What a source holds now, over every run: records by outcome, turns, files."""

    records: Mapping[str, int]
    turns: int
    files: int
    lines_skipped: int = 0  # unreadable lines in the imported sessions' files


@dataclass(frozen=True, slots=True)
class SourceDetail:
    """A source with its recent runs and totals."""

    source: Source
    runs: list[ImportRun]
    totals: SourceTotals


@dataclass(frozen=True, slots=True)
class ImportTicket:
    """An accepted import: which source and run to follow."""

    source_id: str
    run_id: str
    created: bool  # a new source row (False: a run over an existing one)


@dataclass(frozen=True, slots=True)
class PurgeReport:
    """What removing a source purges (dry run) or purged: counts per kind of row or file."""

    source: Source
    dry_run: bool
    purged: Mapping[str, int] = field(default_factory=dict)
    tombstone_id: str | None = None


@dataclass(frozen=True, slots=True)
class SourceTombstone:
    """The bounded audit left after a source was removed."""

    id: str
    agent_id: str
    source_id: str
    kind: str
    name: str
    root_path: str
    reason: str | None
    removed_by: str
    purged: Mapping[str, int]
    removed_at: str
