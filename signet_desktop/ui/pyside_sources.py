"""PySide6's check of each imported module, without keeping every module's source in memory.

PySide6 (its `__feature__` import hook) asks of every module imported after it whether its
source names "PySide6", with `inspect.getsource`, which leaves the whole source in linecache
for the life of the process: ~23 MB for the ~700 modules the desktop app imports at start-up.
`install()` gives the hook the same answer from one read of the file, cached nowhere.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import PySide6.QtCore  # noqa: F401  (loads shiboken's support modules, the hook among them)

HOOK_MODULE = "shibokensupport.feature"
CHECK = "_mod_uses_pyside"


def names_pyside(module: ModuleType) -> bool:
    """True when the module's source file contains "PySide6" (what PySide6's check asks)."""
    path = getattr(module, "__file__", None)
    if not isinstance(path, str) or not path.endswith(".py"):
        return False  # no source: inspect.getsource raises there, and the check says False
    try:
        return b"PySide6" in Path(path).read_bytes()
    except OSError:
        return False


def install() -> bool:
    """Replace the hook's check (a private name: left alone if this PySide6 lacks it)."""
    hook = sys.modules.get(HOOK_MODULE)
    if hook is None or not callable(getattr(hook, CHECK, None)):
        return False
    setattr(hook, CHECK, names_pyside)
    return True
