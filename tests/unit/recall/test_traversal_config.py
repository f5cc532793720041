"""memory.pipelineV2.traversal / graph / dampening: parsed from agent.yaml, bad values refused."""

from __future__ import annotations

import pytest

from signet_desktop.config.loader import ConfigError, parse_config_text
from signet_desktop.config.pipeline import PipelineV2Config, TraversalConfig
from signet_desktop.recall.graph_recall import (
    dampening_stages,
    graph_boost_stages,
    graph_channels,
    traversal_bounds,
)

YAML = """
memory:
  pipelineV2:
    traversal: {{{traversal}}}
    graph: {{boostWeight: 0.25}}
    dampening: {{gravity: true, hub: false, resolution: true}}
"""


def parsed(traversal: str = "") -> PipelineV2Config:
    return parse_config_text(YAML.format(traversal=traversal)).config.memory.pipeline_v2


def test_traversal_bounds_flat_share_and_switches_are_read() -> None:
    config = parsed("maxBranching: 2, timeoutMs: 120, flatShare: 0.5")
    assert config.traversal.flat_reserve_share == 0.5
    bounds = traversal_bounds(config.traversal)
    assert (bounds.max_branching, bounds.timeout_ms, bounds.max_traversal_paths) == (2, 120, 50)
    assert [s.name for s in dampening_stages(config.dampening)] == [
        "dampening.gravity",
        "dampening.resolution",
    ]
    assert parsed("flatReserveShare: 0.3").traversal.flat_reserve_share == 0.3  # older name


def test_primary_traversal_adds_the_channel_and_non_primary_the_boost() -> None:
    primary = parsed()
    assert [c.name for c in graph_channels(primary.traversal, None, None)] == ["traversal"]
    assert graph_boost_stages(primary.graph, primary.traversal) == ()
    legacy = parsed("primary: false")
    assert graph_channels(legacy.traversal, None, None) == ()
    [boost] = graph_boost_stages(legacy.graph, legacy.traversal)
    assert boost.name == "graph.boost" and boost.weight == 0.25
    off = parsed("enabled: false")
    assert graph_channels(off.traversal, None, None) == ()
    assert graph_boost_stages(off.graph, off.traversal) == ()  # the flat hybrid exactly


@pytest.mark.parametrize(
    "bad",
    ["flatShare: 1.5", "maxBranching: 0", "minDependencyStrength: -0.1", "timeoutMs: 10"],
)
def test_bad_traversal_values_are_clear_config_errors(bad: str) -> None:
    with pytest.raises(ConfigError, match="traversal"):
        parsed(bad)


def test_bad_dampening_switch_is_refused() -> None:
    text = "memory:\n  pipelineV2:\n    dampening: {hub: sometimes}\n"
    with pytest.raises(ConfigError, match="dampening"):
        parse_config_text(text)


def test_defaults() -> None:
    config = TraversalConfig()
    assert (config.enabled, config.primary, config.flat_reserve_share) == (True, True, 0.4)
