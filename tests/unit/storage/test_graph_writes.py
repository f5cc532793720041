"""storage/graph.py: every primitive checks scope and state and logs before/after."""

from __future__ import annotations

import json

import pytest

from signet_desktop.domain.errors import Conflict, InvalidInput, NotFound
from signet_desktop.domain.knowledge import Evidence, Provenance
from signet_desktop.storage import graph, graph_claims, graph_links, graph_rows
from signet_desktop.storage import knowledge_reads as reads
from signet_desktop.storage.database import Database
from tests.support.graph import provenance, seed_graph

A = provenance("agent-a")
B = provenance("agent-b")


def log(db: Database, agent: str = "agent-a") -> list[tuple[str, str, bool, bool]]:
    rows = db.reader().execute(
        "SELECT operation, target_table, before_json IS NOT NULL, after_json IS NOT NULL "
        "FROM graph_mutations WHERE agent_id = ? ORDER BY seq",
        (agent,),
    )
    return [(r[0], r[1], bool(r[2]), bool(r[3])) for r in rows]


def count(db: Database, sql: str, *args: object) -> int:
    return int(db.reader().execute(sql, args).fetchone()[0])


def test_create_entity_is_get_or_create_and_logs_once(db: Database) -> None:
    with db.write() as conn:
        first, created = graph.create_entity(conn, A, name="Postgres 16", entity_type="system")
        again, created_again = graph.create_entity(
            conn, A, name=" postgres  16. ", entity_type="system"
        )
        other_type, _ = graph.create_entity(conn, A, name="Postgres 16", entity_type="tool")
    assert created and not created_again
    assert again.id == first.id and other_type.id != first.id
    assert first.canonical_name == "postgres 16" and first.created_by == "test-seed"
    assert first.source_kind == "explicit"
    assert log(db) == [
        ("create_entity", "entities", False, True),
        ("create_entity", "entities", False, True),
    ]


def test_provenance_is_recorded(db: Database) -> None:
    prov = Provenance(
        actor="dreamer", agent_id="agent-a", pass_id="pass-1", proposal_id="prop-1",
        evidence=(Evidence("Ana said so", "memory:m1"),),
    )  # fmt: skip
    with db.write() as conn:
        entity, _ = graph.create_entity(conn, prov, name="Ana", entity_type="person")
    row = db.reader().execute("SELECT * FROM graph_mutations").fetchone()
    assert (row["actor"], row["pass_id"], row["proposal_id"]) == ("dreamer", "pass-1", "prop-1")
    assert json.loads(row["evidence_json"]) == [{"quote": "Ana said so", "source_ref": "memory:m1"}]
    assert json.loads(row["after_json"])["id"] == entity.id
    assert entity.source_kind == "dreaming" and entity.source_id == "pass-1"
    with db.write() as conn:
        assert reads.mutations_of_pass(conn, "agent-a", "pass-1")[0].target_id == entity.id


def test_unknown_type_is_refused_with_the_list(db: Database) -> None:
    with db.write() as conn, pytest.raises(InvalidInput) as err:
        graph.create_entity(conn, A, name="X", entity_type="spaceship")
    assert err.value.code == "entity_type_invalid" and "person" in err.value.message
    assert count(db, "SELECT COUNT(*) FROM entities") == 0


def test_another_agents_entity_is_not_found(db: Database) -> None:
    seeded = seed_graph(db, "agent-a", entities=["Ana"])
    ana = seeded.entity("Ana").id
    with db.write() as conn:
        for call in (
            lambda: graph.add_alias(conn, B, ana, "Annie"),
            lambda: graph.rename_entity(conn, B, ana, "Anna"),
            lambda: graph.archive_entity(conn, B, ana),
            lambda: graph_claims.create_aspect(conn, B, ana, "role"),
        ):
            with pytest.raises(NotFound):
                call()
    assert log(db, "agent-b") == []


def test_rename_keeps_the_old_name_as_alias_and_refuses_a_taken_name(db: Database) -> None:
    seeded = seed_graph(db, "agent-a", entities=[("Ana", "person"), ("Bob", "person")])
    with db.write() as conn:
        renamed = graph.rename_entity(conn, A, seeded.entity("Ana").id, "Ana Lima")
        with pytest.raises(Conflict) as err:
            graph.rename_entity(conn, A, seeded.entity("Bob").id, "ana lima")
    assert renamed.canonical_name == "ana lima"
    assert err.value.code == "entity_name_taken"
    with db.write() as conn:
        aliases = reads.aliases_of(conn, "agent-a", renamed.id)
    assert [a.alias for a in aliases] == ["Ana"]
    assert log(db)[-2:] == [
        ("rename_entity", "entities", True, True),
        ("add_alias", "entity_aliases", False, True),
    ]


def test_archive_and_restore(db: Database) -> None:
    seeded = seed_graph(db, "agent-a", entities=["Ana"])
    ana = seeded.entity("Ana").id
    with db.write() as conn:
        archived = graph.archive_entity(conn, A, ana, "duplicate")
        with pytest.raises(Conflict):
            graph.add_alias(conn, A, ana, "x")
        restored = graph.restore_entity(conn, A, ana)
        with pytest.raises(Conflict):
            graph.restore_entity(conn, A, ana)
    assert (archived.status, archived.archived_reason) == ("archived", "duplicate")
    assert restored.status == "active" and restored.archived_at is None


def test_claim_versions_chain(db: Database) -> None:
    seeded = seed_graph(db, "agent-a", entities=["Postgres"])
    with db.write() as conn:
        aspect, _ = graph_claims.create_aspect(conn, A, seeded.entity("Postgres").id, "deployment")
        v1, created = graph_claims.set_claim_value(conn, A, aspect.id, "port", "5432")
        same, changed = graph_claims.set_claim_value(conn, A, aspect.id, "port", " 5432 ")
        v2, changed2 = graph_claims.set_claim_value(conn, A, aspect.id, "port", "5433")
        v3 = graph_claims.supersede_claim_value(conn, A, v2.id, "6432")
        old = reads.claim(conn, "agent-a", v1.id)
        mid = reads.claim(conn, "agent-a", v2.id)
    assert created and not changed and changed2 and same.id == v1.id
    assert (v2.version, v2.previous_attribute_id, v2.version_root_id) == (2, v1.id, v1.id)
    assert (v3.version, v3.previous_attribute_id, v3.version_root_id) == (3, v2.id, v1.id)
    assert old is not None and (old.status, old.superseded_by) == ("superseded", v2.id)
    assert mid is not None and (mid.status, mid.superseded_by) == ("superseded", v3.id)
    assert count(db, "SELECT COUNT(*) FROM entity_attributes WHERE status = 'active'") == 1
    with db.write() as conn:
        archived = graph_claims.archive_claim_value(conn, A, v3.id)
        with pytest.raises(Conflict):
            graph_claims.supersede_claim_value(conn, A, v3.id, "7000")
    assert archived.status == "archived"


def test_add_claim_dedupes_and_validates(db: Database) -> None:
    seeded = seed_graph(db, "agent-a", aspects={"Ana": {"role": ["maintains billing"]}})
    aspect = seeded.aspects[("Ana", "role")]
    with db.write() as conn:
        again, created = graph_claims.add_claim_value(conn, A, aspect.id, "Maintains  billing")
        with pytest.raises(InvalidInput):
            graph_claims.add_claim_value(conn, A, aspect.id, "x" * 5000)
        with pytest.raises(InvalidInput):
            graph_claims.add_claim_value(conn, A, aspect.id, "ok", confidence=2.0)
        with pytest.raises(NotFound):
            graph_claims.add_claim_value(conn, B, aspect.id, "stolen")
    assert not created and again.id == seeded.claims[("Ana", "role")][0].id


def test_links_are_get_or_create_and_refuse_self_links(db: Database) -> None:
    seeded = seed_graph(db, "agent-a", links=[("Ana", "Billing", "maintains")])
    link = seeded.links[0]
    with db.write() as conn:
        again, created = graph_links.create_link(
            conn, A, seeded.entity("Ana").id, seeded.entity("Billing").id, "Maintains"
        )
        with pytest.raises(InvalidInput):
            graph_links.create_link(conn, A, link.source_entity_id, link.source_entity_id, "x")
        updated = graph_links.update_link(conn, A, link.id, strength=0.9, reason="on call")
        archived = graph_links.archive_link(conn, A, link.id)
        with pytest.raises(Conflict):
            graph_links.update_link(conn, A, link.id, strength=0.1)
    assert not created and again.id == link.id
    assert (updated.strength, updated.reason) == (0.9, "on call")
    assert archived.status == "archived"


def test_mentions_counter_follows_mention_rows(db: Database) -> None:
    seeded = seed_graph(
        db, "agent-a", entities=["Quokka"], mentions={"Quokka": ["Quokka one", "Quokka two"]}
    )
    assert seeded.entity("Quokka").mentions == 2
    with db.write() as conn:
        assert not graph.link_mention(
            conn, A, seeded.memory_ids["Quokka"][0], seeded.entity("Quokka").id
        )
        with pytest.raises(NotFound):
            graph.link_mention(conn, B, seeded.memory_ids["Quokka"][0], seeded.entity("Quokka").id)


def test_merge_then_split_restores_every_row(db: Database) -> None:
    seeded = seed_graph(
        db,
        "agent-a",
        entities=[("Postgres", "system"), ("PG", "system"), ("Ana", "person")],
        aspects={
            "Postgres": {"deployment": ["port 5432"]},
            "PG": {"deployment": ["runs in docker"], "owners": ["Ana"]},
        },
        links=[("Ana", "PG", "maintains"), ("PG", "Postgres", "same_as")],
        mentions={"PG": ["PG was upgraded"]},
    )
    pg = seeded.entity("PG").id
    survivor = seeded.entity("Postgres").id
    with db.write() as conn:
        graph.add_alias(conn, A, pg, "pgsql")

    def snapshot() -> dict[str, list[tuple[object, ...]]]:
        tables = {
            "entities": "SELECT id, name, status, merged_into, mentions FROM entities",
            "entity_aliases": "SELECT id, entity_id, canonical_alias FROM entity_aliases",
            "entity_aspects": "SELECT id, entity_id, status FROM entity_aspects",
            "entity_attributes": "SELECT id, aspect_id, status FROM entity_attributes",
            "entity_dependencies": "SELECT id, source_entity_id, target_entity_id, status "
            "FROM entity_dependencies",
            "mentions": "SELECT memory_id, entity_id FROM memory_entity_mentions",
        }
        return {k: sorted(tuple(r) for r in db.reader().execute(v)) for k, v in tables.items()}

    before = snapshot()
    with db.write() as conn:
        merged = graph.merge_entities(conn, A, survivor, [pg])
        folded = reads.entity(conn, "agent-a", pg)
        aliases = {a.canonical_alias for a in reads.aliases_of(conn, "agent-a", survivor)}
        claims = reads.claims_of_aspects(
            conn, "agent-a", [a.id for a in reads.aspects_of(conn, "agent-a", survivor)]
        )
    assert folded is not None and (folded.status, folded.merged_into) == ("merged", survivor)
    assert aliases == {"pg", "pgsql"}
    assert merged.mentions == 1
    assert sum(len(v) for v in claims.values()) == 3  # both deployment claims and the owner
    assert count(db, "SELECT COUNT(*) FROM entity_dependencies WHERE status = 'active'") == 1
    with db.write() as conn:
        split = graph.split_entity(conn, A, pg)
    assert split.status == "active" and split.merged_into is None
    assert snapshot() == before
    with db.write() as conn, pytest.raises(Conflict):
        graph.split_entity(conn, A, pg)


def test_split_is_refused_after_a_later_change(db: Database) -> None:
    seeded = seed_graph(
        db, "agent-a", entities=["Postgres", "PG"], aspects={"PG": {"owners": ["Ana"]}}
    )
    with db.write() as conn:
        graph.merge_entities(conn, A, seeded.entity("Postgres").id, [seeded.entity("PG").id])
        graph_claims.archive_aspect(conn, A, seeded.aspects[("PG", "owners")].id)
    with db.write() as conn, pytest.raises(Conflict) as err:
        graph.split_entity(conn, A, seeded.entity("PG").id)
    assert err.value.code == "graph_row_changed"


def test_restore_row_undoes_a_pass_newest_first(db: Database) -> None:
    dream = Provenance(actor="dreaming", agent_id="agent-a", pass_id="p-7")
    seeded = seed_graph(db, "agent-a", entities=["Ana"])
    with db.write() as conn:
        graph.rename_entity(conn, dream, seeded.entity("Ana").id, "Ana Lima")
        aspect, _ = graph_claims.create_aspect(conn, dream, seeded.entity("Ana").id, "role")
        graph_claims.add_claim_value(conn, dream, aspect.id, "maintains billing")
    with db.write() as conn:
        for item in reversed(reads.mutations_of_pass(conn, "agent-a", "p-7")):
            graph_rows.restore_row(conn, A, item)
        ana = reads.entity(conn, "agent-a", seeded.entity("Ana").id)
    assert ana is not None and ana.name == "Ana"
    assert count(db, "SELECT COUNT(*) FROM entity_aspects") == 0
    assert count(db, "SELECT COUNT(*) FROM entity_aliases") == 0
    assert (
        count(db, "SELECT COUNT(*) FROM graph_mutations WHERE reverts_mutation_id IS NOT NULL") == 4
    )


def test_restore_row_refuses_a_row_changed_since(db: Database) -> None:
    seeded = seed_graph(db, "agent-a", entities=["Ana"])
    with db.write() as conn:
        first = reads.mutations_of_target(conn, "agent-a", "entities", seeded.entity("Ana").id)[0]
        graph.rename_entity(conn, A, seeded.entity("Ana").id, "Ana Lima", keep_alias=False)
        with pytest.raises(Conflict):
            graph_rows.restore_row(conn, A, first)
        with pytest.raises(NotFound):
            graph_rows.restore_row(conn, B, first)
        assert reads.later_mutations(conn, first)[0].operation == "rename_entity"


def test_merge_aspects_moves_claims(db: Database) -> None:
    seeded = seed_graph(
        db, "agent-a", aspects={"Ana": {"role": ["maintains billing"], "job": ["on call"]}}
    )
    role, job = seeded.aspects[("Ana", "role")], seeded.aspects[("Ana", "job")]
    with db.write() as conn:
        graph_claims.merge_aspects(conn, A, role.id, [job.id])
        claims = reads.claims_of_aspects(conn, "agent-a", [role.id])[role.id]
        merged = reads.aspect(conn, "agent-a", job.id)
    assert {c.content for c in claims} == {"maintains billing", "on call"}
    assert merged is not None and merged.status == "merged"


def test_the_log_holds_the_rows_before_and_after(db: Database) -> None:
    seeded = seed_graph(db, "agent-a", entities=[("Ana", "person")])
    ana = seeded.entity("Ana").id
    with db.write() as conn:
        graph.rename_entity(conn, A, ana, "Ana Lima", keep_alias=False)
        (change,) = [
            m
            for m in reads.mutations_of_target(conn, "agent-a", "entities", ana)
            if m.operation == "rename_entity"
        ]
    assert change.before is not None and change.after is not None
    assert (change.before["name"], change.after["name"]) == ("Ana", "Ana Lima")
    assert change.before["canonical_name"] == "ana" and change.after["canonical_name"] == "ana lima"
    assert "embedding" not in change.after and change.actor == "test-seed"
    assert change.seq > 1 and change.source_memory_id is None


def test_pin_relations_and_unsupported_are_logged(db: Database) -> None:
    seeded = seed_graph(db, "agent-a", entities=["Ana", "Bob", "PG"])
    ana, bob, pg = (seeded.entity(n).id for n in ("Ana", "Bob", "PG"))
    with db.write() as conn:
        pinned = graph.set_pinned(conn, A, ana, True)
        same = graph.set_pinned(conn, A, ana, True)  # no change, no row
        first = graph_links.create_relation(conn, A, ana, bob, "knows")
        again = graph_links.create_relation(conn, A, ana, bob, "knows")
        graph_links.create_relation(conn, A, pg, bob, "used_by")
        with pytest.raises(InvalidInput):
            graph_links.create_relation(conn, A, ana, ana, "self")
        graph.merge_entities(conn, A, ana, [pg])
        rel = conn.execute(
            "SELECT source_entity_id FROM relations WHERE relation_type = 'used_by'"
        ).fetchone()
        marked = graph.mark_entities_unsupported(conn, A, "explicit", [""])
    assert pinned.pinned and same.pinned
    assert again.id == first.id and again.mentions == 2
    assert rel[0] == ana  # repointed by the merge
    assert marked == 0
    ops = [op for op, *_ in log(db)]
    assert ops.count("pin_entity") == 1 and ops.count("create_relation") == 3


def test_source_removal_marks_derived_entities_unsupported_through_the_writer(
    db: Database,
) -> None:
    from signet_desktop.storage import graph_staleness

    with db.write() as conn:
        entity, _ = graph.create_entity(conn, A, name="Imported")
        conn.execute(
            "UPDATE entities SET source_kind = 'transcript', source_id = 's1' WHERE id = ?",
            (entity.id,),
        )
        assert graph_staleness.count_supported_by(conn, "agent-a", "transcript", ["s1"]) == 1
        assert graph_staleness.mark_unsupported(conn, "agent-a", "transcript", ["s1"]) == 1
        found = reads.entity(conn, "agent-a", entity.id)
    assert found is not None and found.status == "unsupported"
    assert log(db)[-1] == ("mark_unsupported", "entities", True, True)
