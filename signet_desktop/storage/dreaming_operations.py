"""dreaming_operations: every operation the apply seam saw, and its outcome (owner).

Rows are appended in order (seq per pass, or per manual request) and never changed; the
Dreaming pane reads them per pass, and the per-pass write cap counts them.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from signet_desktop.domain.memory import utc_now
from signet_desktop.domain.ontology import OperationRecord
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.rows import TableRows, from_row, scalar_int

COLUMNS = (
    "id, agent_id, pass_id, request_id, seq, operation, payload_json, evidence_json, "
    "provenance, actor, status, code, reason, result_json, created_at"
)


@dataclass(frozen=True, slots=True)
class NewOperationRecord:
    """What to append for one operation."""

    operation: str
    payload: Mapping[str, Any]
    evidence: Sequence[Any]
    provenance: str | None
    status: str
    code: str | None
    reason: str | None
    result: Mapping[str, Any] | None


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:  # a cycle in a malformed input
        return json.dumps(str(value))


def next_seq(conn: Connection, agent_id: str, pass_id: str | None, request_id: str) -> int:
    """The first free seq: after the pass's last row, or 0 for a new manual request."""
    if pass_id is None:
        row = conn.execute(
            "SELECT MAX(seq) FROM dreaming_operations WHERE request_id = :r", {"r": request_id}
        ).fetchone()
    else:
        row = conn.execute(
            "SELECT MAX(seq) FROM dreaming_operations WHERE pass_id = :p AND agent_id = :a",
            {"p": pass_id, "a": agent_id},
        ).fetchone()
    return 0 if row is None or row[0] is None else int(row[0]) + 1


def append(
    conn: Connection,
    *,
    agent_id: str,
    pass_id: str | None,
    request_id: str,
    actor: str,
    records: Sequence[NewOperationRecord],
) -> list[str]:
    """Append records in order; their ids."""
    seq = next_seq(conn, agent_id, pass_id, request_id)
    now = utc_now()
    ids = []
    rows = []
    for offset, record in enumerate(records):
        record_id = str(uuid.uuid4())
        ids.append(record_id)
        payload = record.payload if isinstance(record.payload, Mapping) else {}
        rows.append(
            {
                "id": record_id,
                "a": agent_id,
                "p": pass_id,
                "r": request_id,
                "seq": seq + offset,
                "op": record.operation or "?",
                "payload": _json(dict(payload)),
                "evidence": _json(list(record.evidence)),
                "prov": record.provenance,
                "actor": actor,
                "status": record.status,
                "code": record.code,
                "reason": record.reason,
                "result": None if record.result is None else _json(dict(record.result)),
                "now": now,
            }
        )
    conn.executemany(
        "INSERT INTO dreaming_operations (id, agent_id, pass_id, request_id, seq, operation,"
        " payload_json, evidence_json, provenance, actor, status, code, reason, result_json,"
        " created_at) VALUES (:id, :a, :p, :r, :seq, :op, :payload, :evidence, :prov, :actor,"
        " :status, :code, :reason, :result, :now)",
        rows,
    )
    return ids


def _row(row: Any) -> OperationRecord:
    return from_row(
        OperationRecord,
        row,
        seq=int(row["seq"]),
        payload=json.loads(row["payload_json"]),
        evidence=tuple(json.loads(row["evidence_json"])),
        result=None if row["result_json"] is None else json.loads(row["result_json"]),
    )


ROWS = TableRows("dreaming_operations", COLUMNS, _row)


def for_pass(conn: Connection, agent_id: str, pass_id: str) -> list[OperationRecord]:
    return ROWS.all(
        conn, "agent_id = :a AND pass_id = :p ORDER BY seq", {"a": agent_id, "p": pass_id}
    )


def for_request(conn: Connection, agent_id: str, request_id: str) -> list[OperationRecord]:
    return ROWS.all(
        conn, "agent_id = :a AND request_id = :r ORDER BY seq", {"a": agent_id, "r": request_id}
    )


def recent(conn: Connection, agent_id: str, limit: int = 100) -> list[OperationRecord]:
    return ROWS.all(
        conn,
        "agent_id = :a ORDER BY created_at DESC, seq DESC LIMIT :limit",
        {"a": agent_id, "limit": limit},
    )


def written_in_pass(conn: Connection, agent_id: str, pass_id: str) -> int:
    """Operations of the pass that wrote something (applied or proposed): the per-pass cap."""
    return scalar_int(
        conn,
        "SELECT COUNT(*) FROM dreaming_operations WHERE agent_id = :a AND pass_id = :p"
        " AND status IN ('applied', 'proposed')",
        {"a": agent_id, "p": pass_id},
    )


def status_counts(conn: Connection, agent_id: str, pass_id: str) -> dict[str, int]:
    rows = conn.execute(
        "SELECT status, COUNT(*) AS n FROM dreaming_operations WHERE agent_id = :a"
        " AND pass_id = :p GROUP BY status",
        {"a": agent_id, "p": pass_id},
    ).fetchall()
    return {r["status"]: int(r["n"]) for r in rows}
