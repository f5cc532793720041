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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QWidget

from signet_desktop.domain.memory import DEFAULT_AGENT_ID
from signet_desktop.service.facade import SignetService
from signet_desktop.ui.event_bridge import EventBridge
from signet_desktop.ui.settings import ShellSettings
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
    settings: ShellSettings | None = None  # what the window remembers (theme); None in tests


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
    shortcut: str | None = None  # e.g. "Ctrl+2"; None: the first free Ctrl+digit


# Ctrl+1..9 then Ctrl+0: what a pane without its own shortcut gets, in rail order.
DIGIT_SHORTCUTS = tuple(f"Ctrl+{digit}" for digit in (*range(1, 10), 0))


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


def pane_shortcuts(specs: Sequence[PaneSpec]) -> dict[str, str]:
    """Each pane's key sequence, none shared: a pane's own `shortcut` first (the earlier pane
    keeps a clashing one), then the first free Ctrl+digit in rail order; none once those run
    out. A pane that loses its own shortcut is logged (the shell test fails on it)."""
    taken: dict[str, str] = {}  # normalised sequence -> pane key
    for spec in specs:
        if spec.shortcut:
            sequence = _normalised(spec.shortcut)
            if sequence in taken:
                log.warning("pane %s: %s is %s's already", spec.key, sequence, taken[sequence])
            else:
                taken[sequence] = spec.key
    by_key = {key: sequence for sequence, key in taken.items()}
    free = [s for s in map(_normalised, DIGIT_SHORTCUTS) if s not in taken]
    for spec in specs:
        if spec.key not in by_key and free:
            by_key[spec.key] = free.pop(0)
    return {spec.key: by_key[spec.key] for spec in specs if spec.key in by_key}


def _normalised(sequence: str) -> str:
    return QKeySequence(sequence).toString(QKeySequence.SequenceFormat.PortableText)


def sorted_specs(specs: Iterable[PaneSpec]) -> list[PaneSpec]:
    """Rail order; duplicate keys are a programming error."""
    ordered = sorted(specs, key=lambda spec: (spec.order, spec.key))
    keys = [spec.key for spec in ordered]
    if len(keys) != len(set(keys)):
        raise ValueError(f"duplicate pane keys: {keys}")
    return ordered
