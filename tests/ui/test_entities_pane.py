"""The Entities pane: list, search and filters, the entity page (claims with history, links
both ways, mentions with provenance, the neighbourhood graph), navigation, and scope."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from pytestqt.qtbot import QtBot

from signet_desktop.domain.errors import NotFound
from signet_desktop.domain.knowledge import EntityDetail, EntityPage, KnowledgeStats
from signet_desktop.ui.pane import PaneContext, discover_panes
from signet_desktop.ui.panes.entities import EMPTY_HINT, PANE, EntitiesPane
from tests.ui.conftest import RecordingNavigator
from tests.ui.memory_support import settle
from tests.unit.ui.entity_values import detail, entity, link

pytestmark = pytest.mark.gui


class FakeKnowledge:
    """`service.knowledge`'s reads over fixed details, per agent."""

    def __init__(self, details: dict[str, list[EntityDetail]]) -> None:
        self.details = details
        self.asked: list[tuple[str, str | None, str | None, str | None]] = []

    def list_entities(self, agent_id: str, *, query: str | None = None,
                      entity_type: str | None = None, status: str | None = "active",
                      limit: int = 50, offset: int = 0) -> EntityPage:  # fmt: skip
        self.asked.append((agent_id, query, entity_type, status))
        rows = [d.entity for d in self.details.get(agent_id, [])]
        rows = [e for e in rows if status is None or e.status == status]
        rows = [e for e in rows if entity_type is None or e.entity_type == entity_type]
        rows = [e for e in rows if not query or query.lower() in e.name.lower()]
        return EntityPage(tuple(rows[offset : offset + limit]), len(rows), limit, offset)

    def get_entity(self, agent_id: str, entity_id: str) -> EntityDetail:
        for found in self.details.get(agent_id, []):
            if found.entity.id == entity_id:
                return found
        raise NotFound(f"no entity {entity_id}")

    def stats(self, agent_id: str) -> KnowledgeStats:
        rows = [d.entity for d in self.details.get(agent_id, [])]
        types: dict[str, int] = {}
        for e in rows:
            types[e.entity_type] = types.get(e.entity_type, 0) + 1
        return KnowledgeStats({"active": len(rows)}, types, 0, {}, 0, 0, 0)


def graph() -> dict[str, list[EntityDetail]]:
    billing = detail()
    pg = detail(entity=entity("pg", "Postgres", entity_type="tool"), aliases=(), aspects=(),
                outgoing=(), incoming=(link("d1", "e1", "pg", 0.9),), mentions=(),
                mention_total=0)  # fmt: skip
    secret = detail(entity=entity("other", "Project Nightingale"), aliases=(), aspects=(),
                    outgoing=(), incoming=(), mentions=(), mention_total=0)  # fmt: skip
    secret = dataclasses.replace(
        secret, entity=dataclasses.replace(secret.entity, agent_id="other")
    )
    return {"default": [billing, pg], "other": [secret]}


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
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext,
    navigator: RecordingNavigator,
) -> None:  # fmt: skip
    pane = open_pane(qtbot, pane_context, qt_loop, FakeKnowledge(graph()))
    settle(qt_loop, pane_context, until=lambda: pane.detail is not None)
    assert pane.stack.currentWidget() is pane.content
    assert pane.count_label.text() == "2 entities"
    assert pane.heading.text() == "billing"
    assert "also billing-svc" in pane.meta.text()
    aspect = pane.claims.topLevelItem(0)
    assert aspect.text(0) == "storage" and aspect.childCount() == 2
    assert [aspect.child(i).text(1) for i in range(2)] == ["active", "superseded"]
    assert aspect.child(1).font(0).strikeOut()
    assert pane.links.topLevelItemCount() == 3
    assert pane.links.topLevelItem(2).text(0) == "←"
    assert set(pane.graph.node_items) == {"e1", "pg", "redis", "api"}
    assert pane.mentions.count() == 1
    pane.open_mention(0)
    assert navigator.opened == ["m1"]
    pane.graph.click_node("pg")  # a neighbour opens its own page
    settle(qt_loop, pane_context, until=lambda: pane.detail is not None
           and pane.detail.entity.id == "pg")  # fmt: skip
    assert pane.heading.text() == "Postgres"
    assert pane.list.currentRow() == 1
    pane.graph.click_node("pg")  # the focal node is not a link to itself
    pane._open_link(pane.links.topLevelItem(0))  # the incoming link leads back
    settle(qt_loop, pane_context, until=lambda: pane.detail is not None
           and pane.detail.entity.id == "e1")  # fmt: skip


def test_search_and_type_filter_narrow_the_list(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    fake = FakeKnowledge(graph())
    pane = open_pane(qtbot, pane_context, qt_loop, fake)
    assert [pane.type_filter.itemText(i) for i in range(pane.type_filter.count())] == [
        "All types", "system (1)", "tool (1)"]  # fmt: skip
    pane.type_filter.setCurrentIndex(pane.type_filter.findData("tool"))
    settle(qt_loop, pane_context, until=lambda: pane.listed == ["pg"])
    assert fake.asked[-1] == ("default", None, "tool", "active")
    pane.type_filter.setCurrentIndex(0)
    pane.search.setText("zzz")
    settle(qt_loop, pane_context, until=lambda: pane.listed == [])
    assert pane.no_match.isVisibleTo(pane) and pane.stack.currentWidget() is pane.content
    assert pane.count_label.text() == "0 matching"


def test_empty_state_says_how_entities_come_to_exist(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    pane = open_pane(qtbot, pane_context, qt_loop, FakeKnowledge({}))
    assert pane.stack.currentWidget() is pane.empty
    assert pane.empty.hint_label.text() == EMPTY_HINT
    assert "signet knowledge" in EMPTY_HINT and "Dreaming" in EMPTY_HINT


def test_one_agent_never_sees_another_agents_entities(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    fake = FakeKnowledge(graph())
    pane = open_pane(qtbot, pane_context, qt_loop, fake)
    assert "other" not in pane.listed
    pane.reveal(entity_id="other")  # another agent's id, asked for directly
    settle(qt_loop, pane_context, until=lambda: bool(pane.banner.text))
    assert "could not be read" in pane.banner.text
    assert pane.detail is None or pane.detail.entity.agent_id == "default"
    assert {asked[0] for asked in fake.asked} == {"default"}


def test_a_failed_read_is_shown_plainly(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    class Broken(FakeKnowledge):
        def stats(self, agent_id: str) -> KnowledgeStats:
            raise RuntimeError("database is locked")

    pane = open_pane(qtbot, pane_context, qt_loop, Broken(graph()))
    assert "The entities could not be read: database is locked" in pane.banner.text
