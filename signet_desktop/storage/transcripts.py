"""session_transcripts (the index of retained transcripts) and canonical_transcript_files."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from signet_desktop.domain.memory import utc_now
from signet_desktop.domain.sessions import SessionTranscript, TranscriptHit
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres
from signet_desktop.storage.rows import TableRows, from_row, rows_changed, scalar_int, texts

COLUMNS = (
    "agent_id, session_key, harness, project, content, turn_count, created_at, updated_at, "
    "completed_at, content_hash, source_id"
)


FIRST_PROMPT_CHARS = 400  # a list row's title: enough for two lines, never a whole prompt
# A listed session's first user prompt and own start, from its first turns (the unique
# (session_seq, ordinal) index: a page of rows costs a page of short index walks).
_OPENING = (
    f"(SELECT substr(u.text, 1, {FIRST_PROMPT_CHARS}) FROM transcript_turns u "
    "WHERE u.session_seq = session_transcripts.seq AND u.role = 'user' "
    "ORDER BY u.ordinal LIMIT 1) AS first_prompt, "
    "(SELECT f.timestamp FROM transcript_turns f "
    "WHERE f.session_seq = session_transcripts.seq AND f.timestamp IS NOT NULL "
    "ORDER BY f.ordinal LIMIT 1) AS started_at"
)


def _row(row: Any) -> SessionTranscript:
    listed = "first_prompt" in row.keys()  # noqa: SIM118 (`in row` tests its values)
    return from_row(
        SessionTranscript,
        row,
        turn_count=int(row["turn_count"]),
        first_prompt=row["first_prompt"] if listed else None,
        started_at=row["started_at"] if listed else None,
    )


ROWS = TableRows("session_transcripts", COLUMNS, _row)


def get_transcript(conn: Connection, agent_id: str, session_key: str) -> SessionTranscript | None:
    return ROWS.one(conn, "agent_id = :a AND session_key = :k", {"a": agent_id, "k": session_key})


def save_transcript(
    conn: Connection,
    *,
    agent_id: str,
    session_key: str,
    harness: str,
    project: str | None,
    content: str,
    turn_count: int,
    content_hash: str,
    complete: bool,
) -> None:
    """Insert or replace the session's text and turn count; `complete` stamps completed_at."""
    now = utc_now()
    conn.execute(
        """
        INSERT INTO session_transcripts (session_key, agent_id, content, harness, project,
            created_at, updated_at, completed_at, content_hash, turn_count)
        VALUES (:k, :a, :content, :h, :p, :now, :now, :done, :hash, :turns)
        ON CONFLICT (agent_id, session_key) DO UPDATE SET
            content = excluded.content,
            harness = COALESCE(session_transcripts.harness, excluded.harness),
            project = COALESCE(session_transcripts.project, excluded.project),
            updated_at = excluded.updated_at,
            completed_at = COALESCE(excluded.completed_at, session_transcripts.completed_at),
            content_hash = excluded.content_hash,
            turn_count = excluded.turn_count
        """,
        {
            "k": session_key,
            "a": agent_id,
            "content": content,
            "h": harness,
            "p": project,
            "now": now,
            "done": now if complete else None,
            "hash": content_hash,
            "turns": turn_count,
        },
    )


def complete_transcript(conn: Connection, agent_id: str, session_key: str) -> bool:
    """Mark an open row complete (session end, recovery, TTL); False if none was open."""
    cursor = conn.execute(
        "UPDATE session_transcripts SET completed_at = :now, updated_at = :now "
        "WHERE agent_id = :a AND session_key = :k AND completed_at IS NULL",
        {"a": agent_id, "k": session_key, "now": utc_now()},
    )
    return bool(cursor.rowcount)


@dataclass(frozen=True, slots=True)
class TranscriptListing:
    """One page of an agent's transcripts (content left out) and how many match."""

    rows: list[SessionTranscript]
    total: int


def list_transcripts(
    conn: Connection,
    agent_id: str,
    *,
    harness: str | None = None,
    project: str | None = None,
    status: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> TranscriptListing:
    where = ["agent_id = :a"]
    params: dict[str, Any] = {"a": agent_id, "limit": limit, "offset": offset}
    if harness is not None:
        where.append("harness = :h")
        params["h"] = harness
    if project is not None:
        where.append("project = :p")
        params["p"] = project
    if status == "open":
        where.append("completed_at IS NULL AND source_id IS NULL")
    elif status == "completed":
        where.append("completed_at IS NOT NULL AND source_id IS NULL")
    elif status == "imported":
        where.append("source_id IS NOT NULL")
    clause = " AND ".join(where)
    columns = COLUMNS.replace("content,", "'' AS content,") + ", " + _OPENING
    rows = conn.execute(
        f"SELECT {columns} FROM session_transcripts WHERE {clause} "
        "ORDER BY updated_at DESC, seq DESC LIMIT :limit OFFSET :offset",
        params,
    ).fetchall()
    total = conn.execute(
        f"SELECT COUNT(*) FROM session_transcripts WHERE {clause}", params
    ).fetchone()[0]
    return TranscriptListing([_row(r) for r in rows], int(total))


# The agent's transcripts whose text matches :match (optionally one session, one project).
_MATCHING = """
        FROM session_transcripts_fts
        JOIN session_transcripts t ON t.seq = session_transcripts_fts.rowid
        WHERE session_transcripts_fts MATCH :match AND t.agent_id = :a
          AND (:k IS NULL OR t.session_key = :k) AND (:p IS NULL OR t.project = :p)
"""
# PostgreSQL: the generated `content_tsv` (GIN) in place of the FTS5 table, the same MATCH
# string (quoted tokens joined by OR) read by websearch_to_tsquery with the column's
# configuration; ranked by ts_rank, negated so that lower is better as bm25() is.
_MATCHING_PG = """
        FROM session_transcripts t,
             websearch_to_tsquery('signet_unicode61', :match) AS query
        WHERE t.content_tsv @@ query AND t.agent_id = :a
          AND (:k IS NULL OR t.session_key = :k) AND (:p IS NULL OR t.project = :p)
"""
_SEARCH = """
        SELECT t.session_key, t.project, t.updated_at,
               snippet(session_transcripts_fts, 0, '[', ']', '…', 24) AS excerpt,
               bm25(session_transcripts_fts) AS rank
        {matching}
        ORDER BY rank LIMIT :n
"""
# The excerpt: ts_headline over the indexed prefix, one fragment of up to 24 words.
_SEARCH_PG = """
        SELECT t.session_key, t.project, t.updated_at,
               ts_headline('signet_unicode61', left(t.content, 200000), query,
                   'StartSel=[, StopSel=], MaxWords=24, MinWords=8, MaxFragments=1, '
                   'FragmentDelimiter=…') AS excerpt,
               -ts_rank(t.content_tsv, query) AS rank
        {matching}
        ORDER BY rank, t.seq DESC LIMIT :n
"""


def _matching(conn: Connection) -> str:
    return _MATCHING_PG if is_postgres(conn) else _MATCHING


def count_transcript_matches(
    conn: Connection,
    agent_id: str,
    match: str,
    *,
    session_key: str | None = None,
    project: str | None = None,
) -> int:
    """How many transcripts `search_transcripts` would rank without a limit."""
    params = {"match": match, "a": agent_id, "k": session_key, "p": project}
    return int(conn.execute(f"SELECT COUNT(*) {_matching(conn)}", params).fetchone()[0])


def search_transcripts(
    conn: Connection,
    agent_id: str,
    match: str,
    *,
    session_key: str | None = None,
    project: str | None = None,
    limit: int = 10,
) -> list[TranscriptHit]:
    """BM25 over transcript text (`match` is an FTS5 expression the caller built safely)."""
    search = _SEARCH_PG if is_postgres(conn) else _SEARCH
    rows = conn.execute(
        search.format(matching=_matching(conn)),
        {"match": match, "a": agent_id, "k": session_key, "p": project, "n": limit},
    ).fetchall()
    return [
        TranscriptHit(
            r["session_key"], r["project"], r["updated_at"], r["excerpt"], float(r["rank"])
        )
        for r in rows
    ]


def committed_bytes(conn: Connection, path: str) -> int:
    row = conn.execute(
        "SELECT committed_bytes FROM canonical_transcript_files WHERE path = :p", {"p": path}
    ).fetchone()
    return 0 if row is None else int(row[0])


def set_committed_bytes(conn: Connection, path: str, size: int) -> None:
    conn.execute(
        """
        INSERT INTO canonical_transcript_files (path, committed_bytes, updated_at)
        VALUES (:p, :n, :now)
        ON CONFLICT (path) DO UPDATE SET committed_bytes = :n, updated_at = :now
        """,
        {"p": path, "n": size, "now": utc_now()},
    )


def canonical_files(conn: Connection) -> Sequence[tuple[str, int]]:
    rows = conn.execute("SELECT path, committed_bytes FROM canonical_transcript_files").fetchall()
    return [(str(r[0]), int(r[1])) for r in rows]


def complete_open_since_before(conn: Connection, opened_at: str) -> int:
    """Start-up recovery: rows a crash left open (last written up to `opened_at`, when this
    process opened the workspace) are complete now, any agent; later captures are not."""
    return rows_changed(
        conn,
        "UPDATE session_transcripts SET completed_at = :now "
        "WHERE completed_at IS NULL AND source_id IS NULL AND updated_at <= :opened",
        {"now": utc_now(), "opened": opened_at},
    )


def complete_open_before(conn: Connection, before: str) -> int:
    """TTL: open rows not updated since `before` are complete (any agent)."""
    return rows_changed(
        conn,
        "UPDATE session_transcripts SET completed_at = :now "
        "WHERE completed_at IS NULL AND source_id IS NULL AND updated_at < :before",
        {"now": utc_now(), "before": before},
    )


# -- imported transcripts (service/imports/harness.py) ---------------------------------------


@dataclass(frozen=True, slots=True)
class TranscriptSource:
    """Where a transcript row came from: live capture (both None) or an import."""

    source_id: str | None
    source_record_id: str | None
    turn_count: int


def transcript_source(conn: Connection, agent_id: str, session_key: str) -> TranscriptSource | None:
    row = conn.execute(
        "SELECT source_id, source_record_id, turn_count FROM session_transcripts "
        "WHERE agent_id = :a AND session_key = :k",
        {"a": agent_id, "k": session_key},
    ).fetchone()
    if row is None:
        return None
    return TranscriptSource(row[0], row[1], int(row[2]))


def save_imported_transcript(
    conn: Connection,
    *,
    agent_id: str,
    session_key: str,
    harness: str,
    project: str | None,
    content: str,
    turn_count: int,
    content_hash: str,
    source_id: str,
    source_record_id: str,
    source_meta_json: str,
    created_at: str | None,
    complete: bool = True,
) -> None:
    """Insert or update an imported transcript (only a row of the same source); completed
    unless `complete` is False (a session its harness may still be writing)."""
    now = utc_now()
    conn.execute(
        """
        INSERT INTO session_transcripts (session_key, agent_id, content, harness, project,
            created_at, updated_at, completed_at, content_hash, turn_count, source_id,
            source_record_id, source_meta_json)
        VALUES (:k, :a, :content, :h, :p, COALESCE(:created, :now), :now,
            CASE WHEN :complete = 1 THEN :now END, :hash, :turns, :src, :rec, :meta)
        ON CONFLICT (agent_id, session_key) DO UPDATE SET
            content = excluded.content,
            updated_at = excluded.updated_at,
            completed_at = excluded.completed_at,
            content_hash = excluded.content_hash,
            turn_count = excluded.turn_count,
            source_meta_json = excluded.source_meta_json
        WHERE session_transcripts.source_id = excluded.source_id
          AND session_transcripts.source_record_id = excluded.source_record_id
        """,
        {
            "k": session_key,
            "a": agent_id,
            "content": content,
            "h": harness,
            "p": project,
            "created": created_at,
            "now": now,
            "hash": content_hash,
            "turns": turn_count,
            "src": source_id,
            "rec": source_record_id,
            "meta": source_meta_json,
            "complete": 1 if complete else 0,
        },
    )


def complete_imported_transcript(
    conn: Connection, agent_id: str, session_key: str, source_id: str
) -> bool:
    """Mark a source's in-progress imported transcript completed (its file is at rest)."""
    cursor = conn.execute(
        "UPDATE session_transcripts SET completed_at = :now, updated_at = :now "
        "WHERE agent_id = :a AND session_key = :k AND source_id = :src AND completed_at IS NULL",
        {"now": utc_now(), "a": agent_id, "k": session_key, "src": source_id},
    )
    return bool(cursor.rowcount)


def source_session_keys(conn: Connection, agent_id: str, source_id: str) -> list[str]:
    return texts(
        conn,
        "SELECT session_key FROM session_transcripts WHERE agent_id = :a AND source_id = :src",
        {"a": agent_id, "src": source_id},
    )


def source_skipped_lines(conn: Connection, agent_id: str, source_id: str) -> int:
    """Unreadable lines in the files a source's sessions came from (their meta says)."""
    skipped = (
        "CAST(source_meta_json ->> 'skippedLines' AS bigint)"
        if is_postgres(conn)
        else "json_extract(source_meta_json, '$.skippedLines')"
    )
    return scalar_int(
        conn,
        f"SELECT COALESCE(SUM({skipped}), 0) "
        "FROM session_transcripts WHERE agent_id = :a AND source_id = :src",
        {"a": agent_id, "src": source_id},
    )


def delete_source_transcripts(conn: Connection, agent_id: str, source_id: str) -> int:
    """Delete every transcript row a source imported (the FTS trigger follows)."""
    return rows_changed(
        conn,
        "DELETE FROM session_transcripts WHERE agent_id = :a AND source_id = :src",
        {"a": agent_id, "src": source_id},
    )


# -- imported transcripts (the Signet-workspace importer; added by its engineer) ---------------

INSERT_IMPORTED = """
INSERT INTO session_transcripts (session_key, agent_id, content, harness, project, created_at,
    updated_at, completed_at, content_hash, turn_count, source_id, source_record_id,
    source_meta_json)
VALUES (:session_key, :agent_id, :content, :harness, :project, :created_at, :updated_at,
    :completed_at, :content_hash, :turn_count, :source_id, :source_record_id, :source_meta_json)
ON CONFLICT DO NOTHING
"""


def insert_imported_transcript(
    conn: Connection,
    *,
    agent_id: str,
    session_key: str,
    content: str,
    harness: str | None,
    project: str | None,
    created_at: str,
    updated_at: str,
    completed_at: str,
    content_hash: str,
    turn_count: int,
    source_id: str,
    source_record_id: str,
    source_meta_json: str | None,
) -> bool:
    """Insert a completed transcript another store recorded, with its own timestamps.

    False (nothing written) when the agent already has this session key or this source
    record: the existing row is kept.
    """
    cursor = conn.execute(
        INSERT_IMPORTED,
        {
            "session_key": session_key,
            "agent_id": agent_id,
            "content": content,
            "harness": harness,
            "project": project,
            "created_at": created_at,
            "updated_at": updated_at,
            "completed_at": completed_at,
            "content_hash": content_hash,
            "turn_count": turn_count,
            "source_id": source_id,
            "source_record_id": source_record_id,
            "source_meta_json": source_meta_json,
        },
    )
    return bool(cursor.rowcount)
