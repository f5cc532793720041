"""Graph-aware recall's parts as configuration asks for them (used by the composition root).

`memory.pipelineV2.traversal.enabled` and `.primary` pick the path: traversal on and primary
adds the `traversal` channel; `primary: false` is Signet's non-primary mode, the flat hybrid
with the legacy `graph.boost` stage (when `graph.enabled`); traversal off with `primary` left
on is the flat hybrid exactly. The dampening
stages follow `memory.pipelineV2.dampening.*`.
"""

from __future__ import annotations

from signet_desktop.config.pipeline import (
    DampeningConfig,
    GraphConfig,
    TraversalConfig,
)
from signet_desktop.graph.traversal import TraversalBounds
from signet_desktop.recall.channels import RecallChannel
from signet_desktop.recall.dampening import GravityStage, HubStage, ResolutionStage
from signet_desktop.recall.dampening import dampening_stages as _dampening
from signet_desktop.recall.graph_boost import GraphBoostStage
from signet_desktop.recall.query_vectors import RecentQueryVectors
from signet_desktop.recall.traversal import TraversalChannel
from signet_desktop.recall.vector import SemanticChannel


def traversal_bounds(config: TraversalConfig) -> TraversalBounds:
    """The walk's bounds from `memory.pipelineV2.traversal`."""
    return TraversalBounds(
        max_aspects_per_entity=config.max_aspects_per_entity,
        max_attributes_per_aspect=config.max_attributes_per_aspect,
        max_dependency_hops=config.max_dependency_hops,
        min_dependency_strength=config.min_dependency_strength,
        max_branching=config.max_branching,
        max_traversal_paths=config.max_traversal_paths,
        min_confidence=config.min_confidence,
        timeout_ms=config.timeout_ms,
    )


def graph_channels(
    config: TraversalConfig,
    semantic: SemanticChannel | None,
    vectors: RecentQueryVectors | None,
) -> tuple[RecallChannel, ...]:
    """The traversal channel when traversal is enabled and primary, else none."""
    if not (config.enabled and config.primary):
        return ()
    return (TraversalChannel(traversal_bounds(config), semantic=semantic, vectors=vectors),)


def graph_boost_stages(
    graph: GraphConfig, traversal: TraversalConfig
) -> tuple[GraphBoostStage, ...]:
    """The legacy boost, only in non-primary mode (`traversal.primary: false`)."""
    if not graph.enabled or traversal.primary:
        return ()
    return (GraphBoostStage(graph.boost_weight),)


def dampening_stages(
    config: DampeningConfig,
) -> tuple[GravityStage | HubStage | ResolutionStage, ...]:
    """The dampening stages `memory.pipelineV2.dampening` switches on."""
    return _dampening(gravity=config.gravity, hub=config.hub, resolution=config.resolution)
