"""The bounded graph walk over an in-memory reader: paths, cycles, bounds, the time budget."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from signet_desktop.domain.traversal import GraphAspect, GraphClaim, GraphEdge, GraphEntity
from signet_desktop.graph.traversal import TraversalBounds, walk


@dataclass
class FakeGraph:
    """A reader over dicts; counts calls so a test can see what the walk read."""

    aspects_by: dict[str, list[GraphAspect]] = field(default_factory=dict)
    claims_by: dict[str, list[GraphClaim]] = field(default_factory=dict)
    edges_by: dict[str, list[GraphEdge]] = field(default_factory=dict)
    mentions_by: dict[str, list[str]] = field(default_factory=dict)
    entities: dict[str, GraphEntity] = field(default_factory=dict)
    edge_reads: int = 0

    def node(self, name: str) -> GraphEntity:
        return self.entities.setdefault(name, GraphEntity(name, name.title(), 1))

    def link(self, a: str, b: str, strength: float = 0.8) -> None:
        # Edges are read from both ends, like the SQL reader does.
        edge_id = f"{a}->{b}"
        self.edges_by.setdefault(a, []).append(
            GraphEdge(edge_id, a, self.node(b), "uses", strength, 1.0, True)
        )
        self.edges_by.setdefault(b, []).append(
            GraphEdge(edge_id, b, self.node(a), "uses", strength, 1.0, False)
        )

    def aspects_with_claims(
        self, entity_ids: Sequence[str], per_entity: int, per_aspect: int, min_confidence: float
    ) -> Sequence[tuple[GraphAspect, Sequence[GraphClaim]]]:
        out: list[tuple[GraphAspect, Sequence[GraphClaim]]] = []
        for entity_id in entity_ids:
            for aspect in self.aspects_by.get(entity_id, [])[:per_entity]:
                kept = [
                    c for c in self.claims_by.get(aspect.id, []) if c.confidence >= min_confidence
                ]
                out.append((aspect, kept[:per_aspect]))
        return out

    def edges(
        self, entity_ids: Sequence[str], min_strength: float, min_confidence: float, per_entity: int
    ) -> Sequence[GraphEdge]:
        self.edge_reads += 1
        out: list[GraphEdge] = []
        for entity_id in entity_ids:
            found = [e for e in self.edges_by.get(entity_id, []) if e.strength >= min_strength]
            out += sorted(found, key=lambda e: -e.strength)[:per_entity]
        return out

    def mentioned_in(
        self, entity_ids: Sequence[str], per_entity: int
    ) -> Mapping[str, Sequence[str]]:
        return {e: self.mentions_by.get(e, [])[:per_entity] for e in entity_ids}


def test_claims_and_mentions_are_reached_with_their_paths() -> None:
    graph = FakeGraph()
    billing = graph.node("billing")
    graph.aspects_by["billing"] = [GraphAspect("asp", "billing", "storage", 0.9)]
    graph.claims_by["asp"] = [
        GraphClaim("c1", "asp", "m-claim", "attribute", "runs on Postgres", 0.9),
        GraphClaim("c2", "asp", None, "attribute", "no evidence memory", 1.0),
        GraphClaim("c3", "asp", "m-weak", "attribute", "too unsure", 0.2),
    ]
    graph.mentions_by["billing"] = ["m-mention"]
    found = walk(graph, [billing], TraversalBounds())
    assert set(found.reached) == {"m-claim", "m-mention"}
    claim_path = found.reached["m-claim"].path
    assert [s.kind for s in claim_path] == ["entity", "aspect", "claim"]
    assert claim_path[0].id == "billing" and found.reached["m-claim"].weight == 0.9
    assert [s.kind for s in found.reached["m-mention"].path] == ["entity", "mention"]
    assert not found.partial


def test_dependency_hops_lead_to_other_entities_memories() -> None:
    graph = FakeGraph()
    graph.link("billing", "postgres", strength=0.5)
    graph.link("postgres", "replica", strength=0.8)
    graph.link("billing", "weak", strength=0.1)  # below minDependencyStrength 0.3
    graph.mentions_by = {"replica": ["m-replica"], "weak": ["m-weak"]}
    found = walk(graph, [graph.node("billing")], TraversalBounds())
    assert set(found.reached) == {"m-replica"}
    reached = found.reached["m-replica"]
    assert [s.id for s in reached.path if s.kind == "entity"] == ["billing", "postgres", "replica"]
    assert reached.hops == 2 and reached.weight == 0.5 * 0.8


def test_cyclic_dependencies_terminate_visiting_each_entity_once() -> None:
    graph = FakeGraph()
    graph.link("a", "b")
    graph.link("b", "c")
    graph.link("c", "a")  # a -> b -> c -> a
    graph.mentions_by = {"a": ["m-a"], "b": ["m-b"], "c": ["m-c"]}
    found = walk(graph, [graph.node("a")], TraversalBounds(max_dependency_hops=200))
    assert set(found.reached) == {"m-a", "m-b", "m-c"}
    assert found.entities == 3 and graph.edge_reads <= 3
    assert not found.partial


def test_max_dependency_hops_stops_the_walk() -> None:
    graph = FakeGraph()
    for i in range(5):
        graph.link(f"n{i}", f"n{i + 1}")
        graph.mentions_by[f"n{i + 1}"] = [f"m{i + 1}"]
    found = walk(graph, [graph.node("n0")], TraversalBounds(max_dependency_hops=2))
    assert set(found.reached) == {"m1", "m2"}


def test_branching_and_path_bounds_mark_the_walk_partial() -> None:
    graph = FakeGraph()
    for i in range(6):
        graph.link("hub", f"leaf{i}", strength=0.9 - i / 100)
        graph.mentions_by[f"leaf{i}"] = [f"m{i}"]
    found = walk(graph, [graph.node("hub")], TraversalBounds(max_branching=4))
    assert set(found.reached) == {"m0", "m1", "m2", "m3"}  # the four strongest edges
    assert found.partial and "maxBranching (4) reached" in found.reasons

    graph.mentions_by["hub"] = [f"hub-m{i}" for i in range(10_000)]
    capped = walk(graph, [graph.node("hub")], TraversalBounds(max_traversal_paths=50))
    assert len(capped.reached) == 50
    assert "maxTraversalPaths (50) reached" in capped.reasons


def test_a_hubs_mentions_are_not_walked_but_its_claims_are() -> None:
    graph = FakeGraph()
    hub = GraphEntity("hub", "Hub", 10_000)  # its mention degree, as entities.mentions holds it
    graph.mentions_by = {"hub": [f"h{i}" for i in range(100)]}
    graph.aspects_by["hub"] = [GraphAspect("asp", "hub", "facts", 0.5)]
    graph.claims_by["asp"] = [GraphClaim("c", "asp", "m-claim", "attribute", "a fact", 1.0)]
    found = walk(graph, [hub], TraversalBounds())
    assert set(found.reached) == {"m-claim"}
    assert found.reasons == ["mentions of Hub not walked (10000 > maxTraversalPaths 50)"]


def test_mentions_share_the_path_budget_between_focal_entities() -> None:
    graph = FakeGraph()
    graph.mentions_by = {"hub": [f"h{i}" for i in range(1000)], "small": ["s1", "s2"]}
    found = walk(graph, [graph.node("hub"), graph.node("small")], TraversalBounds())
    assert {"s1", "s2"} <= set(found.reached)  # the hub did not take every path


def test_a_walk_past_its_time_budget_returns_what_it_has_marked_partial() -> None:
    graph = FakeGraph()
    graph.link("a", "b")
    graph.mentions_by = {"a": ["m-a"], "b": ["m-b"]}
    ticks = iter([0.0, 0.0, 0.0, 0.0, 10.0, 10.0, 10.0])  # the budget runs out mid-walk
    found = walk(
        graph, [graph.node("a")], TraversalBounds(timeout_ms=500), clock=lambda: next(ticks)
    )
    assert found.partial and found.reasons == ["time budget exceeded"]
    assert "m-b" not in found.reached
