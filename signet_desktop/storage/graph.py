"""The knowledge graph's entities: create, alias, rename, archive, merge and split, retention.

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
from collections.abc import Sequence

from signet_desktop.domain.entities import EntityMatch, canonical_entity_name
from signet_desktop.domain.errors import Conflict, InvalidInput, NotFound
from signet_desktop.domain.knowledge import (
    MAX_DESCRIPTION_CHARS,
    MAX_NAME_CHARS,
    MAX_REASON_CHARS,
    Alias,
    Entity,
    GraphMutation,
    Provenance,
    check_entity_type,
    check_text,
    check_unit,
)
from signet_desktop.domain.memory import utc_now
from signet_desktop.storage import graph_claims, graph_links, graph_rows, mentions
from signet_desktop.storage import knowledge_reads as reads
from signet_desktop.storage.connect import Connection

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
    row = graph_rows.insert_logged(
        conn,
        prov,
        "create_entity",
        "entities",
        {
            "id": graph_rows.new_id(),
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
    return reads.to_entity(row), True


def add_alias(
    conn: Connection, prov: Provenance, entity_id: str, alias: str, *, source: str | None = None
) -> tuple[Alias, bool]:
    """Give an active entity another name; an alias it already has is returned as is."""
    graph_rows.entity_row(conn, prov, entity_id)
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
    row = graph_rows.insert_logged(
        conn,
        prov,
        "add_alias",
        "entity_aliases",
        {
            "id": graph_rows.new_id(),
            "entity_id": entity_id,
            "agent_id": prov.agent_id,
            "alias": alias,
            "canonical_alias": canonical,
            "source": source or _source_of(prov)[0],
            "created_at": utc_now(),
        },
    )
    return reads.to_alias(row), True


def rename_entity(
    conn: Connection, prov: Provenance, entity_id: str, new_name: str, *, keep_alias: bool = True
) -> Entity:
    """Rename an active entity (the old name stays as an alias unless `keep_alias=False`)."""
    before = graph_rows.entity_row(conn, prov, entity_id)
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
    after = graph_rows.update_logged(
        conn,
        prov,
        "rename_entity",
        "entities",
        before,
        {"name": new_name, "canonical_name": canonical, "updated_at": utc_now()},
    )
    if keep_alias and before["canonical_name"] != canonical:
        add_alias(conn, prov, entity_id, before["name"])
    return reads.to_entity(after)


def archive_entity(
    conn: Connection, prov: Provenance, entity_id: str, reason: str | None = None
) -> Entity:
    """Archive an active (or unsupported) entity; its rows stay for history."""
    before = graph_rows.entity_row(conn, prov, entity_id, active=False)
    if before["status"] not in ("active", "unsupported"):
        raise Conflict(f"entity {entity_id} is {before['status']}", code="entity_not_active")
    if reason is not None:
        reason = check_text(reason, "reason", MAX_REASON_CHARS)
    now = utc_now()
    after = graph_rows.update_logged(
        conn,
        prov,
        "archive_entity",
        "entities",
        before,
        {"status": "archived", "archived_at": now, "archived_reason": reason, "updated_at": now},
    )
    return reads.to_entity(after)


def restore_entity(conn: Connection, prov: Provenance, entity_id: str) -> Entity:
    """Bring an archived or unsupported entity back to active (unless its name is taken)."""
    before = graph_rows.entity_row(conn, prov, entity_id, active=False)
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
    after = graph_rows.update_logged(
        conn,
        prov,
        "restore_entity",
        "entities",
        before,
        {"status": "active", "archived_at": None, "archived_reason": None, "updated_at": utc_now()},
    )
    return reads.to_entity(after)


def set_pinned(conn: Connection, prov: Provenance, entity_id: str, pinned: bool) -> Entity:
    """Pin or unpin an active entity (a pinned entity is never purged as an orphan)."""
    before = graph_rows.entity_row(conn, prov, entity_id)
    if bool(before["pinned"]) == pinned:
        return reads.to_entity(before)
    now = utc_now()
    after = graph_rows.update_logged(
        conn,
        prov,
        "pin_entity" if pinned else "unpin_entity",
        "entities",
        before,
        {"pinned": int(pinned), "pinned_at": now if pinned else None, "updated_at": now},
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
    survivor = graph_rows.entity_row(conn, prov, survivor_id)
    others = list(dict.fromkeys(other_ids))
    if not others:
        raise InvalidInput("merge needs at least one entity besides the survivor")
    if survivor_id in others:
        raise InvalidInput("an entity cannot be merged into itself", code="merge_into_self")
    rows = [graph_rows.entity_row(conn, prov, other, active=False) for other in others]
    for row in rows:
        if row["status"] == "merged":
            raise Conflict(f"entity {row['id']} is already merged", code="entity_not_active")
    for row in rows:
        _merge_one(conn, prov, survivor, row)
    found = graph_rows.fetch_row(conn, "entities", survivor_id)
    assert found is not None
    return reads.to_entity(found)


def _merge_one(
    conn: Connection, prov: Provenance, survivor: graph_rows.Row, other: graph_rows.Row
) -> None:
    sid, oid = survivor["id"], other["id"]
    _merge_aliases(conn, prov, sid, other)
    for before, after in mentions.repoint(conn, oid, sid):
        graph_rows.log_mutation(
            conn,
            prov,
            MERGE,
            graph_rows.MENTIONS_TABLE,
            graph_rows.mention_key(before),
            before,
            after,
        )
    _merge_aspects_of(conn, prov, sid, oid)
    _merge_links(conn, prov, sid, oid)
    _merge_relations(conn, prov, sid, oid)
    now = utc_now()
    after = graph_rows.update_logged(
        conn,
        prov,
        MERGE,
        "entities",
        other,
        {"status": "merged", "merged_into": sid, "updated_at": now},
    )


def _merge_aliases(conn: Connection, prov: Provenance, sid: str, other: graph_rows.Row) -> None:
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
            graph_rows.delete_row(conn, "entity_aliases", before["id"])
            graph_rows.log_mutation(conn, prov, MERGE, "entity_aliases", before["id"], before, None)
            continue
        after = graph_rows.update_row(conn, "entity_aliases", before["id"], {"entity_id": sid})
        taken.add(before["canonical_alias"])
        graph_rows.log_mutation(conn, prov, MERGE, "entity_aliases", before["id"], before, after)
    if other["canonical_name"] not in taken and other["canonical_name"] != survivor_name:
        graph_rows.insert_logged(
            conn,
            prov,
            MERGE,
            "entity_aliases",
            {
                "id": graph_rows.new_id(),
                "entity_id": sid,
                "agent_id": prov.agent_id,
                "alias": other["name"],
                "canonical_alias": other["canonical_name"],
                "source": "merge",
                "created_at": utc_now(),
            },
        )


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
            graph_rows.update_logged(
                conn, prov, MERGE, "entity_aspects", before, {"entity_id": sid, "updated_at": now}
            )
            continue
        graph_claims.move_claims(conn, prov, MERGE, before["id"], same["id"])
        graph_rows.update_logged(
            conn, prov, MERGE, "entity_aspects", before, {"status": "merged", "updated_at": now}
        )


def _repointed(before: graph_rows.Row, sid: str, oid: str) -> tuple[str, str]:
    """An edge's (source, target) with the merged entity `oid` replaced by the survivor."""
    src = sid if before["source_entity_id"] == oid else before["source_entity_id"]
    tgt = sid if before["target_entity_id"] == oid else before["target_entity_id"]
    return src, tgt


def _merge_links(conn: Connection, prov: Provenance, sid: str, oid: str) -> None:
    for found in conn.execute(
        "SELECT * FROM entity_dependencies WHERE source_entity_id = ? OR target_entity_id = ? "
        "ORDER BY id",
        (oid, oid),
    ).fetchall():
        before = reads.row_dict(found)
        src, tgt = _repointed(before, sid, oid)
        now = utc_now()
        duplicate = before["status"] == "active" and graph_links.live_edge(
            conn, prov.agent_id, src, tgt, before["dependency_type"]
        )
        if src == tgt or duplicate:  # a self-link after the merge, or a second live edge
            values = {"status": "archived", "updated_at": now}
        else:
            values = {"source_entity_id": src, "target_entity_id": tgt, "updated_at": now}
        graph_rows.update_logged(conn, prov, MERGE, "entity_dependencies", before, values)


def _merge_relations(conn: Connection, prov: Provenance, sid: str, oid: str) -> None:
    for found in conn.execute(
        "SELECT * FROM relations WHERE source_entity_id = ? OR target_entity_id = ? ORDER BY id",
        (oid, oid),
    ).fetchall():
        before = reads.row_dict(found)
        src, tgt = _repointed(before, sid, oid)
        if src == tgt:
            graph_rows.delete_row(conn, "relations", before["id"])
            graph_rows.log_mutation(conn, prov, MERGE, "relations", before["id"], before, None)
            continue
        graph_rows.update_logged(
            conn,
            prov,
            MERGE,
            "relations",
            before,
            {"source_entity_id": src, "target_entity_id": tgt, "updated_at": utc_now()},
        )


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
    row = graph_rows.entity_row(conn, prov, entity_id, active=False)
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
        graph_rows.restore_row(conn, prov, item, operation="split_entity")
    found = graph_rows.fetch_row(conn, "entities", entity_id)
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
        graph_rows.update_logged(
            conn,
            prov,
            "mark_unsupported",
            "entities",
            before,
            {"status": "unsupported", "updated_at": utc_now()},
        )
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
            graph_rows.delete_row(conn, "entity_aliases", alias_row["id"])
            graph_rows.log_mutation(
                conn, prov, "purge_entity", "entity_aliases", alias_row["id"], alias_row, None
            )
        graph_rows.delete_row(conn, "entities", before["id"])
        graph_rows.log_mutation(conn, prov, "purge_entity", "entities", before["id"], before, None)
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
    graph_rows.entity_row(conn, prov, entity_id)
    owner = conn.execute("SELECT agent_id FROM memories WHERE id = ?", (memory_id,)).fetchone()
    if owner is None or owner[0] != prov.agent_id:
        raise NotFound(f"memory {memory_id} not found", code="memory_not_found")
    match = EntityMatch(entity_id, mention_text or "", check_unit(confidence, "confidence"))
    if not mentions.link(conn, prov.agent_id, memory_id, [match]):
        return False
    after = mentions.mention_row(conn, memory_id, entity_id)
    graph_rows.log_mutation(
        conn,
        prov,
        "link_mention",
        graph_rows.MENTIONS_TABLE,
        f"{memory_id}/{entity_id}",
        None,
        after,
    )
    return True
