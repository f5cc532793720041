"""The import's fault points for the crash tests: `SIGNET_IMPORT_FAULT=<step>[:<n>]`.

Each step of an import calls `faults.hit("<step>")` (`storage/faults.py` is the mechanism,
shared with the other seams). `from_env()` reads the variable through `FaultPoints.from_variable`.
Steps are listed in `STEPS`; a test iterates over them.
"""

from __future__ import annotations

from signet_desktop.storage.faults import NO_FAULTS, FaultPoints

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


def from_env() -> FaultPoints:
    """The import fault point the environment names, if any (a hit kills the process)."""
    return FaultPoints.from_variable(ENV)
