"""The event bus on the remember path: publish cost, and remember throughput with and without it.

Run: uv run python bench/events.py [--memories 3000] [--publishes 100000] [--rounds 3]

Publish cost is timed per call on a bus shaped like the daemon's: the status board's handler,
the inspector's bridge stand-in (a handler), and one SSE-sized subscription that is drained by a
reader thread. Remember throughput alternates rounds with the bus and with `DiscardEvents`
(the build before the bus published nothing) on fresh databases, lexical only, so the two
columns come from the same run on the same machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import sentences

from signet_desktop.domain.events import DiscardEvents, EventSink, MemoryCreated
from signet_desktop.domain.memory import Actor
from signet_desktop.service.events import EventBus
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.service.status import StatusBoard
from signet_desktop.service.stream import STREAM_BUFFER
from signet_desktop.storage.database import open_database


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def daemon_shaped_bus(*, reader: bool = True) -> tuple[EventBus, threading.Event]:
    """A bus with the daemon's subscribers; returns it and the reader's stop flag.

    `reader`: one SSE-sized subscription drained by its own thread (a connected dashboard).
    """
    bus = EventBus()
    board = StatusBoard(bus)
    board.follow(bus.connect)
    bus.connect(lambda event: None)  # the Qt bridge's emit, minus Qt
    stop = threading.Event()
    if not reader:
        return bus, stop
    subscription = bus.subscribe(agent_id="default", buffer=STREAM_BUFFER)

    def read() -> None:
        while not stop.is_set():
            subscription.get(timeout=0.05)
            subscription.drain()

    threading.Thread(target=read, daemon=True).start()
    return bus, stop


def publish_costs(count: int) -> list[float]:
    """Microseconds per publish of a memory.created event."""
    bus, stop = daemon_shaped_bus()
    samples = []
    for i in range(count):
        event = MemoryCreated(
            agent_id="default", memory_id=str(i), memory_type="fact", embedded=True
        )
        started = time.perf_counter()
        bus.publish(event)
        samples.append((time.perf_counter() - started) * 1e6)
    stop.set()
    return samples


def remember_rate(texts: list[str], events: EventSink) -> float:
    """Memories/s through MemoryService.remember on a fresh database."""
    with tempfile.TemporaryDirectory() as tmp:
        db = open_database(Path(tmp) / "bench.db", with_vec=False)
        service = MemoryService(db, events=events)
        started = time.perf_counter()
        for text in texts:
            service.remember(RememberRequest(content=text), Actor())
        rate = len(texts) / (time.perf_counter() - started)
        db.close()
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=3000)
    parser.add_argument("--publishes", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    costs = publish_costs(args.publishes)
    print(f"publish cost, {args.publishes:,} events (µs)")
    print("| p50 | p95 | p99 | max |")
    print("| ---: | ---: | ---: | ---: |")
    print(
        f"| {percentile(costs, 50):.2f} | {percentile(costs, 95):.2f} "
        f"| {percentile(costs, 99):.2f} | {max(costs):.1f} |"
    )

    texts = sentences(args.memories, seed=7)
    rows: dict[str, list[float]] = {
        "no bus (the build before)": [],
        "bus: status board + UI bridge": [],
        "bus + one live SSE reader thread": [],
    }
    for _ in range(args.rounds):  # interleaved, so drift hits every row alike
        rows["no bus (the build before)"].append(remember_rate(texts, DiscardEvents()))
        for name, reader in (
            ("bus: status board + UI bridge", False),
            ("bus + one live SSE reader thread", True),
        ):
            bus, stop = daemon_shaped_bus(reader=reader)
            rows[name].append(remember_rate(texts, bus))
            stop.set()
    print()
    print(f"remember throughput, {args.memories:,} memories × {args.rounds} rounds (memories/s)")
    print("| build | median | min | max |")
    print("| --- | ---: | ---: | ---: |")
    for name, rates in rows.items():
        print(f"| {name} | {statistics.median(rates):.0f} | {min(rates):.0f} | {max(rates):.0f} |")


if __name__ == "__main__":
    main()
