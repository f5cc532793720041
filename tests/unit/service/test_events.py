"""The event bus: scoped, bounded subscriptions; handlers that fail never reach the publisher."""

from __future__ import annotations

import threading

from signet_desktop.domain.events import MemoryCreated, StatusChanged, WorkerStateChanged
from signet_desktop.service.events import EventBus
from signet_desktop.service.status import StatusBoard


def created(agent: str, memory_id: str = "m1") -> MemoryCreated:
    return MemoryCreated(agent_id=agent, memory_id=memory_id, memory_type="fact", embedded=True)


def test_subscription_sees_its_agent_and_process_events_only() -> None:
    bus = EventBus()
    alice = bus.subscribe(agent_id="alice")
    everyone = bus.subscribe(agent_id=None)
    bus.publish(created("alice", "a"))
    bus.publish(created("bob", "b"))
    bus.publish(StatusChanged(key="workers"))
    assert [d.event.kind for d in alice.drain()] == ["memory.created", "status.changed"]
    assert [getattr(d.event, "memory_id", None) for d in everyone.drain()] == ["a", "b", None]


def test_sequence_numbers_follow_publish_order() -> None:
    bus = EventBus()
    sub = bus.subscribe(agent_id=None)
    for i in range(5):
        bus.publish(created("a", str(i)))
    assert [d.seq for d in sub.drain()] == [1, 2, 3, 4, 5]


def test_kinds_filter() -> None:
    bus = EventBus()
    sub = bus.subscribe(agent_id=None, kinds={"worker.state"})
    bus.publish(created("a"))
    bus.publish(WorkerStateChanged(worker="embedding", state="running"))
    assert [d.event.kind for d in sub.drain()] == ["worker.state"]


def test_full_buffer_drops_for_that_subscriber_only_and_counts() -> None:
    bus = EventBus()
    slow = bus.subscribe(agent_id=None, buffer=3)
    fast = bus.subscribe(agent_id=None)
    for i in range(10):
        bus.publish(created("a", str(i)))
    assert slow.pending() == 3 and slow.dropped == 7
    assert len(fast.drain()) == 10
    assert bus.stats().dropped == 7
    assert [d.event.memory_id for d in slow.drain()] == ["0", "1", "2"]  # type: ignore[attr-defined]


def test_failing_handler_is_counted_and_others_still_run() -> None:
    bus = EventBus()
    seen: list[str] = []

    def broken(event: object) -> None:
        raise RuntimeError("boom")

    bus.connect(broken)
    bus.connect(lambda event: seen.append(event.kind))
    bus.publish(created("a"))
    assert seen == ["memory.created"]
    assert bus.stats().handler_errors == 1


def test_disconnect_and_close_stop_delivery() -> None:
    bus = EventBus()
    seen: list[str] = []
    disconnect = bus.connect(lambda event: seen.append(event.kind))
    sub = bus.subscribe(agent_id=None)
    disconnect()
    sub.close()
    bus.publish(created("a"))
    assert seen == [] and sub.drain() == [] and bus.stats().subscribers == 0


def test_get_waits_for_an_event_from_another_thread() -> None:
    bus = EventBus()
    sub = bus.subscribe(agent_id=None)
    threading.Timer(0.05, lambda: bus.publish(created("a"))).start()
    delivery = sub.get(timeout=5)
    assert delivery is not None and delivery.event.kind == "memory.created"
    assert sub.get(timeout=0.01) is None


def test_close_wakes_a_waiting_reader() -> None:
    bus = EventBus()
    sub = bus.subscribe(agent_id=None)
    threading.Timer(0.05, sub.close).start()
    assert sub.get(timeout=5) is None


def test_waker_runs_after_each_buffered_delivery() -> None:
    bus = EventBus()
    sub = bus.subscribe(agent_id="a")
    woken: list[int] = []
    sub.set_waker(lambda: woken.append(sub.pending()))
    bus.publish(created("a"))
    bus.publish(created("b"))  # another agent's: not buffered, no wake-up
    assert woken == [1]


def test_status_board_follows_worker_events_and_announces_changes() -> None:
    bus = EventBus()
    board = StatusBoard(bus)
    board.follow(bus.connect)
    changes = bus.subscribe(agent_id=None, kinds={"status.changed"})
    bus.publish(WorkerStateChanged(worker="embedding", state="running"))
    bus.publish(WorkerStateChanged(worker="embedding", state="crashed", error="boom"))
    assert board.snapshot()["workers"] == {"embedding": {"state": "crashed", "error": "boom"}}
    board.set("runtime", {"pid": 1})
    keys = [d.event.key for d in changes.drain()]  # type: ignore[attr-defined]
    assert keys == ["workers", "workers", "runtime"]
