"""The Entities pane: list, search and filters, the entity page (claims with history, links
both ways, mentions with provenance, the neighbourhood graph), navigation, and scope."""

from __future__ import annotations

import asyncio

import pytest
from pytestqt.qtbot import QtBot

from signet_desktop.domain.knowledge import EntityPage, KnowledgeStats
from signet_desktop.service.facade import SignetService
from signet_desktop.storage import graph_claims
from signet_desktop.ui.memory_format import INSPECTOR_ACTOR
from signet_desktop.ui.pane import PaneContext, discover_panes
from signet_desktop.ui.panes.entities import EMPTY_HINT, PANE, EntitiesPane
from signet_desktop.ui.panes.recall import RecallPane
from tests.support.db import database_of
from tests.support.graph import SeededGraph, provenance, seed_graph
from tests.ui.conftest import RecordingNavigator
from tests.ui.memory_support import settle

pytestmark = pytest.mark.gui


class BrokenKnowledge:
    """A knowledge service whose reads fail (the banner test)."""

    def list_entities(self, agent_id: str, **kw: object) -> EntityPage:
        raise RuntimeError("database is locked")

    def stats(self, agent_id: str) -> KnowledgeStats:
        raise RuntimeError("database is locked")


def seed(service: SignetService) -> SeededGraph:
    """billing (a system) with a versioned claim, links both ways and mentions; another
    agent's entity of the same name."""
    db = database_of(service)
    seeded = seed_graph(
        db, "default",
        entities=[("billing", "system"), ("Postgres", "tool"), ("api", "service")],
        links=[("billing", "Postgres", "depends_on"), ("api", "billing", "calls")],
        mentions={"billing": ["alice moved billing to Postgres 16 last week"]},
        memories=service.memories,
    )  # fmt: skip
    prov = provenance("default")
    with db.write() as conn:
        aspect, _ = graph_claims.create_aspect(conn, prov, seeded.entity("billing").id, "storage")
        graph_claims.set_claim_value(conn, prov, aspect.id, "database", "Postgres 14")
        graph_claims.set_claim_value(conn, prov, aspect.id, "database", "Postgres 16")
    seed_graph(db, "other", entities=[("billing", "system"), ("Nightingale", "project")])
    return seeded


def open_pane(qtbot: QtBot, context: PaneContext, loop: asyncio.AbstractEventLoop,
              knowledge: object | None = None) -> EntitiesPane:  # fmt: skip
    pane = EntitiesPane(context)
    if knowledge is not None:
        pane.knowledge = knowledge  # type: ignore[assignment]
    qtbot.addWidget(pane)
    pane.resize(1100, 720)
    pane.show()
    pane.activated()
    settle(loop, context)
    return pane


def test_the_pane_registers_itself() -> None:
    spec = next(spec for spec in discover_panes() if spec.key == "entities")
    assert spec == PANE
    assert (spec.title, spec.icon, spec.order) == ("Entities", "entities.svg", 40)


def test_an_entity_page_shows_claims_links_mentions_and_the_graph(
    qtbot: QtBot,
    qt_loop: asyncio.AbstractEventLoop,
    pane_context: PaneContext,
    navigator: RecordingNavigator,
) -> None:
    seeded = seed(pane_context.service)
    billing, postgres, api = (seeded.entity(n).id for n in ("billing", "Postgres", "api"))
    pane = open_pane(qtbot, pane_context, qt_loop)
    settle(qt_loop, pane_context, until=lambda: pane.detail is not None)
    assert pane.stack.currentWidget() is pane.content
    assert pane.count_label.text() == "3 entities"
    assert pane.listed[0] == billing  # most mentioned first
    assert pane.heading.text() == "billing"
    assert pane.meta.text() == "system · active · 1 mention"
    aspect = pane.claims.topLevelItem(0)
    assert aspect.text(0) == "storage" and aspect.childCount() == 2
    rows = [(aspect.child(i).text(0), aspect.child(i).text(1)) for i in range(2)]
    assert rows == [("database = Postgres 16", "active"), ("database = Postgres 14", "superseded")]
    assert aspect.child(0).text(2) == "v2" and aspect.child(1).font(0).strikeOut()
    links = [tuple(pane.links.topLevelItem(i).text(c) for c in range(3)) for i in range(2)]
    assert links == [("→", "depends_on", "Postgres"), ("←", "calls", "api")]
    assert set(pane.graph.node_items) == {billing, postgres, api}
    assert pane.tabs.tabText(1) == "Mentions (1)"
    assert "alice moved billing" in pane.mentions.itemWidget(pane.mentions.item(0)).excerpt.text()
    pane.open_mention(0)
    assert navigator.opened == seeded.memory_ids["billing"]
    pane.graph.click_node(postgres)  # a neighbour opens its own page
    settle(qt_loop, pane_context, until=lambda: pane.heading.text() == "Postgres")
    assert pane.list.currentRow() == pane.listed.index(postgres)
    pane.graph.click_node(postgres)  # the focal node is not a link to itself
    pane._open_link(pane.links.topLevelItem(0))  # the incoming link leads back
    settle(qt_loop, pane_context, until=lambda: pane.heading.text() == "billing")


def test_search_type_and_status_filters_narrow_the_list(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    seeded = seed(pane_context.service)
    pane = open_pane(qtbot, pane_context, qt_loop)
    labels = [pane.type_filter.itemText(i) for i in range(pane.type_filter.count())]
    assert labels == ["All types", "service (1)", "system (1)", "tool (1)"]
    pane.type_filter.setCurrentIndex(pane.type_filter.findData("tool"))
    settle(qt_loop, pane_context, until=lambda: pane.listed == [seeded.entity("Postgres").id])
    assert pane.count_label.text() == "1 matching"
    pane.type_filter.setCurrentIndex(0)
    pane.search.setText("post")
    settle(qt_loop, pane_context, until=lambda: pane.listed == [seeded.entity("Postgres").id])
    pane.search.setText("zzz")
    settle(qt_loop, pane_context, until=lambda: pane.listed == [])
    assert pane.no_match.isVisibleTo(pane) and pane.stack.currentWidget() is pane.content
    pane.search.clear()
    pane.status_filter.setCurrentIndex(pane.status_filter.findData("archived"))
    settle(qt_loop, pane_context, until=lambda: pane.count_label.text() == "0 matching")


def test_a_graph_write_refreshes_the_list(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    pane = open_pane(qtbot, pane_context, qt_loop)
    assert pane.stack.currentWidget() is pane.empty
    pane_context.service.knowledge.create_entity(
        "default", "ledger", entity_type="service", actor=INSPECTOR_ACTOR
    )
    settle(qt_loop, pane_context, until=lambda: pane.heading.text() == "ledger")
    assert pane.count_label.text() == "1 entity"


def test_empty_state_says_how_entities_come_to_exist(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    pane = open_pane(qtbot, pane_context, qt_loop)
    assert pane.stack.currentWidget() is pane.empty
    assert pane.empty.hint_label.text() == EMPTY_HINT
    assert "structured" in EMPTY_HINT and "Dreaming" in EMPTY_HINT


def test_one_agent_never_sees_another_agents_entities(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    seed(pane_context.service)
    other = pane_context.service.knowledge.list_entities("other").items
    assert {e.name for e in other} == {"billing", "Nightingale"}
    pane = open_pane(qtbot, pane_context, qt_loop)
    assert pane.count_label.text() == "3 entities"
    assert not {e.id for e in other} & set(pane.listed)
    pane.search.setText("Nightingale")
    settle(qt_loop, pane_context, until=lambda: pane.listed == [])
    pane.reveal(entity_id=other[0].id)  # another agent's id, asked for directly
    settle(qt_loop, pane_context, until=lambda: bool(pane.banner.text))
    assert "could not be read" in pane.banner.text and pane.detail is None


def test_a_failed_read_is_shown_plainly(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    pane = open_pane(qtbot, pane_context, qt_loop, BrokenKnowledge())
    assert "The entities could not be read: database is locked" in pane.banner.text


def test_a_recall_hit_found_by_traversal_links_to_its_focal_entity(
    qtbot: QtBot,
    qt_loop: asyncio.AbstractEventLoop,
    pane_context: PaneContext,
    navigator: RecordingNavigator,
) -> None:
    seeded = seed(pane_context.service)
    recall = RecallPane(pane_context)
    qtbot.addWidget(recall)
    recall.show()
    recall.query_box.setText("what does billing depend on?")
    recall.run_query()
    settle(qt_loop, pane_context)
    assert recall.model.rowCount() > 0, (recall.summary.text(), recall.banner.text)
    hits = recall.model.hits()
    traversed = [n for n, hit in enumerate(hits) if "traversal" in hit.channels]
    assert traversed, [dict(h.channels) for h in hits]
    recall.results.setCurrentIndex(recall.model.index(traversed[0]))
    label = recall.explanation.path_label
    assert label.isVisibleTo(recall) and "Found through the graph" in label.text()
    assert "billing" in label.text()
    label.linkActivated.emit(recall.explanation.focal_entity or "")
    assert navigator.panes[-1] == ("entities", {"entity_id": seeded.entity("billing").id})
    untraversed = [n for n, hit in enumerate(hits) if "traversal" not in hit.channels]
    if untraversed:
        recall.results.setCurrentIndex(recall.model.index(untraversed[0]))
        assert not label.isVisibleTo(recall)
