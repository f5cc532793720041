"""Hand freed heap pages back to the OS (glibc `malloc_trim`; a no-op elsewhere).

Loading the model frees ~200 MB of temporaries, and start-up (the HTTP app, the first worker
passes, the window's first reads) frees ~40 MB more, in pieces glibc otherwise keeps mapped:
an idle daemon would look, and be, that much larger.
"""

from __future__ import annotations

import ctypes
import ctypes.util


def release_free_heap() -> None:
    """`malloc_trim(0)`: every arena's free pages go back to the OS."""
    name = ctypes.util.find_library("c")
    if name is None:
        return
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return
    trim(0)
