"""The knowledge graph tables' row primitives and mutation log (their one owner of writes).

`storage/graph.py` (entities, merges), `storage/graph_claims.py` (aspects and claims) and
`storage/graph_links.py` (links and relations) write through these: `insert_row`,
`update_row` and `delete_row` on one of `GRAPH_TABLES`, each change appended to
`graph_mutations` with the row before and after (`log_mutation`), lookups that raise for a
row of another agent or a row no longer active (`entity_row`, `aspect_row`, …), and
`restore_row`, which puts a logged row back (what Dreaming's pass revert and a split use).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

from signet_desktop.domain.errors import Conflict, InvalidInput, NotFound
from signet_desktop.domain.knowledge import GraphMutation, Provenance
from signet_desktop.domain.memory import utc_now
from signet_desktop.storage import knowledge_reads as reads
from signet_desktop.storage import mentions
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import lock_until_commit
from signet_desktop.storage.errors import INTEGRITY_ERRORS

Row = dict[str, Any]
# PostgreSQL: one transaction at a time numbers graph mutations (`log_mutation`), so two
# daemons never take the same MAX(seq)+1 and seq order is commit order, as on SQLite.
SEQ_LOCK = "graph_mutations.seq"

GRAPH_TABLES = (
    "entities",
    "entity_aliases",
    "entity_aspects",
    "entity_attributes",
    "entity_dependencies",
    "relations",
)
MENTIONS_TABLE = "memory_entity_mentions"
# Columns a restore never writes back: the counter follows the mention rows (triggers) and
# the embedding is derived.
_NOT_RESTORED = {"entities": {"mentions", "embedding"}}

# Literal table names per statement, so the ownership check sees each write.
_INSERT = {
    "entities": "INSERT INTO entities",
    "entity_aliases": "INSERT INTO entity_aliases",
    "entity_aspects": "INSERT INTO entity_aspects",
    "entity_attributes": "INSERT INTO entity_attributes",
    "entity_dependencies": "INSERT INTO entity_dependencies",
    "relations": "INSERT INTO relations",
}
_UPDATE = {
    "entities": "UPDATE entities SET",
    "entity_aliases": "UPDATE entity_aliases SET",
    "entity_aspects": "UPDATE entity_aspects SET",
    "entity_attributes": "UPDATE entity_attributes SET",
    "entity_dependencies": "UPDATE entity_dependencies SET",
    "relations": "UPDATE relations SET",
}
_DELETE = {
    "entities": "DELETE FROM entities WHERE id = ?",
    "entity_aliases": "DELETE FROM entity_aliases WHERE id = ?",
    "entity_aspects": "DELETE FROM entity_aspects WHERE id = ?",
    "entity_attributes": "DELETE FROM entity_attributes WHERE id = ?",
    "entity_dependencies": "DELETE FROM entity_dependencies WHERE id = ?",
    "relations": "DELETE FROM relations WHERE id = ?",
}
_SELECT = {table: f"SELECT * FROM {table} WHERE id = ?" for table in GRAPH_TABLES}


def new_id() -> str:
    return str(uuid.uuid4())


def normalize_claim(content: str) -> str:
    """The comparison form of a claim value: case-folded, whitespace collapsed."""
    return " ".join(content.casefold().split())


# --- rows and the log ---------------------------------------------------------------------


def fetch_row(conn: Connection, table: str, row_id: str) -> Row | None:
    found = conn.execute(_SELECT[table], (row_id,)).fetchone()
    return reads.row_dict(found) if found is not None else None


def insert_row(conn: Connection, table: str, values: Mapping[str, Any]) -> Row:
    columns = list(values)
    marks = ", ".join(f":{c}" for c in columns)
    conn.execute(f"{_INSERT[table]} ({', '.join(columns)}) VALUES ({marks})", dict(values))
    row = fetch_row(conn, table, str(values["id"]))
    assert row is not None
    return row


def update_row(conn: Connection, table: str, row_id: str, values: Mapping[str, Any]) -> Row:
    sets = ", ".join(f"{c} = :{c}" for c in values)
    conn.execute(f"{_UPDATE[table]} {sets} WHERE id = :_id", {**values, "_id": row_id})
    row = fetch_row(conn, table, row_id)
    assert row is not None
    return row


def delete_row(conn: Connection, table: str, row_id: str) -> None:
    conn.execute(_DELETE[table], (row_id,))


def log_mutation(
    conn: Connection,
    prov: Provenance,
    operation: str,
    table: str,
    target_id: str,
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
    *,
    reverts: str | None = None,
) -> GraphMutation:
    """Append one mutation row (global `seq`: MAX+1, safe under SQLite's one writer; on
    PostgreSQL, where daemons write at once, under the `SEQ_LOCK` lock until the commit)."""
    mutation_id, now = new_id(), utc_now()
    lock_until_commit(conn, SEQ_LOCK)
    values = {
        "id": mutation_id,
        "agent_id": prov.agent_id,
        "actor": prov.actor,
        "pass_id": prov.pass_id,
        "proposal_id": prov.proposal_id,
        "operation": operation,
        "target_table": table,
        "target_id": target_id,
        "before_json": json.dumps(dict(before), sort_keys=True) if before is not None else None,
        "after_json": json.dumps(dict(after), sort_keys=True) if after is not None else None,
        "evidence_json": json.dumps(prov.evidence_json()),
        "source_memory_id": prov.source_memory_id,
        "reverts_mutation_id": reverts,
        "created_at": now,
    }
    seq = conn.execute(
        "INSERT INTO graph_mutations (id, agent_id, seq, actor, pass_id, proposal_id, operation,"
        " target_table, target_id, before_json, after_json, evidence_json, source_memory_id,"
        " reverts_mutation_id, created_at) SELECT :id, :agent_id,"
        " (SELECT COALESCE(MAX(seq), 0) + 1 FROM graph_mutations), :actor, :pass_id,"
        " :proposal_id, :operation, :target_table, :target_id, :before_json, :after_json,"
        " :evidence_json, :source_memory_id, :reverts_mutation_id, :created_at RETURNING seq",
        values,
    ).fetchone()[0]
    return GraphMutation(
        id=mutation_id,
        agent_id=prov.agent_id,
        seq=int(seq),
        actor=prov.actor,
        pass_id=prov.pass_id,
        proposal_id=prov.proposal_id,
        operation=operation,
        target_table=table,
        target_id=target_id,
        before=dict(before) if before is not None else None,
        after=dict(after) if after is not None else None,
        evidence=prov.evidence,
        source_memory_id=prov.source_memory_id,
        reverts_mutation_id=reverts,
        created_at=now,
    )


def insert_logged(
    conn: Connection, prov: Provenance, operation: str, table: str, values: Mapping[str, Any]
) -> Row:
    """Insert a row and log its creation as `operation`; the row as stored."""
    row = insert_row(conn, table, values)
    log_mutation(conn, prov, operation, table, row["id"], None, row)
    return row


def update_logged(
    conn: Connection,
    prov: Provenance,
    operation: str,
    table: str,
    before: Row,
    values: Mapping[str, Any],
) -> Row:
    """Update the row `before` and log the change as `operation`; the row after."""
    after = update_row(conn, table, before["id"], values)
    log_mutation(conn, prov, operation, table, before["id"], before, after)
    return after


def mention_key(row: Mapping[str, Any]) -> str:
    return f"{row['memory_id']}/{row['entity_id']}"


def evidence_column(prov: Provenance) -> str:
    items = prov.evidence_json()
    if prov.source_memory_id and not any(
        i["source_ref"] == f"memory:{prov.source_memory_id}" for i in items
    ):
        items.append({"quote": "", "source_ref": f"memory:{prov.source_memory_id}"})
    return json.dumps(items)


# --- lookups that raise -------------------------------------------------------------------


def scoped_row(
    conn: Connection, prov: Provenance, table: str, noun: str, row_id: str, active: bool
) -> Row:
    """The row of `table`, when it is the caller agent's (else NotFound `<noun>_not_found`)
    and, with `active`, still active (else Conflict `<noun>_not_active`)."""
    row = fetch_row(conn, table, row_id)
    if row is None or row["agent_id"] != prov.agent_id:
        raise NotFound(f"{noun} {row_id} not found", code=f"{noun}_not_found")
    if active and row["status"] != "active":
        raise Conflict(f"{noun} {row_id} is {row['status']}, not active", code=f"{noun}_not_active")
    return row


def entity_row(conn: Connection, prov: Provenance, entity_id: str, *, active: bool = True) -> Row:
    return scoped_row(conn, prov, "entities", "entity", entity_id, active)


def aspect_row(conn: Connection, prov: Provenance, aspect_id: str, *, active: bool = True) -> Row:
    return scoped_row(conn, prov, "entity_aspects", "aspect", aspect_id, active)


def claim_row(conn: Connection, prov: Provenance, claim_id: str, *, active: bool = True) -> Row:
    return scoped_row(conn, prov, "entity_attributes", "claim", claim_id, active)


def link_row(conn: Connection, prov: Provenance, link_id: str, *, active: bool = True) -> Row:
    return scoped_row(conn, prov, "entity_dependencies", "link", link_id, active)


# --- undo ---------------------------------------------------------------------------------


def _comparable(table: str, row: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if row is None:
        return None
    skip = _NOT_RESTORED.get(table, set())
    return {k: v for k, v in row.items() if k not in skip}


def current_state(conn: Connection, mutation: GraphMutation) -> Row | None:
    """The target row of `mutation` as it is now (by the key its `after` state names)."""
    state = mutation.after or mutation.before
    if state is None:
        return None
    if mutation.target_table == MENTIONS_TABLE:
        return mentions.mention_row(conn, str(state["memory_id"]), str(state["entity_id"]))
    return fetch_row(conn, mutation.target_table, str(state["id"]))


def restore_row(
    conn: Connection,
    prov: Provenance,
    mutation: GraphMutation,
    *,
    operation: str = "revert",
    force: bool = False,
) -> GraphMutation:
    """Put the target row of `mutation` back to its `before` state and log that.

    An insert is undone by deleting the row, a delete by re-inserting it, an update by
    writing the old values back. Unless `force`, the row must still be as `mutation` left
    it (`Conflict` `graph_row_changed` otherwise), so a later edit is never silently undone.
    """
    if mutation.agent_id != prov.agent_id:
        raise NotFound(f"mutation {mutation.id} not found", code="mutation_not_found")
    table = mutation.target_table
    if table not in GRAPH_TABLES and table != MENTIONS_TABLE:
        raise InvalidInput(f"cannot restore rows of {table}")
    now = current_state(conn, mutation)
    if not force and _comparable(table, now) != _comparable(table, mutation.after):
        raise Conflict(
            f"{table} {mutation.target_id} changed since mutation {mutation.id}",
            code="graph_row_changed",
            details={"mutation_id": mutation.id},
        )
    before = mutation.before
    if table == MENTIONS_TABLE:
        if now is not None:
            mentions.delete_row(conn, now)
        if before is not None:
            mentions.insert_row(conn, dict(before))
        restored = (
            mentions.mention_row(conn, str(before["memory_id"]), str(before["entity_id"]))
            if before is not None
            else None
        )
    else:
        try:
            restored = _write_back(conn, table, now, before)
        except INTEGRITY_ERRORS as exc:  # e.g. an active entity of that name exists now
            raise Conflict(
                f"{table} {mutation.target_id} cannot be restored: {exc}",
                code="graph_row_changed",
                details={"mutation_id": mutation.id},
            ) from exc
    return log_mutation(
        conn, prov, operation, table, mutation.target_id, now, restored, reverts=mutation.id
    )


def _write_back(
    conn: Connection, table: str, now: Row | None, before: Mapping[str, Any] | None
) -> Row | None:
    skip = _NOT_RESTORED.get(table, set())
    if before is None:
        if now is not None:
            delete_row(conn, table, str(now["id"]))
        return None
    values = {k: v for k, v in before.items() if k not in skip}
    if now is None:
        return insert_row(conn, table, values)
    row_id = str(values.pop("id"))
    return update_row(conn, table, row_id, values)
