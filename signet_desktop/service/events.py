"""The event bus: publishers hand over frozen events; subscribers read them at their own pace.

Publishing never blocks a writer. Each subscription has a bounded buffer; when it is full the
event is dropped for that subscriber only and counted (`dropped`), so a slow or stuck reader
(an SSE client that never reads) costs at most its buffer. Handlers (`connect`) run on the
publisher's thread and must be cheap and non-blocking (set a fact, emit a Qt signal); one that
raises is logged and counted, never propagated. Publish after the transaction commits, so a
subscriber that reads back through the facade sees the change.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass

from signet_desktop.domain.events import Event

log = logging.getLogger(__name__)

DEFAULT_BUFFER = 1000
Handler = Callable[[Event], None]


@dataclass(frozen=True, slots=True)
class Delivery:
    """An event with its bus sequence number (1, 2, ... in publish order)."""

    seq: int
    event: Event


@dataclass(frozen=True, slots=True)
class BusStats:
    """Counters for /api/status and the benchmarks."""

    published: int
    subscribers: int
    handlers: int
    dropped: int
    handler_errors: int


class Subscription:
    """A bounded, thread-safe buffer of deliveries for one reader.

    `agent_id` scopes it: events of other agents never enter it (None = every agent, for
    in-process readers such as the inspector). `kinds` narrows it to some event kinds.
    """

    def __init__(
        self,
        bus: EventBus,
        *,
        agent_id: str | None,
        kinds: Collection[str] | None,
        buffer: int,
    ) -> None:
        if buffer < 1:
            raise ValueError("buffer must be at least 1")
        self._bus = bus
        self.agent_id = agent_id
        self.kinds = frozenset(kinds) if kinds else None
        self._buffer = buffer
        self._items: deque[Delivery] = deque()
        self._cond = threading.Condition()
        self._waker: Callable[[], None] | None = None
        self.dropped = 0
        self.closed = False

    def accepts(self, event: Event) -> bool:
        """Whether this subscription wants `event` (scope and kinds)."""
        if self.kinds is not None and event.kind not in self.kinds:
            return False
        return self.agent_id is None or event.agent_id is None or event.agent_id == self.agent_id

    def offer(self, delivery: Delivery) -> bool:
        """Buffer a delivery, or count it dropped when the buffer is full. Never waits."""
        with self._cond:
            if self.closed:
                return False
            if len(self._items) >= self._buffer:
                self.dropped += 1
                return False
            self._items.append(delivery)
            self._cond.notify()
            waker = self._waker
        if waker is not None:
            waker()
        return True

    def set_waker(self, waker: Callable[[], None] | None) -> None:
        """Call `waker()` (from the publisher's thread) after each buffered delivery."""
        with self._cond:
            self._waker = waker

    def get(self, timeout: float | None = None) -> Delivery | None:
        """The next delivery, waiting up to `timeout` s; None on timeout or when closed."""
        with self._cond:
            if not self._items and not self.closed:
                self._cond.wait(timeout)
            return self._items.popleft() if self._items else None

    def drain(self, limit: int | None = None) -> list[Delivery]:
        """Everything buffered now (at most `limit`), without waiting."""
        with self._cond:
            count = len(self._items) if limit is None else min(limit, len(self._items))
            return [self._items.popleft() for _ in range(count)]

    def pending(self) -> int:
        with self._cond:
            return len(self._items)

    def close(self) -> None:
        """Stop receiving; wake any reader waiting in `get`."""
        self._bus.unsubscribe(self)
        with self._cond:
            self.closed = True
            self._items.clear()
            self._cond.notify_all()

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class EventBus:
    """Thread-safe fan-out of events to subscriptions and handlers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seq = 0
        # Copy-on-write tuples: publish iterates a snapshot without holding the lock.
        self._subscriptions: tuple[Subscription, ...] = ()
        self._handlers: tuple[Handler, ...] = ()
        self._dropped_closed = 0
        self._handler_errors = 0

    def publish(self, event: Event) -> None:
        """Deliver `event` to every handler and accepting subscription. Never blocks."""
        self._deliver(event, with_handlers=True)

    def publish_remote(self, event: Event) -> None:
        """Deliver an event another daemon published (relayed by storage/postgres/notify.py)
        to the accepting subscriptions only: the work its handlers do (queue hints, mark
        MEMORY.md stale) already ran on the daemon that wrote. Never blocks."""
        self._deliver(event, with_handlers=False)

    def _deliver(self, event: Event, *, with_handlers: bool) -> None:
        with self._lock:
            self._seq += 1
            delivery = Delivery(self._seq, event)
            subscriptions = self._subscriptions
            handlers = self._handlers if with_handlers else ()
        for handler in handlers:
            try:
                handler(event)
            except Exception:  # a broken subscriber must never fail the publisher
                with self._lock:
                    self._handler_errors += 1
                log.exception("event handler %r failed on %s", handler, event.kind)
        for subscription in subscriptions:
            if subscription.accepts(event):
                subscription.offer(delivery)

    def subscribe(
        self,
        *,
        agent_id: str | None,
        kinds: Collection[str] | None = None,
        buffer: int = DEFAULT_BUFFER,
    ) -> Subscription:
        """A new buffered reader; close it (or use it as a context manager) when done."""
        subscription = Subscription(self, agent_id=agent_id, kinds=kinds, buffer=buffer)
        with self._lock:
            self._subscriptions = (*self._subscriptions, subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        with self._lock:
            if subscription in self._subscriptions:
                self._subscriptions = tuple(s for s in self._subscriptions if s is not subscription)
                self._dropped_closed += subscription.dropped

    def connect(self, handler: Handler) -> Callable[[], None]:
        """Call `handler(event)` on the publisher's thread for every event; returns disconnect."""
        with self._lock:
            self._handlers = (*self._handlers, handler)

        def disconnect() -> None:
            with self._lock:
                self._handlers = tuple(h for h in self._handlers if h is not handler)

        return disconnect

    def stats(self) -> BusStats:
        with self._lock:
            subscriptions = self._subscriptions
            return BusStats(
                published=self._seq,
                subscribers=len(subscriptions),
                handlers=len(self._handlers),
                dropped=self._dropped_closed + sum(s.dropped for s in subscriptions),
                handler_errors=self._handler_errors,
            )
