"""What an import run did, read back from the rows it wrote (reads only).

The run's counters say how many; this says which and why: the files it touched by state and
reason (`source_import_files.last_error`), its sessions' outcomes and reasons
(`source_import_records`), and — for the sessions it imported — how many were subagent
transcripts and which message records were kept out of turns (their `source_meta_json`).
"""

from __future__ import annotations

from collections import Counter

from signet_desktop.domain.sources import RunAccount
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres

IN_PROGRESS = "in progress"  # a pending file's reason when its session was live (a prefix)

FILES_OF_RUN = """
SELECT status, last_error, COUNT(*) AS n FROM source_import_files
WHERE agent_id = :a AND last_run_id = :run
GROUP BY status, last_error
"""
RECORDS_OF_RUN = """
SELECT outcome, last_error, COUNT(*) AS n FROM source_import_records
WHERE agent_id = :a AND last_run_id = :run AND outcome <> 'imported'
GROUP BY outcome, last_error
"""
KEPT_OUT_OF_RUN = """
SELECT kept.key AS reason, SUM(kept.value) AS n
FROM source_import_records AS r
JOIN session_transcripts AS t
    ON t.agent_id = r.agent_id AND t.source_id = r.source_id
    AND t.source_record_id = r.source_record_id,
    json_each(t.source_meta_json, '$.keptOut') AS kept
WHERE r.agent_id = :a AND r.last_run_id = :run AND r.outcome = 'imported'
GROUP BY kept.key
"""
SUBAGENTS_OF_RUN = """
SELECT COUNT(*) FROM source_import_records AS r
JOIN session_transcripts AS t
    ON t.agent_id = r.agent_id AND t.source_id = r.source_id
    AND t.source_record_id = r.source_record_id
WHERE r.agent_id = :a AND r.last_run_id = :run AND r.outcome = 'imported'
    AND json_extract(t.source_meta_json, '$.parentSessionId') IS NOT NULL
"""

# PostgreSQL: the keptOut object's pairs and the parent's key read as jsonb.
KEPT_OUT_OF_RUN_PG = """
SELECT kept.key AS reason, SUM(CAST(kept.value AS bigint)) AS n
FROM source_import_records AS r
JOIN session_transcripts AS t
    ON t.agent_id = r.agent_id AND t.source_id = r.source_id
    AND t.source_record_id = r.source_record_id,
    jsonb_each_text(t.source_meta_json -> 'keptOut') AS kept(key, value)
WHERE r.agent_id = :a AND r.last_run_id = :run AND r.outcome = 'imported'
GROUP BY kept.key
"""
SUBAGENTS_OF_RUN_PG = SUBAGENTS_OF_RUN.replace(
    "json_extract(t.source_meta_json, '$.parentSessionId')",
    "t.source_meta_json ->> 'parentSessionId'",
)


def run_account(conn: Connection, agent_id: str, run_id: str) -> RunAccount:
    """The account of one run (files and sessions it last touched)."""
    params = {"a": agent_id, "run": run_id}
    files: Counter[str] = Counter()
    file_reasons: Counter[str] = Counter()
    for row in conn.execute(FILES_OF_RUN, params):
        status, reason, n = str(row["status"]), row["last_error"], int(row["n"])
        if status == "pending" and str(reason or "").startswith(IN_PROGRESS):
            status = "in_progress"
        files[status] += n
        if status not in ("imported", "in_progress") and reason:
            file_reasons[str(reason)] += n
    records: Counter[str] = Counter()
    for row in conn.execute(RECORDS_OF_RUN, params):
        records[f"{row['outcome']}: {row['last_error'] or 'no reason'}"] += int(row["n"])
    postgres = is_postgres(conn)
    kept_sql = KEPT_OUT_OF_RUN_PG if postgres else KEPT_OUT_OF_RUN
    kept = {str(r["reason"]): int(r["n"]) for r in conn.execute(kept_sql, params)}
    subagents_sql = SUBAGENTS_OF_RUN_PG if postgres else SUBAGENTS_OF_RUN
    subagents = int(conn.execute(subagents_sql, params).fetchone()[0])
    return RunAccount(dict(files), dict(file_reasons), dict(records), subagents, kept)
