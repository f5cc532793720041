"""Events across daemons (storage/postgres/notify.py): daemon A's agent events reach daemon
B's bus subscriptions through NOTIFY/LISTEN within a second, are not echoed to A, skip B's
handlers, and the listener comes back after a server restart."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from support.postgres_server import resume_postgres, start_postgres

from signet_desktop.domain.events import (
    Event,
    MemoriesEmbedded,
    MemoryCreated,
    WorkerStateChanged,
)
from signet_desktop.service.events import EventBus, Subscription
from signet_desktop.storage.postgres.notify import (
    MAX_PAYLOAD_BYTES,
    EventRelay,
    decode,
    encode,
    event_classes,
)

pytestmark = pytest.mark.postgres


def relay_for(url: str, bus: EventBus, name: str) -> EventRelay:
    relay = EventRelay(url, bus, daemon_id=name, retry_max_s=0.5)
    bus.connect(relay.publish)
    relay.start()
    assert relay.listening.wait(10)
    return relay


@pytest.fixture
def two_daemons(pg_url: str) -> Iterator[tuple[EventBus, EventBus, EventRelay, EventRelay]]:
    bus_a, bus_b = EventBus(), EventBus()
    relay_a, relay_b = relay_for(pg_url, bus_a, "A"), relay_for(pg_url, bus_b, "B")
    yield bus_a, bus_b, relay_a, relay_b
    relay_a.stop()
    relay_b.stop()


def created(memory_id: str, agent_id: str = "ag") -> MemoryCreated:
    return MemoryCreated(agent_id=agent_id, memory_id=memory_id, memory_type="fact", embedded=False)


def next_event(subscription: Subscription, timeout: float) -> Event | None:
    delivery = subscription.get(timeout)
    return None if delivery is None else delivery.event


def test_a_write_on_daemon_a_reaches_daemon_bs_subscribers_within_a_second(
    two_daemons: tuple[EventBus, EventBus, EventRelay, EventRelay],
) -> None:
    bus_a, bus_b, relay_a, relay_b = two_daemons
    on_a, on_b = bus_a.subscribe(agent_id="ag"), bus_b.subscribe(agent_id="ag")
    handled_on_b: list[Event] = []
    bus_b.connect(handled_on_b.append)

    event = created("m1")
    started = time.monotonic()
    bus_a.publish(event)  # as a service does once its write committed
    assert next_event(on_b, 1.0) == event  # the same event, its `at` included
    assert time.monotonic() - started < 1.0

    assert next_event(on_a, 0.1) == event  # A's own, delivered locally
    assert next_event(on_a, 0.5) is None  # and not again through the relay
    assert relay_a.stats.own_skipped >= 1
    assert handled_on_b == []  # B's handlers' work ran on A already
    assert relay_a.stats.sent == 1 and relay_b.stats.received == 1


def test_process_facts_stay_home_and_tuples_survive(
    two_daemons: tuple[EventBus, EventBus, EventRelay, EventRelay],
) -> None:
    bus_a, bus_b, _, _ = two_daemons
    on_b = bus_b.subscribe(agent_id=None)
    bus_a.publish(WorkerStateChanged(worker="embedding", state="running"))  # A's own fact
    batch = MemoriesEmbedded(agent_id="ag", memory_ids=("m1", "m2"), generation=3)
    bus_a.publish(batch)
    assert next_event(on_b, 1.0) == batch
    assert next_event(on_b, 0.3) is None


def test_payloads_are_bounded() -> None:
    classes = event_classes()
    long_error = MemoryCreated(agent_id="ag", memory_id="x" * 9_000, memory_type="f", embedded=1)
    text = encode(long_error, "A")
    assert text is not None and len(text.encode()) <= MAX_PAYLOAD_BYTES
    found = decode(text, classes)
    assert found is not None and found[1].memory_id == "x" * 500  # type: ignore[attr-defined]
    huge = MemoriesEmbedded(agent_id="ag", memory_ids=tuple(f"m{n}" for n in range(2_000)),
                            generation=1)  # fmt: skip
    assert encode(huge, "A") is None
    assert decode('{"d":"A","k":"no.such.kind","f":{}}', classes) is None
    assert decode("not json", classes) is None


@pytest.mark.slow
def test_the_listener_comes_back_after_a_server_restart() -> None:
    server = start_postgres()
    bus_a, bus_b = EventBus(), EventBus()
    relay_a = relay_for(server.url(), bus_a, "A")
    relay_b = relay_for(server.url(), bus_b, "B")
    try:
        on_b = bus_b.subscribe(agent_id="ag")
        before = created("before")
        bus_a.publish(before)
        assert next_event(on_b, 2.0) == before
        server.halt()
        deadline = time.monotonic() + 10
        while relay_b.listening.is_set() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not relay_b.listening.is_set()
        server = resume_postgres(server)
        assert relay_b.listening.wait(10) and relay_a.listening.wait(10)
        assert relay_b.stats.reconnects >= 1
        after = created("after")
        bus_a.publish(after)  # A's sender finds its connection lost and sends on a new one
        assert next_event(on_b, 2.0) == after
        assert relay_a.stats.send_failed == 0
    finally:
        relay_a.stop()
        relay_b.stop()
        server.stop()
