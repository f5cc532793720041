"""Background threads yield the CPU to the work someone waits on (on Linux, per thread).

On two cores the vector batcher, the embedding tracker and document ingest can keep both
cores busy for minutes; at the same nice value the scheduler shares them evenly with the HTTP
handlers acknowledging remembers and recall's query embedding, so each waits for a core
behind the backlog (docs/BENCHMARKS.md, fifth session: acknowledgements and recall during a
backlog got faster; the GUI-stall bench showed no consistent change). A background thread calls
`lower_current_thread()` once when it starts: on Linux, where a thread is its own scheduling
entity, it raises that thread's nice value by `BACKGROUND_NICE_STEP` (at most 19), which gives
it ~10% of a contended core's share beside a nice-0 thread and all of an idle one. The
process and every other thread keep their priority. Elsewhere it does nothing: macOS's
`setpriority` would take the thread id for a process id.

A new thread inherits its creator's nice value, and `ThreadPoolExecutor` starts its threads
lazily, from whichever thread submits: a pool that serves requests and first received work
from a lowered thread would answer every later request at background priority. Such pools are
made with `request_pool`, which starts all their threads at once from the thread that makes
them (the service's builder).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

log = logging.getLogger(__name__)

BACKGROUND_NICE_STEP = 10
_MAX_NICE = 19


def lower_current_thread() -> bool:
    """Lower the calling thread's CPU priority (Linux); True if it is now lowered."""
    if not sys.platform.startswith("linux"):
        return False
    tid = threading.get_native_id()
    try:
        current = os.getpriority(os.PRIO_PROCESS, tid)
        target = min(_MAX_NICE, current + BACKGROUND_NICE_STEP)
        if target != current:
            os.setpriority(os.PRIO_PROCESS, tid, target)
    except OSError as exc:  # a sandbox may forbid it; the thread then runs as before
        log.debug("cannot lower the priority of thread %s: %s", tid, exc)
        return False
    return True


def request_pool(workers: int, thread_name_prefix: str) -> ThreadPoolExecutor:
    """A pool for work someone waits on, its threads started now by the calling thread (so
    they keep its priority, whoever submits later; see the module docstring)."""
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=thread_name_prefix)
    gate = threading.Barrier(workers, timeout=10)  # each task holds a thread until all exist
    for started in [pool.submit(gate.wait) for _ in range(workers)]:
        started.result()
    return pool
