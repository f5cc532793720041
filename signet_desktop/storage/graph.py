"""The knowledge graph's one writer: entities, aliases, aspects, claims, links, relations.

Every primitive takes an open write connection (the caller holds `Database.write()`) and a
`Provenance`, checks that its targets exist, belong to `prov.agent_id` and are in a state
that allows the change (else `NotFound` / `Conflict` / `InvalidInput`, nothing written), and
appends one `graph_mutations` row per row it changes, with the row's state before and after.
That log is what `restore_row` (and Dreaming's pass revert) undoes, newest first.

`entities.mentions` is kept by triggers on `memory_entity_mentions` (migrations/0012), so it
is never restored from a logged row; mention rows themselves are written by
`storage/mentions.py` (this module calls it and logs what it changed).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import sqlean

from signet_desktop.domain.entities import EntityMatch, canonical_entity_name
from signet_desktop.domain.errors import Conflict, InvalidInput, NotFound
from signet_desktop.domain.knowledge import (
    CLAIM_KINDS,
    MAX_ASPECT_CHARS,
    MAX_CLAIM_CHARS,
    MAX_DESCRIPTION_CHARS,
    MAX_KEY_CHARS,
    MAX_LINK_TYPE_CHARS,
    MAX_NAME_CHARS,
    MAX_REASON_CHARS,
    Alias,
    Aspect,
    Claim,
    ClaimTimes,
    Dependency,
    Entity,
    GraphMutation,
    Provenance,
    Relation,
    check_entity_type,
    check_text,
    check_times,
    check_unit,
)
from signet_desktop.domain.memory import utc_now
from signet_desktop.storage import knowledge_reads as reads
from signet_desktop.storage import mentions
from signet_desktop.storage.connect import Connection

Row = dict[str, Any]

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


def _row(conn: Connection, table: str, row_id: str) -> Row | None:
    found = conn.execute(_SELECT[table], (row_id,)).fetchone()
    return reads.row_dict(found) if found is not None else None


def _insert(conn: Connection, table: str, values: Mapping[str, Any]) -> Row:
    columns = list(values)
    marks = ", ".join(f":{c}" for c in columns)
    conn.execute(f"{_INSERT[table]} ({', '.join(columns)}) VALUES ({marks})", dict(values))
    row = _row(conn, table, str(values["id"]))
    assert row is not None
    return row


def _update(conn: Connection, table: str, row_id: str, values: Mapping[str, Any]) -> Row:
    sets = ", ".join(f"{c} = :{c}" for c in values)
    conn.execute(f"{_UPDATE[table]} {sets} WHERE id = :_id", {**values, "_id": row_id})
    row = _row(conn, table, row_id)
    assert row is not None
    return row


def _delete(conn: Connection, table: str, row_id: str) -> None:
    conn.execute(_DELETE[table], (row_id,))


def _log(
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
    """Append one mutation row (global `seq`, one writer so MAX+1 is safe)."""
    mutation_id, now = new_id(), utc_now()
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


def _mention_key(row: Mapping[str, Any]) -> str:
    return f"{row['memory_id']}/{row['entity_id']}"


def _evidence_column(prov: Provenance) -> str:
    items = prov.evidence_json()
    if prov.source_memory_id and not any(
        i["source_ref"] == f"memory:{prov.source_memory_id}" for i in items
    ):
        items.append({"quote": "", "source_ref": f"memory:{prov.source_memory_id}"})
    return json.dumps(items)


# --- lookups that raise -------------------------------------------------------------------


def _scoped(
    conn: Connection, prov: Provenance, table: str, noun: str, row_id: str, active: bool
) -> Row:
    """The row of `table`, when it is the caller agent's (else NotFound `<noun>_not_found`)
    and, with `active`, still active (else Conflict `<noun>_not_active`)."""
    row = _row(conn, table, row_id)
    if row is None or row["agent_id"] != prov.agent_id:
        raise NotFound(f"{noun} {row_id} not found", code=f"{noun}_not_found")
    if active and row["status"] != "active":
        raise Conflict(f"{noun} {row_id} is {row['status']}, not active", code=f"{noun}_not_active")
    return row


def _entity(conn: Connection, prov: Provenance, entity_id: str, *, active: bool = True) -> Row:
    return _scoped(conn, prov, "entities", "entity", entity_id, active)


def _aspect(conn: Connection, prov: Provenance, aspect_id: str, *, active: bool = True) -> Row:
    return _scoped(conn, prov, "entity_aspects", "aspect", aspect_id, active)


def _claim(conn: Connection, prov: Provenance, claim_id: str, *, active: bool = True) -> Row:
    return _scoped(conn, prov, "entity_attributes", "claim", claim_id, active)


def _link(conn: Connection, prov: Provenance, link_id: str, *, active: bool = True) -> Row:
    return _scoped(conn, prov, "entity_dependencies", "link", link_id, active)


# --- entities -----------------------------------------------------------------------------


def _source_of(prov: Provenance) -> tuple[str, str | None]:
    if prov.source_memory_id:
        return "memory", prov.source_memory_id
    if prov.pass_id:
        return "dreaming", prov.pass_id
    return "explicit", None


def create_entity(
    conn: Connection,
    prov: Provenance,
    *,
    name: str,
    entity_type: str = "unknown",
    description: str | None = None,
    pinned: bool = False,
) -> tuple[Entity, bool]:
    """Get-or-create the agent's active entity of this canonical name and type.

    Returns (entity, created). An existing entity is returned unchanged (no mutation row).
    """
    name = check_text(name, "entity name", MAX_NAME_CHARS, code="entity_name_invalid")
    kind = check_entity_type(entity_type)
    canonical = canonical_entity_name(name)
    if not canonical:
        raise InvalidInput("entity name has no letters or digits", code="entity_name_invalid")
    if description is not None:
        description = check_text(description, "description", MAX_DESCRIPTION_CHARS)
    existing = reads.live_entity_named(conn, prov.agent_id, name, kind)
    if existing is not None:
        return existing, False
    now = utc_now()
    source_kind, source_id = _source_of(prov)
    row = _insert(
        conn,
        "entities",
        {
            "id": new_id(),
            "agent_id": prov.agent_id,
            "name": name,
            "canonical_name": canonical,
            "entity_type": kind,
            "description": description,
            "pinned": int(pinned),
            "pinned_at": now if pinned else None,
            "source_kind": source_kind,
            "source_id": source_id,
            "status": "active",
            "proposal_id": prov.proposal_id,
            "created_by": prov.actor,
            "created_at": now,
            "updated_at": now,
        },
    )
    _log(conn, prov, "create_entity", "entities", row["id"], None, row)
    return reads.to_entity(row), True


def add_alias(
    conn: Connection, prov: Provenance, entity_id: str, alias: str, *, source: str | None = None
) -> tuple[Alias, bool]:
    """Give an active entity another name; an alias it already has is returned as is."""
    _entity(conn, prov, entity_id)
    alias = check_text(alias, "alias", MAX_NAME_CHARS, code="alias_invalid")
    canonical = canonical_entity_name(alias)
    if not canonical:
        raise InvalidInput("alias has no letters or digits", code="alias_invalid")
    found = conn.execute(
        "SELECT * FROM entity_aliases WHERE entity_id = ? AND canonical_alias = ?",
        (entity_id, canonical),
    ).fetchone()
    if found is not None:
        return reads.to_alias(found), False
    row = _insert(
        conn,
        "entity_aliases",
        {
            "id": new_id(),
            "entity_id": entity_id,
            "agent_id": prov.agent_id,
            "alias": alias,
            "canonical_alias": canonical,
            "source": source or _source_of(prov)[0],
            "created_at": utc_now(),
        },
    )
    _log(conn, prov, "add_alias", "entity_aliases", row["id"], None, row)
    return reads.to_alias(row), True


def rename_entity(
    conn: Connection, prov: Provenance, entity_id: str, new_name: str, *, keep_alias: bool = True
) -> Entity:
    """Rename an active entity (the old name stays as an alias unless `keep_alias=False`)."""
    before = _entity(conn, prov, entity_id)
    new_name = check_text(new_name, "entity name", MAX_NAME_CHARS, code="entity_name_invalid")
    canonical = canonical_entity_name(new_name)
    if not canonical:
        raise InvalidInput("entity name has no letters or digits", code="entity_name_invalid")
    clash = reads.live_entity_named(conn, prov.agent_id, new_name, before["entity_type"])
    if clash is not None and clash.id != entity_id:
        raise Conflict(
            f"another active {before['entity_type']} is already named {new_name!r}",
            code="entity_name_taken",
            details={"entity_id": clash.id},
        )
    if new_name == before["name"]:
        return reads.to_entity(before)
    after = _update(
        conn,
        "entities",
        entity_id,
        {"name": new_name, "canonical_name": canonical, "updated_at": utc_now()},
    )
    _log(conn, prov, "rename_entity", "entities", entity_id, before, after)
    if keep_alias and before["canonical_name"] != canonical:
        add_alias(conn, prov, entity_id, before["name"])
    return reads.to_entity(after)


def archive_entity(
    conn: Connection, prov: Provenance, entity_id: str, reason: str | None = None
) -> Entity:
    """Archive an active (or unsupported) entity; its rows stay for history."""
    before = _entity(conn, prov, entity_id, active=False)
    if before["status"] not in ("active", "unsupported"):
        raise Conflict(f"entity {entity_id} is {before['status']}", code="entity_not_active")
    if reason is not None:
        reason = check_text(reason, "reason", MAX_REASON_CHARS)
    now = utc_now()
    after = _update(
        conn,
        "entities",
        entity_id,
        {"status": "archived", "archived_at": now, "archived_reason": reason, "updated_at": now},
    )
    _log(conn, prov, "archive_entity", "entities", entity_id, before, after)
    return reads.to_entity(after)


def restore_entity(conn: Connection, prov: Provenance, entity_id: str) -> Entity:
    """Bring an archived or unsupported entity back to active (unless its name is taken)."""
    before = _entity(conn, prov, entity_id, active=False)
    if before["status"] not in ("archived", "unsupported"):
        raise Conflict(
            f"entity {entity_id} is {before['status']}; only archived or unsupported "
            "entities can be restored",
            code="entity_not_restorable",
        )
    clash = reads.live_entity_named(conn, prov.agent_id, before["name"], before["entity_type"])
    if clash is not None:
        raise Conflict(
            f"an active {before['entity_type']} named {before['name']!r} exists",
            code="entity_name_taken",
            details={"entity_id": clash.id},
        )
    after = _update(
        conn,
        "entities",
        entity_id,
        {"status": "active", "archived_at": None, "archived_reason": None, "updated_at": utc_now()},
    )
    _log(conn, prov, "restore_entity", "entities", entity_id, before, after)
    return reads.to_entity(after)


def set_pinned(conn: Connection, prov: Provenance, entity_id: str, pinned: bool) -> Entity:
    """Pin or unpin an active entity (a pinned entity is never purged as an orphan)."""
    before = _entity(conn, prov, entity_id)
    if bool(before["pinned"]) == pinned:
        return reads.to_entity(before)
    now = utc_now()
    after = _update(
        conn,
        "entities",
        entity_id,
        {"pinned": int(pinned), "pinned_at": now if pinned else None, "updated_at": now},
    )
    _log(
        conn, prov, "pin_entity" if pinned else "unpin_entity", "entities", entity_id, before, after
    )
    return reads.to_entity(after)


MERGE = "merge_entities"


def merge_entities(
    conn: Connection, prov: Provenance, survivor_id: str, other_ids: Sequence[str]
) -> Entity:
    """Fold `other_ids` into `survivor_id`: aliases, mentions, aspects (with their claims),
    links and relations move to the survivor, each other becomes `merged` into it.

    Every moved row is logged (operation `merge_entities`), each other's own status change
    last, so `split_entity` can undo exactly one merge from the log.
    """
    survivor = _entity(conn, prov, survivor_id)
    others = list(dict.fromkeys(other_ids))
    if not others:
        raise InvalidInput("merge needs at least one entity besides the survivor")
    if survivor_id in others:
        raise InvalidInput("an entity cannot be merged into itself", code="merge_into_self")
    rows = [_entity(conn, prov, other, active=False) for other in others]
    for row in rows:
        if row["status"] == "merged":
            raise Conflict(f"entity {row['id']} is already merged", code="entity_not_active")
    for row in rows:
        _merge_one(conn, prov, survivor, row)
    found = _row(conn, "entities", survivor_id)
    assert found is not None
    return reads.to_entity(found)


def _merge_one(conn: Connection, prov: Provenance, survivor: Row, other: Row) -> None:
    sid, oid = survivor["id"], other["id"]
    _merge_aliases(conn, prov, sid, other)
    for before, after in mentions.repoint(conn, oid, sid):
        _log(conn, prov, MERGE, MENTIONS_TABLE, _mention_key(before), before, after)
    _merge_aspects_of(conn, prov, sid, oid)
    _merge_links(conn, prov, sid, oid)
    _merge_relations(conn, prov, sid, oid)
    now = utc_now()
    after = _update(
        conn, "entities", oid, {"status": "merged", "merged_into": sid, "updated_at": now}
    )
    _log(conn, prov, MERGE, "entities", oid, other, after)


def _merge_aliases(conn: Connection, prov: Provenance, sid: str, other: Row) -> None:
    taken = {
        r[0]
        for r in conn.execute(
            "SELECT canonical_alias FROM entity_aliases WHERE entity_id = ?", (sid,)
        )
    }
    survivor_name = conn.execute(
        "SELECT canonical_name FROM entities WHERE id = ?", (sid,)
    ).fetchone()[0]
    for found in conn.execute(
        "SELECT * FROM entity_aliases WHERE entity_id = ? ORDER BY id", (other["id"],)
    ).fetchall():
        before = reads.row_dict(found)
        if before["canonical_alias"] in taken or before["canonical_alias"] == survivor_name:
            _delete(conn, "entity_aliases", before["id"])
            _log(conn, prov, MERGE, "entity_aliases", before["id"], before, None)
            continue
        after = _update(conn, "entity_aliases", before["id"], {"entity_id": sid})
        taken.add(before["canonical_alias"])
        _log(conn, prov, MERGE, "entity_aliases", before["id"], before, after)
    if other["canonical_name"] not in taken and other["canonical_name"] != survivor_name:
        row = _insert(
            conn,
            "entity_aliases",
            {
                "id": new_id(),
                "entity_id": sid,
                "agent_id": prov.agent_id,
                "alias": other["name"],
                "canonical_alias": other["canonical_name"],
                "source": "merge",
                "created_at": utc_now(),
            },
        )
        _log(conn, prov, MERGE, "entity_aliases", row["id"], None, row)


def _move_claims(
    conn: Connection, prov: Provenance, operation: str, from_aspect: str, to_aspect: str
) -> None:
    for found in conn.execute(
        "SELECT * FROM entity_attributes WHERE aspect_id = ? ORDER BY id", (from_aspect,)
    ).fetchall():
        before = reads.row_dict(found)
        after = _update(
            conn,
            "entity_attributes",
            before["id"],
            {"aspect_id": to_aspect, "updated_at": utc_now()},
        )
        _log(conn, prov, operation, "entity_attributes", before["id"], before, after)
    for found in conn.execute(
        "SELECT * FROM entity_dependencies WHERE aspect_id = ? ORDER BY id", (from_aspect,)
    ).fetchall():
        before = reads.row_dict(found)
        after = _update(conn, "entity_dependencies", before["id"], {"aspect_id": to_aspect})
        _log(conn, prov, operation, "entity_dependencies", before["id"], before, after)


def _merge_aspects_of(conn: Connection, prov: Provenance, sid: str, oid: str) -> None:
    mine = {
        r["canonical_name"]: reads.row_dict(r)
        for r in conn.execute("SELECT * FROM entity_aspects WHERE entity_id = ?", (sid,))
    }
    for found in conn.execute(
        "SELECT * FROM entity_aspects WHERE entity_id = ? ORDER BY id", (oid,)
    ).fetchall():
        before = reads.row_dict(found)
        now = utc_now()
        same = mine.get(before["canonical_name"])
        if same is None:
            after = _update(
                conn, "entity_aspects", before["id"], {"entity_id": sid, "updated_at": now}
            )
            _log(conn, prov, MERGE, "entity_aspects", before["id"], before, after)
            continue
        _move_claims(conn, prov, MERGE, before["id"], same["id"])
        after = _update(
            conn, "entity_aspects", before["id"], {"status": "merged", "updated_at": now}
        )
        _log(conn, prov, MERGE, "entity_aspects", before["id"], before, after)


def _merge_links(conn: Connection, prov: Provenance, sid: str, oid: str) -> None:
    for found in conn.execute(
        "SELECT * FROM entity_dependencies WHERE source_entity_id = ? OR target_entity_id = ? "
        "ORDER BY id",
        (oid, oid),
    ).fetchall():
        before = reads.row_dict(found)
        src = sid if before["source_entity_id"] == oid else before["source_entity_id"]
        tgt = sid if before["target_entity_id"] == oid else before["target_entity_id"]
        now = utc_now()
        duplicate = before["status"] == "active" and _live_edge(
            conn, prov.agent_id, src, tgt, before["dependency_type"]
        )
        if src == tgt or duplicate:  # a self-link after the merge, or a second live edge
            after = _update(
                conn, "entity_dependencies", before["id"], {"status": "archived", "updated_at": now}
            )
        else:
            after = _update(
                conn,
                "entity_dependencies",
                before["id"],
                {"source_entity_id": src, "target_entity_id": tgt, "updated_at": now},
            )
        _log(conn, prov, MERGE, "entity_dependencies", before["id"], before, after)


def _merge_relations(conn: Connection, prov: Provenance, sid: str, oid: str) -> None:
    for found in conn.execute(
        "SELECT * FROM relations WHERE source_entity_id = ? OR target_entity_id = ? ORDER BY id",
        (oid, oid),
    ).fetchall():
        before = reads.row_dict(found)
        src = sid if before["source_entity_id"] == oid else before["source_entity_id"]
        tgt = sid if before["target_entity_id"] == oid else before["target_entity_id"]
        if src == tgt:
            _delete(conn, "relations", before["id"])
            _log(conn, prov, MERGE, "relations", before["id"], before, None)
            continue
        after = _update(
            conn,
            "relations",
            before["id"],
            {"source_entity_id": src, "target_entity_id": tgt, "updated_at": utc_now()},
        )
        _log(conn, prov, MERGE, "relations", before["id"], before, after)


def merge_group(conn: Connection, agent_id: str, entity_id: str) -> list[GraphMutation]:
    """The mutations of the latest merge that folded `entity_id` away (oldest first).

    One write connection serialises transactions, so a merge's rows are contiguous in `seq`:
    the moved rows, then the merged entity's own row.
    """
    rows = conn.execute(
        "SELECT * FROM graph_mutations WHERE agent_id = ? AND operation = ? "
        "AND target_table = 'entities' AND target_id = ? ORDER BY seq DESC LIMIT 1",
        (agent_id, MERGE, entity_id),
    ).fetchall()
    if not rows:
        return []
    last = reads.to_mutation(rows[0])
    group = [last]
    for found in conn.execute(
        "SELECT * FROM graph_mutations WHERE seq < ? ORDER BY seq DESC", (last.seq,)
    ):
        item = reads.to_mutation(found)
        if item.operation != MERGE or item.target_table == "entities":
            break
        group.append(item)
    return list(reversed(group))


def split_entity(conn: Connection, prov: Provenance, entity_id: str) -> Entity:
    """Undo the merge that folded `entity_id` away, row by row from the log (newest first).

    Refused (`Conflict`, nothing written) when a later mutation changed one of those rows.
    """
    row = _entity(conn, prov, entity_id, active=False)
    if row["status"] != "merged":
        raise Conflict(f"entity {entity_id} is {row['status']}, not merged", code="not_merged")
    group = merge_group(conn, prov.agent_id, entity_id)
    if not group:
        raise Conflict(f"no logged merge of entity {entity_id}", code="merge_not_logged")
    ids = {m.id for m in group}
    for item in group:
        later = [m for m in reads.later_mutations(conn, item) if m.id not in ids]
        if later:
            raise Conflict(
                f"{item.target_table} {item.target_id} changed after the merge",
                code="graph_row_changed",
                details={"mutation_id": later[0].id},
            )
    for item in reversed(group):
        restore_row(conn, prov, item, operation="split_entity")
    found = _row(conn, "entities", entity_id)
    assert found is not None
    return reads.to_entity(found)


def mark_entities_unsupported(
    conn: Connection, prov: Provenance, source_kind: str, source_ids: Sequence[str]
) -> int:
    """Active entities derived from these evidence ids become `unsupported`; how many."""
    found = conn.execute(
        "SELECT * FROM entities WHERE agent_id = :a AND source_kind = :kind AND status = 'active' "
        "AND source_id IN (SELECT value FROM json_each(:ids))",
        {"a": prov.agent_id, "kind": source_kind, "ids": json.dumps(list(source_ids))},
    ).fetchall()
    for item in found:
        before = reads.row_dict(item)
        after = _update(
            conn, "entities", before["id"], {"status": "unsupported", "updated_at": utc_now()}
        )
        _log(conn, prov, "mark_unsupported", "entities", before["id"], before, after)
    return len(found)


# Retention: an entity a purged memory named that nothing else supports. Kept: pinned ones,
# ones another memory still mentions, ones with structure (aspects, links, relations), merge
# targets, and ones not auto-created from a memory (explicit, Dreaming, source-derived).
ORPHANED = """
SELECT e.* FROM entities e
WHERE e.id IN (SELECT value FROM json_each(:ids)) AND e.pinned = 0
  AND e.status IN ('active', 'unsupported')
  AND (e.source_kind IS NULL OR e.source_kind = 'memory')
  AND NOT EXISTS (SELECT 1 FROM memory_entity_mentions m WHERE m.entity_id = e.id)
  AND NOT EXISTS (SELECT 1 FROM entity_aspects a WHERE a.entity_id = e.id)
  AND NOT EXISTS (SELECT 1 FROM entity_dependencies d
                  WHERE d.source_entity_id = e.id OR d.target_entity_id = e.id)
  AND NOT EXISTS (SELECT 1 FROM relations r
                  WHERE r.source_entity_id = e.id OR r.target_entity_id = e.id)
  AND NOT EXISTS (SELECT 1 FROM entities other WHERE other.merged_into = e.id)
"""


def delete_orphaned(
    conn: Connection, entity_ids: Sequence[str], *, actor: str = "retention"
) -> int:
    """Delete the entities among `entity_ids` that only purged memories supported; how many.

    Each deleted row (and its aliases) is logged with its last state.
    """
    if not entity_ids:
        return 0
    found = conn.execute(ORPHANED, {"ids": json.dumps(list(entity_ids))}).fetchall()
    for item in found:
        before = reads.row_dict(item)
        prov = Provenance(actor=actor, agent_id=before["agent_id"])
        for alias in conn.execute(
            "SELECT * FROM entity_aliases WHERE entity_id = ? ORDER BY id", (before["id"],)
        ).fetchall():
            alias_row = reads.row_dict(alias)
            _delete(conn, "entity_aliases", alias_row["id"])
            _log(conn, prov, "purge_entity", "entity_aliases", alias_row["id"], alias_row, None)
        _delete(conn, "entities", before["id"])
        _log(conn, prov, "purge_entity", "entities", before["id"], before, None)
    return len(found)


def link_mention(
    conn: Connection,
    prov: Provenance,
    memory_id: str,
    entity_id: str,
    mention_text: str | None = None,
    confidence: float = 1.0,
) -> bool:
    """Link a memory to an active entity (a structured payload); False if already linked."""
    _entity(conn, prov, entity_id)
    owner = conn.execute("SELECT agent_id FROM memories WHERE id = ?", (memory_id,)).fetchone()
    if owner is None or owner[0] != prov.agent_id:
        raise NotFound(f"memory {memory_id} not found", code="memory_not_found")
    match = EntityMatch(entity_id, mention_text or "", check_unit(confidence, "confidence"))
    if not mentions.link(conn, prov.agent_id, memory_id, [match]):
        return False
    after = mentions.mention_row(conn, memory_id, entity_id)
    _log(conn, prov, "link_mention", MENTIONS_TABLE, f"{memory_id}/{entity_id}", None, after)
    return True


# --- aspects ------------------------------------------------------------------------------


def create_aspect(
    conn: Connection, prov: Provenance, entity_id: str, name: str, *, weight: float = 0.5
) -> tuple[Aspect, bool]:
    """Get-or-create an aspect of an active entity; an archived one of that name comes back."""
    _entity(conn, prov, entity_id)
    name = check_text(name, "aspect name", MAX_ASPECT_CHARS, code="aspect_invalid")
    weight = check_unit(weight, "weight")
    canonical = canonical_entity_name(name)
    if not canonical:
        raise InvalidInput("aspect name has no letters or digits", code="aspect_invalid")
    found = conn.execute(
        "SELECT * FROM entity_aspects WHERE entity_id = ? AND canonical_name = ?",
        (entity_id, canonical),
    ).fetchone()
    if found is not None:
        before = reads.row_dict(found)
        if before["status"] == "active":
            return reads.to_aspect(before), False
        if before["status"] == "merged":
            raise Conflict(f"aspect {name!r} was merged into another", code="aspect_not_active")
        after = _update(
            conn,
            "entity_aspects",
            before["id"],
            {"status": "active", "archived_at": None, "updated_at": utc_now()},
        )
        _log(conn, prov, "restore_aspect", "entity_aspects", before["id"], before, after)
        return reads.to_aspect(after), True
    now = utc_now()
    row = _insert(
        conn,
        "entity_aspects",
        {
            "id": new_id(),
            "entity_id": entity_id,
            "agent_id": prov.agent_id,
            "name": name,
            "canonical_name": canonical,
            "weight": weight,
            "status": "active",
            "proposal_id": prov.proposal_id,
            "created_at": now,
            "updated_at": now,
        },
    )
    _log(conn, prov, "create_aspect", "entity_aspects", row["id"], None, row)
    return reads.to_aspect(row), True


def archive_aspect(conn: Connection, prov: Provenance, aspect_id: str) -> Aspect:
    """Archive an active aspect (its claims stay, hidden with it)."""
    before = _aspect(conn, prov, aspect_id)
    now = utc_now()
    after = _update(
        conn,
        "entity_aspects",
        aspect_id,
        {"status": "archived", "archived_at": now, "updated_at": now},
    )
    _log(conn, prov, "archive_aspect", "entity_aspects", aspect_id, before, after)
    return reads.to_aspect(after)


def merge_aspects(
    conn: Connection, prov: Provenance, survivor_id: str, other_ids: Sequence[str]
) -> Aspect:
    """Fold other aspects of the same entity into `survivor_id` (claims and links follow)."""
    survivor = _aspect(conn, prov, survivor_id)
    others = list(dict.fromkeys(other_ids))
    if not others or survivor_id in others:
        raise InvalidInput("merge needs other aspects than the survivor")
    rows = [_aspect(conn, prov, other) for other in others]
    for row in rows:
        if row["entity_id"] != survivor["entity_id"]:
            raise InvalidInput("only aspects of one entity can be merged", code="aspect_invalid")
    for row in rows:
        _move_claims(conn, prov, "merge_aspects", row["id"], survivor_id)
        after = _update(
            conn, "entity_aspects", row["id"], {"status": "merged", "updated_at": utc_now()}
        )
        _log(conn, prov, "merge_aspects", "entity_aspects", row["id"], row, after)
    return reads.to_aspect(survivor)


# --- claims -------------------------------------------------------------------------------


def _claim_values(
    prov: Provenance,
    aspect_id: str,
    content: str,
    *,
    kind: str,
    claim_key: str | None,
    group_key: str | None,
    confidence: float,
    importance: float,
    memory_id: str | None,
    times: ClaimTimes,
) -> dict[str, Any]:
    content = check_text(content, "claim", MAX_CLAIM_CHARS, code="claim_invalid")
    times = check_times(times)
    if kind not in CLAIM_KINDS:
        raise InvalidInput(
            f"unknown claim kind {kind!r}; allowed: {', '.join(CLAIM_KINDS)}", code="claim_invalid"
        )
    if claim_key is not None:
        claim_key = check_text(claim_key, "claim_key", MAX_KEY_CHARS, code="claim_invalid")
    if group_key is not None:
        group_key = check_text(group_key, "group_key", MAX_KEY_CHARS, code="claim_invalid")
    now = utc_now()
    return {
        "id": new_id(),
        "aspect_id": aspect_id,
        "agent_id": prov.agent_id,
        "memory_id": memory_id or prov.source_memory_id,
        "kind": kind,
        "content": content,
        "normalized_content": normalize_claim(content),
        "confidence": check_unit(confidence, "confidence"),
        "importance": check_unit(importance, "importance"),
        "status": "active",
        "claim_key": claim_key,
        "group_key": group_key,
        "proposal_id": prov.proposal_id,
        "proposal_evidence": _evidence_column(prov),
        "version": 1,
        **times.as_dict(),
        "created_at": now,
        "updated_at": now,
    }


def add_claim_value(
    conn: Connection,
    prov: Provenance,
    aspect_id: str,
    content: str,
    *,
    kind: str = "attribute",
    claim_key: str | None = None,
    group_key: str | None = None,
    confidence: float = 1.0,
    importance: float = 0.5,
    memory_id: str | None = None,
    valid_from: str | None = None,
    valid_until: str | None = None,
    times: ClaimTimes | None = None,
) -> tuple[Claim, bool]:
    """Add a claim under an active aspect; an identical active claim is returned instead.
    `times` (or the shorthand `valid_from`/`valid_until`) says when it holds or happened."""
    _aspect(conn, prov, aspect_id)
    if times is None:
        times = ClaimTimes(valid_from=valid_from, valid_until=valid_until)
    values = _claim_values(
        prov, aspect_id, content, kind=kind, claim_key=claim_key, group_key=group_key,
        confidence=confidence, importance=importance, memory_id=memory_id, times=times,
    )  # fmt: skip
    same = conn.execute(
        "SELECT * FROM entity_attributes WHERE aspect_id = ? AND status = 'active' "
        "AND normalized_content = ? AND COALESCE(claim_key, '') = COALESCE(?, '') LIMIT 1",
        (aspect_id, values["normalized_content"], values["claim_key"]),
    ).fetchone()
    if same is not None:
        return reads.to_claim(same), False
    row = _insert(conn, "entity_attributes", values)
    _log(conn, prov, "add_claim_value", "entity_attributes", row["id"], None, row)
    return reads.to_claim(row), True


def set_claim_value(
    conn: Connection,
    prov: Provenance,
    aspect_id: str,
    claim_key: str,
    content: str,
    *,
    kind: str = "attribute",
    group_key: str | None = None,
    confidence: float = 1.0,
    importance: float = 0.5,
    memory_id: str | None = None,
    times: ClaimTimes | None = None,
) -> tuple[Claim, bool]:
    """The keyed value of an aspect: a new value supersedes the active one (a new version);
    the same value is returned unchanged (False)."""
    _aspect(conn, prov, aspect_id)
    claim_key = check_text(claim_key, "claim_key", MAX_KEY_CHARS, code="claim_invalid")
    current = conn.execute(
        "SELECT * FROM entity_attributes WHERE aspect_id = ? AND claim_key = ? "
        "AND status = 'active' ORDER BY version DESC, created_at DESC LIMIT 1",
        (aspect_id, claim_key),
    ).fetchone()
    if current is None:
        return add_claim_value(
            conn, prov, aspect_id, content, kind=kind, claim_key=claim_key, group_key=group_key,
            confidence=confidence, importance=importance, memory_id=memory_id, times=times,
        )  # fmt: skip
    if current["normalized_content"] == normalize_claim(content.strip()):
        return reads.to_claim(current), False
    claim = supersede_claim_value(
        conn, prov, current["id"], content, confidence=confidence, importance=importance,
        memory_id=memory_id, times=times,
    )  # fmt: skip
    return claim, True


def supersede_claim_value(
    conn: Connection,
    prov: Provenance,
    attribute_id: str,
    content: str,
    *,
    confidence: float | None = None,
    importance: float | None = None,
    memory_id: str | None = None,
    times: ClaimTimes | None = None,
) -> Claim:
    """Replace an active claim with a new version; the old one stays, `superseded`."""
    old = _claim(conn, prov, attribute_id)
    _aspect(conn, prov, old["aspect_id"])
    values = _claim_values(
        prov,
        old["aspect_id"],
        content,
        kind=old["kind"],
        claim_key=old["claim_key"],
        group_key=old["group_key"],
        confidence=old["confidence"] if confidence is None else confidence,
        importance=old["importance"] if importance is None else importance,
        memory_id=memory_id,
        times=times or ClaimTimes(),
    )
    values.update(
        version=int(old["version"]) + 1,
        version_root_id=old["version_root_id"] or old["id"],
        previous_attribute_id=old["id"],
    )
    row = _insert(conn, "entity_attributes", values)
    _log(conn, prov, "supersede_claim_value", "entity_attributes", row["id"], None, row)
    after = _update(
        conn,
        "entity_attributes",
        old["id"],
        {"status": "superseded", "superseded_by": row["id"], "updated_at": utc_now()},
    )
    _log(conn, prov, "supersede_claim_value", "entity_attributes", old["id"], old, after)
    return reads.to_claim(row)


def archive_claim_value(conn: Connection, prov: Provenance, attribute_id: str) -> Claim:
    """Archive an active claim (kept for history)."""
    before = _claim(conn, prov, attribute_id)
    after = _update(
        conn, "entity_attributes", attribute_id, {"status": "archived", "updated_at": utc_now()}
    )
    _log(conn, prov, "archive_claim_value", "entity_attributes", attribute_id, before, after)
    return reads.to_claim(after)


def _other_evidence(evidence_json: str, purged: set[str]) -> bool:
    try:
        items = json.loads(evidence_json or "[]")
    except ValueError:
        return False
    for item in items if isinstance(items, list) else []:
        ref = str(item.get("source_ref", "")) if isinstance(item, dict) else ""
        if ref and not (ref.startswith("memory:") and ref[len("memory:") :] in purged):
            return True
    return False


def mark_claims_unsupported(
    conn: Connection, memory_ids: Sequence[str], *, actor: str = "retention"
) -> int:
    """Active claims whose only evidence is among `memory_ids` become `unsupported`.

    Called before the memories are purged (their `memory_id` is then nulled by the foreign
    key); a claim that cites other evidence stays active. Never deletes a claim.
    """
    if not memory_ids:
        return 0
    purged = set(memory_ids)
    found = conn.execute(
        "SELECT * FROM entity_attributes WHERE status = 'active' "
        "AND memory_id IN (SELECT value FROM json_each(:ids)) ORDER BY id",
        {"ids": json.dumps(sorted(purged))},
    ).fetchall()
    marked = 0
    for item in found:
        before = reads.row_dict(item)
        if _other_evidence(before["proposal_evidence"], purged):
            continue
        prov = Provenance(actor=actor, agent_id=before["agent_id"])
        after = _update(
            conn,
            "entity_attributes",
            before["id"],
            {"status": "unsupported", "updated_at": utc_now()},
        )
        _log(conn, prov, "mark_unsupported", "entity_attributes", before["id"], before, after)
        marked += 1
    return marked


# --- links --------------------------------------------------------------------------------


def _named_link(conn: Connection, row: Row) -> Dependency:
    """A link value with its two entities' names."""
    names = dict(
        conn.execute(
            "SELECT id, name FROM entities WHERE id IN (?, ?)",
            (row["source_entity_id"], row["target_entity_id"]),
        ).fetchall()
    )
    return reads.to_dependency(
        {**row, "source_name": names.get(row["source_entity_id"], ""),
         "target_name": names.get(row["target_entity_id"], "")}
    )  # fmt: skip


def _live_edge(conn: Connection, agent_id: str, src: str, tgt: str, kind: str) -> Row | None:
    found = conn.execute(
        "SELECT * FROM entity_dependencies WHERE agent_id = ? AND source_entity_id = ? "
        "AND target_entity_id = ? AND dependency_type = ? AND status = 'active'",
        (agent_id, src, tgt, kind),
    ).fetchone()
    return reads.row_dict(found) if found is not None else None


def create_link(
    conn: Connection,
    prov: Provenance,
    source_entity_id: str,
    target_entity_id: str,
    dependency_type: str,
    *,
    strength: float = 0.5,
    confidence: float = 1.0,
    reason: str | None = None,
    aspect_id: str | None = None,
) -> tuple[Dependency, bool]:
    """Get-or-create the active link `source -[type]-> target` between two active entities."""
    if source_entity_id == target_entity_id:
        raise InvalidInput("a link needs two different entities", code="link_invalid")
    _entity(conn, prov, source_entity_id)
    _entity(conn, prov, target_entity_id)
    kind = check_text(dependency_type, "link type", MAX_LINK_TYPE_CHARS, code="link_invalid")
    kind = kind.lower().replace(" ", "_")
    strength = check_unit(strength, "strength")
    confidence = check_unit(confidence, "confidence")
    if reason is not None:
        reason = check_text(reason, "reason", MAX_REASON_CHARS, code="link_invalid")
    if aspect_id is not None:
        aspect = _aspect(conn, prov, aspect_id)
        if aspect["entity_id"] != source_entity_id:
            raise InvalidInput("a link's aspect belongs to its source entity", code="link_invalid")
    existing = _live_edge(conn, prov.agent_id, source_entity_id, target_entity_id, kind)
    if existing is not None:
        return _named_link(conn, existing), False
    now = utc_now()
    row = _insert(
        conn,
        "entity_dependencies",
        {
            "id": new_id(),
            "source_entity_id": source_entity_id,
            "target_entity_id": target_entity_id,
            "agent_id": prov.agent_id,
            "aspect_id": aspect_id,
            "dependency_type": kind,
            "strength": strength,
            "confidence": confidence,
            "reason": reason,
            "status": "active",
            "proposal_id": prov.proposal_id,
            "proposal_evidence": _evidence_column(prov),
            "created_at": now,
            "updated_at": now,
        },
    )
    _log(conn, prov, "create_link", "entity_dependencies", row["id"], None, row)
    return _named_link(conn, row), True


def update_link(
    conn: Connection,
    prov: Provenance,
    link_id: str,
    *,
    strength: float | None = None,
    confidence: float | None = None,
    reason: str | None = None,
) -> Dependency:
    """Change an active link's strength, confidence or reason."""
    before = _link(conn, prov, link_id)
    values: dict[str, Any] = {}
    if strength is not None:
        values["strength"] = check_unit(strength, "strength")
    if confidence is not None:
        values["confidence"] = check_unit(confidence, "confidence")
    if reason is not None:
        values["reason"] = check_text(reason, "reason", MAX_REASON_CHARS, code="link_invalid")
    if not values:
        return _named_link(conn, before)
    values["updated_at"] = utc_now()
    after = _update(conn, "entity_dependencies", link_id, values)
    _log(conn, prov, "update_link", "entity_dependencies", link_id, before, after)
    return _named_link(conn, after)


def archive_link(conn: Connection, prov: Provenance, link_id: str) -> Dependency:
    """Archive an active link (kept for history)."""
    before = _link(conn, prov, link_id)
    after = _update(
        conn, "entity_dependencies", link_id, {"status": "archived", "updated_at": utc_now()}
    )
    _log(conn, prov, "archive_link", "entity_dependencies", link_id, before, after)
    return _named_link(conn, after)


def create_relation(
    conn: Connection,
    prov: Provenance,
    source_entity_id: str,
    target_entity_id: str,
    relation_type: str,
    *,
    strength: float = 0.5,
    confidence: float = 1.0,
) -> Relation:
    """Record a legacy relation (one row per pair and type; a repeat bumps `mentions`)."""
    if source_entity_id == target_entity_id:
        raise InvalidInput("a relation needs two different entities", code="link_invalid")
    _entity(conn, prov, source_entity_id)
    _entity(conn, prov, target_entity_id)
    kind = check_text(relation_type, "relation type", MAX_LINK_TYPE_CHARS, code="link_invalid")
    found = conn.execute(
        "SELECT * FROM relations WHERE agent_id = ? AND source_entity_id = ? "
        "AND target_entity_id = ? AND relation_type = ?",
        (prov.agent_id, source_entity_id, target_entity_id, kind),
    ).fetchone()
    now = utc_now()
    if found is not None:
        before = reads.row_dict(found)
        after = _update(
            conn, "relations", before["id"], {"mentions": before["mentions"] + 1, "updated_at": now}
        )
        _log(conn, prov, "create_relation", "relations", before["id"], before, after)
        return reads.to_relation(after)
    row = _insert(
        conn,
        "relations",
        {
            "id": new_id(),
            "agent_id": prov.agent_id,
            "source_entity_id": source_entity_id,
            "target_entity_id": target_entity_id,
            "relation_type": kind,
            "strength": check_unit(strength, "strength"),
            "confidence": check_unit(confidence, "confidence"),
            "created_at": now,
            "updated_at": now,
        },
    )
    _log(conn, prov, "create_relation", "relations", row["id"], None, row)
    return reads.to_relation(row)


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
    return _row(conn, mutation.target_table, str(state["id"]))


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
        except sqlean.IntegrityError as exc:  # e.g. an active entity of that name exists now
            raise Conflict(
                f"{table} {mutation.target_id} cannot be restored: {exc}",
                code="graph_row_changed",
                details={"mutation_id": mutation.id},
            ) from exc
    return _log(
        conn, prov, operation, table, mutation.target_id, now, restored, reverts=mutation.id
    )


def _write_back(
    conn: Connection, table: str, now: Row | None, before: Mapping[str, Any] | None
) -> Row | None:
    skip = _NOT_RESTORED.get(table, set())
    if before is None:
        if now is not None:
            _delete(conn, table, str(now["id"]))
        return None
    values = {k: v for k, v in before.items() if k not in skip}
    if now is None:
        return _insert(conn, table, values)
    row_id = str(values.pop("id"))
    return _update(conn, table, row_id, values)
