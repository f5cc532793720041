"""UMAP's own signals turned into one rising progress bar: imports, its log lines, its epochs.

A reduction spends its time in three places a bar can see honestly: loading (the imports
that compile numba code, tens of seconds on a first run; each finished import is a step),
the neighbour graph (umap's verbose lines "Finding Nearest Neighbors", "Finished Nearest
Neighbor Search", "Construct embedding" mark its start and end) and the layout epochs (tqdm's
`n/total`). Nothing here ticks on a timer: the bar moves only when one of those happens.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Sequence

Progress = Callable[[str, float], None]

# What `import umap` loads, heaviest parts first named, in the order umap imports them.
LOAD_STEPS = ("numba", "scipy.sparse.csgraph", "sklearn.neighbors", "pynndescent", "umap")
# Where each phase starts on the bar (fractions of the whole reduction).
LOADING, NEIGHBOURS, GRAPH, LAYOUT, WRITING = 0.0, 0.30, 0.55, 0.62, 0.97
# umap's verbose lines (umap_.py) -> (phase, where the bar stands once it is printed).
MARKERS = (
    ("Construct fuzzy simplicial set", "neighbours", NEIGHBOURS),
    ("Finding Nearest Neighbors", "neighbours", NEIGHBOURS),
    ("Finished Nearest Neighbor Search", "graph", GRAPH),
    ("Construct embedding", "layout", LAYOUT),
    ("Finished embedding", "writing", WRITING),
)
_COUNTS = re.compile(r"(\d+)/(\d+)")


class Bar:
    """Forwards `(phase, fraction)` to `progress`, never letting the fraction go back."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress
        self.fraction = 0.0

    def report(self, phase: str, fraction: float) -> None:
        self.fraction = max(self.fraction, min(fraction, 1.0))
        self._progress(phase, self.fraction)


def load(bar: Bar, steps: Sequence[str] = LOAD_STEPS) -> None:
    """Import `steps` one by one, each finished import a step of the loading phase."""
    bar.report("loading", LOADING)
    for done, module in enumerate(steps, start=1):
        importlib.import_module(module)
        bar.report("loading", LOADING + (NEIGHBOURS - LOADING) * done / len(steps))


class Messages:
    """A stdout for umap's verbose prints: its phase lines move the bar, the rest is dropped."""

    def __init__(self, bar: Bar) -> None:
        self._bar = bar

    def write(self, text: str) -> int:
        for marker, phase, fraction in MARKERS:
            if marker in text:
                self._bar.report(phase, fraction)
        return len(text)

    def flush(self) -> None:
        return None


class Epochs:
    """A file for tqdm: its `n/total` lines move the bar through the layout phase."""

    def __init__(self, bar: Bar) -> None:
        self._bar = bar

    def write(self, text: str) -> int:
        match = _COUNTS.search(text)
        if match is not None and int(match.group(2)) > 0:
            done = int(match.group(1)) / int(match.group(2))
            self._bar.report("layout", LAYOUT + (WRITING - LAYOUT) * done)
        return len(text)

    def flush(self) -> None:
        return None
