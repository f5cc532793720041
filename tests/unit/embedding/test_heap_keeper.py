"""`HeapKeeper`: trims after growth when malloc holds enough free heap, and only then."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from signet_desktop.embedding.heap import HeapKeeper

MIB = 2**20


class Process:
    """The keeper's view of a process: resident anonymous bytes, malloc's free bytes."""

    def __init__(self, resident: int, free: int | None) -> None:
        self.resident = resident
        self.free = free
        self.trims = 0

    def trim(self) -> None:
        self.trims += 1
        if self.free is not None:
            self.resident -= self.free

    def keeper(self) -> HeapKeeper:
        return HeapKeeper(
            32 * MIB, resident=lambda: self.resident, free=lambda: self.free, trim=self.trim
        )


def test_no_growth_no_trim() -> None:
    process = Process(150 * MIB, free=100 * MIB)
    keeper = process.keeper()
    process.resident += 31 * MIB
    assert not keeper.check()
    assert process.trims == 0


def test_growth_with_free_heap_is_trimmed_once() -> None:
    process = Process(150 * MIB, free=10 * MIB)
    keeper = process.keeper()
    process.resident += 80 * MIB
    process.free = 80 * MIB
    assert keeper.check()
    assert process.resident == 150 * MIB
    process.free = 80 * MIB  # the free chunks are still on malloc's lists, their pages gone
    assert not keeper.check()  # nothing grew since
    assert process.trims == 1


def test_a_grown_cache_is_left_alone() -> None:
    process = Process(150 * MIB, free=5 * MIB)
    keeper = process.keeper()
    process.resident += 200 * MIB  # in use, not free
    assert not keeper.check()
    assert process.trims == 0


def test_growth_after_a_shrink_counts_from_the_lower_size() -> None:
    process = Process(150 * MIB, free=None)  # no mallinfo2: growth alone decides
    keeper = process.keeper()
    process.resident = 120 * MIB
    assert not keeper.check()
    process.resident = 155 * MIB
    assert keeper.check()


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_a_fragmented_heap_goes_back_to_the_os() -> None:
    """Real glibc: 100 MB of 1,000-byte objects, 1 in 100 kept, so the heap cannot shrink."""
    program = """
from signet_desktop.embedding.heap import HeapKeeper, anonymous_resident_bytes
keeper = HeapKeeper()
blocks = [bytes(1000) + bytes([i % 256]) for i in range(100_000)]
kept = blocks[::100]
del blocks
before = anonymous_resident_bytes()
print(keeper.check(), before, anonymous_resident_bytes(), len(kept))
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, env=env, check=True
    )
    trimmed, before, after, _ = done.stdout.split()
    assert trimmed == "True"
    assert int(before) - int(after) > 64 * MIB
