"""The contract between the inspector shell and its panes.

A pane is one module under `ui/panes/` that defines `PANE = PaneSpec(...)`; the shell imports
every module there (`discover_panes`) and lists them in the navigation rail by `order`. A pane
never imports the shell: it gets a `PaneContext` (the facade, the Qt event bridge, a task runner
for off-GUI-thread calls, and a `Navigator` to jump to other panes).
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtWidgets import QWidget

from signet_desktop.domain.memory import DEFAULT_AGENT_ID
from signet_desktop.service.facade import SignetService
from signet_desktop.ui.event_bridge import EventBridge
from signet_desktop.ui.tasks import TaskRunner

log = logging.getLogger(__name__)

PANES_PACKAGE = "signet_desktop.ui.panes"


class Navigator(Protocol):
    """What a pane may ask of the shell (the shell implements it; tests record calls)."""

    def show_pane(self, key: str, **reveal: Any) -> None:
        """Switch to pane `key` and call its `reveal(**reveal)`."""

    def open_memory(self, memory_id: str) -> None:
        """Show one memory's detail (content, provenance, history, actions)."""


@dataclass(frozen=True, slots=True)
class PaneContext:
    """Everything a pane needs; built once by the shell."""

    service: SignetService
    events: EventBridge
    tasks: TaskRunner
    navigator: Navigator
    workspace: Path
    url: str = ""
    agent_id: str = DEFAULT_AGENT_ID


class PaneWidget(QWidget):
    """Base class of every pane: the shell calls these hooks; override what you need."""

    def __init__(self, context: PaneContext) -> None:
        super().__init__()
        self.context = context

    def activated(self) -> None:
        """The pane became visible (load lazily here, not in `__init__`)."""

    def deactivated(self) -> None:
        """Another pane was chosen."""

    def reveal(self, **reveal: Any) -> None:
        """Show something specific (e.g. `memory_id=…`, `query=…`, `highlight=[ids]`)."""

    def shutdown(self) -> None:
        """The window is closing: disconnect signals, stop timers."""


@dataclass(frozen=True, slots=True)
class PaneSpec:
    """One entry of the navigation rail."""

    key: str  # stable id: QSettings, show_pane("memories")
    title: str  # the rail label
    icon: str  # SVG file name under resources/icons/
    order: int  # rail position (smaller first)
    factory: Callable[[PaneContext], PaneWidget]
    shortcut: str | None = None  # e.g. "Ctrl+2"


def discover_panes(package: str = PANES_PACKAGE) -> list[PaneSpec]:
    """Every `PANE` defined by a module of `package`, sorted by `order` then key."""
    module = importlib.import_module(package)
    specs: list[PaneSpec] = []
    for info in pkgutil.iter_modules(module.__path__):
        if info.name.startswith("_"):
            continue
        child = importlib.import_module(f"{package}.{info.name}")
        spec = getattr(child, "PANE", None)
        if isinstance(spec, PaneSpec):
            specs.append(spec)
    return sorted_specs(specs)


def sorted_specs(specs: Iterable[PaneSpec]) -> list[PaneSpec]:
    """Rail order; duplicate keys are a programming error."""
    ordered = sorted(specs, key=lambda spec: (spec.order, spec.key))
    keys = [spec.key for spec in ordered]
    if len(keys) != len(set(keys)):
        raise ValueError(f"duplicate pane keys: {keys}")
    return ordered
