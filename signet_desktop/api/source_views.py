"""Wire shapes of the import sources (`/api/sources*`), beside `views.py` for the rest.

camelCase like Signet's own `/api/sources` answers; counters by their schema names in
camelCase (`filesSeen`, `recordsImported`, ...).
"""

from __future__ import annotations

from typing import Any

from signet_desktop.api.views import camel
from signet_desktop.domain.sources import (
    COUNT_FIELDS,
    ImportCounts,
    ImportRun,
    ImportTicket,
    PurgeReport,
    RunAccount,
    Source,
    SourceDetail,
)


def counts_json(counts: ImportCounts) -> dict[str, int]:
    return {camel(name): getattr(counts, name) for name in COUNT_FIELDS}


def source_json(source: Source) -> dict[str, Any]:
    return {
        "id": source.id,
        "agentId": source.agent_id,
        "kind": source.kind,
        "name": source.name,
        "rootPath": source.root_path,
        "status": source.status,
        "lastError": source.last_error,
        "createdAt": source.created_at,
        "updatedAt": source.updated_at,
    }


def import_run_json(run: ImportRun) -> dict[str, Any]:
    return {
        "id": run.id,
        "sourceId": run.source_id,
        "status": run.status,
        "triggeredBy": run.triggered_by,
        "counts": counts_json(run.counts),
        "error": run.error,
        "startedAt": run.started_at,
        "finishedAt": run.finished_at,
        "filesTotal": run.files_total,
        "account": None if run.account is None else account_json(run.account),
    }


def account_json(account: RunAccount) -> dict[str, Any]:
    """Which files and sessions a run imported or left, and why (reason -> count)."""
    return {
        "files": {camel(name): n for name, n in account.files.items()},
        "fileReasons": dict(account.file_reasons),
        "sessionReasons": dict(account.record_reasons),
        "subagents": account.subagents,
        "keptOut": dict(account.kept_out),
    }


def source_detail_json(detail: SourceDetail) -> dict[str, Any]:
    """GET /api/sources/{id}: the source, its recent runs (newest first) and its totals."""
    return {
        **source_json(detail.source),
        "runs": [import_run_json(run) for run in detail.runs],
        "totals": {
            "records": dict(detail.totals.records),
            "turns": detail.totals.turns,
            "files": detail.totals.files,
            "linesSkipped": detail.totals.lines_skipped,
        },
    }


def import_ticket_json(ticket: ImportTicket) -> dict[str, Any]:
    """POST /api/sources/import (202): what to follow."""
    return {"sourceId": ticket.source_id, "runId": ticket.run_id, "created": ticket.created}


def purge_report_json(report: PurgeReport) -> dict[str, Any]:
    """DELETE /api/sources/{id}: what was (or, in a dry run, would be) purged."""
    return {
        "sourceId": report.source.id,
        "dryRun": report.dry_run,
        "purged": dict(report.purged),
        "tombstoneId": report.tombstone_id,
    }
