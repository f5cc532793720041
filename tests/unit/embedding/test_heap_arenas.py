"""`limit_malloc_arenas`: threads started after it share one glibc arena (what `main` relies on)."""

from __future__ import annotations

import ctypes.util
import os
import platform
import subprocess
import sys

import pytest

from signet_desktop.embedding.heap import ARENA_ENV

pytestmark = pytest.mark.skipif(
    platform.libc_ver()[0] != "glibc" or ctypes.util.find_library("c") is None,
    reason="malloc arenas are glibc's",
)

# Eight threads allocate at once, held at a barrier; glibc's malloc_stats then prints one
# "Arena N:" block per arena on stderr.
PROGRAM = """
import ctypes, ctypes.util, sys, threading
from signet_desktop.embedding.heap import limit_malloc_arenas
if sys.argv[1] == "limit":
    print(limit_malloc_arenas(1))
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.malloc.restype = ctypes.c_void_p
barrier = threading.Barrier(8)
def work():
    kept = [libc.malloc(4096) for _ in range(64)]
    barrier.wait()
threads = [threading.Thread(target=work) for _ in range(8)]
for thread in threads: thread.start()
for thread in threads: thread.join()
libc.malloc_stats()
"""


def arenas(mode: str, **extra_env: str) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k != ARENA_ENV} | extra_env
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, mode],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    )  # fmt: skip
    return done.stderr.count("Arena "), done.stdout.strip()


def test_without_the_cap_threads_get_arenas_of_their_own() -> None:
    count, _ = arenas("default")
    assert count > 1


def test_the_cap_keeps_every_thread_in_one_arena() -> None:
    count, printed = arenas("limit")
    assert printed == "True"
    assert count == 1


def test_an_arena_count_in_the_environment_wins() -> None:
    count, printed = arenas("limit", **{ARENA_ENV: "3"})
    assert printed == "False"
    assert 1 < count <= 3
