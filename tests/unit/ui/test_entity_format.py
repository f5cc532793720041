"""The Entities pane's words and layout, computed without Qt."""

from __future__ import annotations

import math

from signet_desktop.domain.knowledge import EntityPage, KnowledgeStats
from signet_desktop.domain.traversal import PathStep
from signet_desktop.ui import entity_format as fmt
from tests.unit.ui.entity_values import NOW, claim, detail, entity, link


def test_counts_say_how_many_and_when_paged() -> None:
    page = EntityPage((entity(),), total=1, limit=200, offset=0)
    assert fmt.count_text(page) == "1 entity"
    assert fmt.count_text(EntityPage((entity(),), 1204, 1, 0)) == "showing 1 of 1,204 entities"
    assert fmt.count_text(EntityPage((entity(),), 1, 200, 0), filtered=True) == "1 matching"


def test_type_choices_carry_counts_most_common_first() -> None:
    stats = KnowledgeStats({"active": 5}, {"person": 1, "system": 4, "tool": 0}, 2,
                           {"active": 7, "superseded": 1}, 3, 12, 20)  # fmt: skip
    assert fmt.type_choices(stats) == [("All types", None), ("system (4)", "system"),
                                       ("person (1)", "person")]  # fmt: skip
    assert fmt.type_choices(None) == [("All types", None)]
    assert fmt.stats_text(stats) == "5 entities · 7 claims · 3 links · 12 mentions"


def test_entity_lines() -> None:
    assert fmt.entity_meta("system", 1, "active") == "system · 1 mention"
    assert fmt.entity_meta("tool", 4, "archived", True) == "tool · 4 mentions · archived · pinned"
    d = detail()
    assert fmt.detail_meta(d) == "system · active · 3 mentions · also billing-svc"
    assert fmt.provenance_text(d, NOW) == "created by claude-code · 2 days ago"


def test_claims_current_first_then_superseded_history() -> None:
    [block] = fmt.aspect_blocks(detail(), NOW)
    assert block.name == "storage" and block.summary == "1 current claim · 1 earlier"
    current, earlier = block.rows
    assert (current.text, current.status, current.version, current.history) == (
        "database = Postgres 16", "active", "v2", False)  # fmt: skip
    assert (earlier.text, earlier.status, earlier.version, earlier.history) == (
        "database = Postgres 14", "superseded", "v1", True)  # fmt: skip
    assert current.meta == "confidence 0.90 · 2 days ago · from memory m-000000… · 1 quote"
    plain = fmt.claim_row(claim("c9", "Runs nightly", claim_key=None, evidence=()), NOW)
    assert (plain.text, plain.version) == ("Runs nightly", "")


def test_links_both_directions_strongest_first() -> None:
    rows = fmt.dependency_rows(detail())
    assert [(r.direction, r.other_id, r.text) for r in rows] == [
        ("out", "pg", "depends_on → PG"),
        ("out", "redis", "depends_on → REDIS"),
        ("in", "api", "API → calls"),
    ]
    assert (rows[0].meta, rows[0].link_type) == ("confidence 0.80", "depends_on")


def test_mentions_carry_provenance() -> None:
    [row] = [fmt.mention_row(m, NOW) for m in detail().mentions]
    assert row.excerpt == "billing runs on Postgres 16"
    assert row.provenance == "fact · alice · via hook · 2 days ago · as “billing”"
    assert fmt.mentions_heading(detail()) == "Mentioned in 3 memories · newest 1 shown"
    assert fmt.mentions_heading(detail(mention_total=1)) == "Mentioned in 1 memory"


def test_neighbourhood_puts_the_entity_in_the_middle_and_neighbours_on_a_circle() -> None:
    graph = fmt.neighbourhood(detail(), radius=100)
    focal, *around = graph.nodes
    assert (focal.entity_id, focal.focal, focal.x, focal.y) == ("e1", True, 0.0, 0.0)
    assert [n.entity_id for n in around] == ["pg", "api", "redis"]  # strongest first
    assert all(math.isclose(math.hypot(n.x, n.y), 100) for n in around)
    assert math.isclose(around[0].x, 0, abs_tol=1e-9) and around[0].y < 0  # from the top
    assert {(e.source, e.target) for e in graph.edges} == {("e1", "pg"), ("e1", "redis"),
                                                           ("api", "e1")}  # fmt: skip
    assert graph.hidden == 0


def test_neighbourhood_is_bounded_and_ignores_self_loops_and_repeats() -> None:
    many = tuple(link(f"d{n}", "e1", f"n{n:02d}", n / 40) for n in range(20))
    loops = (link("self", "e1", "e1", 1.0), link("again", "n19", "e1", 0.1))
    graph = fmt.neighbourhood(detail(outgoing=many, incoming=loops), most=5)
    assert [n.entity_id for n in graph.nodes[1:]] == ["n19", "n18", "n17", "n16", "n15"]
    assert graph.hidden == 15
    assert all(e.source != e.target for e in graph.edges)
    assert len([e for e in graph.edges if "n19" in (e.source, e.target)]) == 2
    lonely = fmt.neighbourhood(detail(outgoing=(), incoming=()))
    assert len(lonely.nodes) == 1 and not lonely.edges


def test_edge_width_and_labels() -> None:
    assert fmt.edge_width(0) == 1.0 and fmt.edge_width(1) == 3.5 and fmt.edge_width(9) == 3.5
    assert fmt.elide("a" * 30, 10) == "a" * 9 + "…"
    assert fmt.elide("short") == "short"


def test_traversal_focal_from_a_path_of_steps() -> None:
    path = (
        PathStep("entity", "e1", "billing"),
        PathStep("dependency", "d1", "depends_on"),
        PathStep("entity", "e2", "Postgres"),
        PathStep("mention", "m1", "Postgres"),
    )
    focal, names = fmt.traversal_focal({"path": path})
    assert focal == "e1"
    assert fmt.path_text(names) == "billing → (depends_on) → Postgres → mentions"
    assert fmt.traversal_focal({"score": 0.3}) == (None, ())
