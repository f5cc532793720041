"""The import's fault points for the crash tests: `SIGNET_IMPORT_FAULT=<step>[:<n>]`.

Each step of an import calls `faults.hit("<step>")` (`storage/faults.py` is the mechanism,
shared with the other seams). The variable is read once, when `from_env()` is first called.
Steps are listed in `STEPS`; a test iterates over them.
"""

from __future__ import annotations

import os
from functools import lru_cache

from signet_desktop.storage.faults import NO_FAULTS, FaultPoints, parse_target

__all__ = ["ENV", "NO_FAULTS", "STEPS", "FaultPoints", "from_env"]

ENV = "SIGNET_IMPORT_FAULT"
# In the order an import passes them (service/imports/harness.py documents each).
STEPS = (
    "run.started",
    "file.inventoried",
    "file.staged",
    "file.recorded",
    "record.pending",
    "canonical.torn",
    "canonical.appended",
    "record.finalised",
    "file.imported",
    "run.finishing",
)


@lru_cache(maxsize=1)
def _configured() -> tuple[str, int] | None:
    return parse_target(os.environ.get(ENV, ""))


def from_env() -> FaultPoints:
    """The import fault point the environment names, if any (a hit kills the process)."""
    return FaultPoints(_configured())
