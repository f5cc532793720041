"""Dampening stages: each applies only when its condition holds, and records what it did."""

from __future__ import annotations

from types import MappingProxyType

import pytest
from support import traversal_seed as seed

from signet_desktop.domain.recall import ChannelEvidence, RecallFilters
from signet_desktop.recall.channels import ChannelRequest, StageClock
from signet_desktop.recall.dampening import (
    GravityStage,
    HubStage,
    ResolutionStage,
    dampening_stages,
    is_temporal,
)
from signet_desktop.recall.fusion import FusedHit
from signet_desktop.storage.database import Database

LONG = " with enough words to be more than fifty characters long"


def request(text: str, agent: str = "default") -> ChannelRequest:
    return ChannelRequest(text, text, agent, RecallFilters(), 50)


def hit(memory_id: str, score: float, *channels: str) -> FusedHit:
    evidence = {name: ChannelEvidence(score, 1, score) for name in channels}
    return FusedHit(memory_id, score, "x", MappingProxyType(evidence))


def by_id(hits: list[FusedHit]) -> dict[str, FusedHit]:
    return {h.memory_id: h for h in hits}


def test_gravity_pulls_down_semantic_only_hits_sharing_no_query_term(db: Database) -> None:
    with db.write() as conn:
        far, near, weak, keyed = seed.memories(
            conn,
            "default",
            [
                "ana prefers green tea in the morning",
                "the invoices table is partitioned by month",
                "lunch is at noon",
                "quarterly reports go to finance",
            ],
        )
    hits = [
        hit(far, 0.6, "semantic"),
        hit(near, 0.6, "semantic"),  # shares "invoices"
        hit(weak, 0.3, "semantic"),  # not above 0.3
        hit(keyed, 0.6, "semantic", "lexical"),  # a keyword channel saw it too
    ]
    out = by_id(
        GravityStage().apply(db.reader(), request("where are invoice rows"), hits, StageClock())
    )
    [pulled] = out[far].adjustments
    assert pulled.stage == "dampening.gravity" and pulled.factor == 0.5
    assert out[far].score == pytest.approx(0.3)
    assert not out[near].adjustments and not out[weak].adjustments and not out[keyed].adjustments


def test_hub_dampens_memories_that_mention_only_hub_entities(db: Database) -> None:
    with db.write() as conn:
        hub_only, mixed, small_only, plain = seed.memories(
            conn, "default", ["acme notes", "acme and zed notes", "zed notes", "plain notes"]
        )
        filler = seed.memories(conn, "default", [f"filler {i}" for i in range(30)])
        hub = seed.entity(conn, "default", "Acme")
        small = seed.entity(conn, "default", "Zed")
        for i in range(9):  # nine more entities of one mention each: the P90 is small
            seed.mention(conn, "default", filler[i], seed.entity(conn, "default", f"E{i}"))
        for memory_id in [hub_only, mixed, *filler[:25]]:
            seed.mention(conn, "default", memory_id, hub)
        for memory_id in (mixed, small_only):
            seed.mention(conn, "default", memory_id, small)
    hits = [hit(m, 0.5, "lexical") for m in (hub_only, mixed, small_only, plain)]
    out = by_id(HubStage().apply(db.reader(), request("acme"), hits, StageClock()))
    [damped] = out[hub_only].adjustments
    assert damped.stage == "dampening.hub" and damped.factor == 0.7 and "P90" in damped.reason
    assert not out[mixed].adjustments and not out[small_only].adjustments
    assert not out[plain].adjustments


def test_hub_reads_only_the_querying_agents_links(db: Database) -> None:
    with db.write() as conn:
        [theirs] = seed.memories(conn, "other", ["acme notes"])
        hub = seed.entity(conn, "other", "Acme")
        seed.mention(conn, "other", theirs, hub)
    hits = [hit(theirs, 0.5, "lexical")]
    assert HubStage().apply(db.reader(), request("acme"), hits, StageClock()) == hits


def test_resolution_boosts_decisions_and_dated_memories_not_short_ones(db: Database) -> None:
    with db.write() as conn:
        [decision] = seed.memories(
            conn, "default", ["we decided to use postgres" + LONG], kind="decision"
        )
        [short] = seed.memories(conn, "default", ["use postgres"], kind="decision")
        [dated] = seed.memories(conn, "default", ["the migration finished on 2026-03-14" + LONG])
        [plain] = seed.memories(conn, "default", ["postgres is a database" + LONG])
    hits = [hit(m, 0.5, "lexical") for m in (decision, short, dated, plain)]
    out = by_id(ResolutionStage().apply(db.reader(), request("postgres"), hits, StageClock()))
    assert [(a.stage, a.factor) for a in out[decision].adjustments] == [
        ("dampening.resolution", 1.2)
    ]
    assert [a.factor for a in out[dated].adjustments] == [1.1]
    assert out[decision].score == pytest.approx(0.6)
    assert not out[short].adjustments and not out[plain].adjustments


def test_temporal_anchors_and_stage_switches() -> None:
    for text in ("on 2026-03-14", "March 14", "14 March", "at 14:30", "in May 2023", "3/14/2026"):
        assert is_temporal(text), text
    assert not is_temporal("we may use postgres for 14 services")
    names = [s.name for s in dampening_stages(gravity=False, hub=True, resolution=False)]
    assert names == ["dampening.hub"]
    assert len(dampening_stages()) == 3
