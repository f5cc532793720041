"""The process heap on glibc: one malloc arena, and freed pages handed back (no-ops elsewhere).

Loading the model frees ~200 MB of temporaries, and start-up (the HTTP app, the first worker
passes, the window's first reads) frees ~40 MB more, in pieces glibc otherwise keeps mapped:
an idle daemon would look, and be, that much larger.

glibc also gives each new thread its own arena (up to 8 per core) and keeps each arena's freed
pages: after 3,000 turns remembered by 8 clients the daemon held ~650 MB of anonymous memory,
~450 MB of it free heap spread over the request, vector and embedder threads' arenas (a
trim gives back only a third of it). So the daemon keeps `DEFAULT_ARENAS` (one): 3,000 turns
then leave ~180 MB after a trim, and a 100k workspace ~386 MB (two arenas: ~200 and ~417).
The GIL already serialises most allocations; remembers/s read 0-10% below glibc's default
from run to run, within this machine's noise (docs/BENCHMARKS.md, "Memory after an
ingest"). A burst still leaves ~80 MB of freed heap resident; `HeapKeeper` trims it once the
process has grown and malloc holds enough free memory to be worth it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import os
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

M_ARENA_MAX = -8  # glibc <malloc.h>
ARENA_ENV = "MALLOC_ARENA_MAX"
DEFAULT_ARENAS = 1
TRIM_AFTER_BYTES = 32 * 1024 * 1024  # growth, and free heap, that make a trim worth it


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd",
            "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost",
        )
    ]  # fmt: skip


@functools.cache
def _libc() -> ctypes.CDLL | None:
    """The C library, looked up once (`find_library` runs `ldconfig` in a subprocess)."""
    library = ctypes.util.find_library("c")
    if library is None:
        return None
    try:
        return ctypes.CDLL(library)
    except OSError:
        return None


def _libc_function(name: str) -> Callable[..., int] | None:
    libc = _libc()
    if libc is None:
        return None
    try:
        function: Callable[..., int] = getattr(libc, name)
    except AttributeError:  # not glibc
        return None
    return function


def release_free_heap() -> None:
    """`malloc_trim(0)`: every arena's free pages go back to the OS."""
    trim = _libc_function("malloc_trim")
    if trim is not None:
        trim(0)


def limit_malloc_arenas(count: int = DEFAULT_ARENAS) -> bool:
    """Cap glibc's malloc arenas at `count` for threads started from now on.

    Call it before any thread starts. A `MALLOC_ARENA_MAX` set in the environment wins (glibc
    read it at start-up). True when the cap was set.
    """
    if os.environ.get(ARENA_ENV):
        return False
    mallopt = _libc_function("mallopt")
    if mallopt is None:
        return False
    return bool(mallopt(M_ARENA_MAX, count))


def free_heap_bytes() -> int | None:
    """Bytes malloc holds free in its arenas (mallinfo2's `fordblks`); None where unknown."""
    mallinfo2 = _libc_function("mallinfo2")  # glibc >= 2.33
    if mallinfo2 is None:
        return None
    mallinfo2.restype = _MallInfo2  # type: ignore[attr-defined]
    info: _MallInfo2 = mallinfo2()  # type: ignore[assignment]
    return int(info.fordblks)


def anonymous_resident_bytes() -> int | None:
    """The process's resident anonymous memory (RssAnon), None where /proc does not say."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


class HeapKeeper:
    """Trims the heap when, since the last trim, the process grew by `threshold` of anonymous
    memory and malloc holds at least that much free (a grown cache is left alone).

    `check()` is cheap (one /proc read, one mallinfo2); run it off the event loop now and then.
    The three functions are glibc's and /proc's; tests pass their own.
    """

    def __init__(
        self,
        threshold: int = TRIM_AFTER_BYTES,
        *,
        resident: Callable[[], int | None] = anonymous_resident_bytes,
        free: Callable[[], int | None] = free_heap_bytes,
        trim: Callable[[], None] = release_free_heap,
    ) -> None:
        self._threshold = threshold
        self._resident = resident
        self._free = free
        self._trim = trim
        self._lock = threading.Lock()
        self._baseline = resident()
        self.trims = 0

    def check(self) -> bool:
        """Trim if worth it; True when it trimmed (a check already running: False)."""
        if not self._lock.acquire(blocking=False):
            return False
        try:
            return self._check()
        finally:
            self._lock.release()

    def _check(self) -> bool:
        resident = self._resident()
        if resident is None or self._baseline is None:
            return False
        if resident - self._baseline < self._threshold:
            self._baseline = min(self._baseline, resident)
            return False
        free = self._free()
        if free is not None and free < self._threshold:
            return False
        started = time.perf_counter()
        self._trim()
        self.trims += 1
        after = self._resident()
        self._baseline = resident if after is None else after
        log.debug(
            "heap trimmed: %.0f -> %.0f MiB anonymous in %.1f ms",
            resident / 2**20, self._baseline / 2**20, (time.perf_counter() - started) * 1000,
        )  # fmt: skip
        return True
