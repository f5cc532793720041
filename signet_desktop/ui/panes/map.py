"""The Map pane (Ctrl+9): a scatter of the agent's embeddings (the widget: `ui/map_pane.py`).

Registered here without importing the widget: it needs numpy and pyqtgraph (~0.4 s of
imports), which load when the pane is first shown, not when the panes are discovered.
"""

from __future__ import annotations

from signet_desktop.ui.pane import PaneContext, PaneSpec, PaneWidget


def build_map_pane(context: PaneContext) -> PaneWidget:
    """The Map pane's widget (imported on first use)."""
    from signet_desktop.ui.map_pane import MapPane

    return MapPane(context)


PANE = PaneSpec(
    key="map",
    title="Map",
    icon="map.svg",
    order=80,
    factory=build_map_pane,
    shortcut="Ctrl+9",
)
