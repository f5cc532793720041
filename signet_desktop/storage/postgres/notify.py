"""Events across daemons on one PostgreSQL database: NOTIFY out, LISTEN in (issue 31).

Each daemon publishes its events on its own bus after the write commits (service/events.py).
`EventRelay.publish` is a bus handler: an agent's event (not a process fact such as a worker's
state, which is that daemon's alone) is encoded and queued, and a sender thread sends it with
`pg_notify` on a connection of its own — the handler never waits on the network. A listener
thread LISTENs on another connection and hands every other daemon's event to
`sink.publish_remote`: the bus delivers it to its subscriptions (SSE on daemon B sees daemon
A's writes) but not to its handlers, whose work (queueing hints, artifacts) already ran on the
daemon that wrote. A daemon's own notifications come back to it too; the payload names the
daemon (`d`) and those are skipped.

The payload is compact JSON, `{"d": daemon, "k": kind, "f": {field: value}}`, the event's own
fields (ids and small facts, never rows; `at` kept, tuples as arrays). NOTIFY takes at most
8000 bytes: a longer one is sent with its long strings cut to `CUT_CHARS`, and dropped
(counted `oversized`) if still too long. An unknown kind (a newer daemon) or a payload that no
longer fits its class is skipped and counted.

NOTIFY is not durable: an event sent while a listener is disconnected is lost to it. The
listener reconnects on its own (a backoff up to `retry_max_s`) and LISTENs again; `listening`
is set while it is. A reader that must not miss a change re-reads after a gap, as an SSE
client does after reconnecting.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import queue
import sys
import threading
import uuid
from collections.abc import Callable, Mapping
from contextlib import suppress
from typing import Any, Protocol

from signet_desktop.domain.events import Event
from signet_desktop.storage.errors import DATABASE_ERRORS
from signet_desktop.storage.postgres.connect import PgConnection, connect_postgres

log = logging.getLogger(__name__)

CHANNEL = "signet_events"
MAX_PAYLOAD_BYTES = 7_900  # PostgreSQL refuses a NOTIFY payload of 8000 bytes or more
CUT_CHARS = 500
SEND_QUEUE = 10_000
POLL_S = 0.5
RETRY_MIN_S = 0.2
RETRY_MAX_S = 5.0
NOTIFY = "SELECT pg_notify(:channel, :payload)"


class RemoteSink(Protocol):
    """Where other daemons' events go: `EventBus.publish_remote` (subscriptions only)."""

    def publish_remote(self, event: Event) -> None: ...


def event_classes() -> dict[str, type[Event]]:
    """Every event class imported so far, by kind: the one its module names (a slotted
    dataclass replaces the class it was made from, which may linger among the subclasses)."""
    found: dict[str, type[Event]] = {}
    stack: list[type[Event]] = [Event]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        module = sys.modules.get(cls.__module__)
        if cls is not Event and getattr(module, cls.__qualname__, None) is cls:
            found[cls.kind] = cls
    return found


def encode(event: Event, daemon_id: str) -> str | None:
    """The NOTIFY payload for `event`, or None when it cannot fit even shortened."""
    fields = {item.name: _plain(getattr(event, item.name)) for item in dataclasses.fields(event)}
    text = _dump(daemon_id, event.kind, fields)
    if len(text.encode()) <= MAX_PAYLOAD_BYTES:
        return text
    cut = {name: _cut(value) for name, value in fields.items()}
    text = _dump(daemon_id, event.kind, cut)
    return text if len(text.encode()) <= MAX_PAYLOAD_BYTES else None


def decode(payload: str, classes: Mapping[str, type[Event]]) -> tuple[str, Event] | None:
    """(daemon id, event) from a payload; None when its kind is unknown or it does not fit
    its class."""
    try:
        body = json.loads(payload)
        cls = classes[body["k"]]
        values = {name: _tuples(value) for name, value in dict(body["f"]).items()}
        return str(body["d"]), cls(**values)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _dump(daemon_id: str, kind: str, fields: Mapping[str, Any]) -> str:
    return json.dumps({"d": daemon_id, "k": kind, "f": fields}, separators=(",", ":"))


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _cut(value: Any) -> Any:
    return value[:CUT_CHARS] if isinstance(value, str) else value


def _tuples(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


@dataclasses.dataclass(slots=True)
class RelayStats:
    """What the relay did: sent and received events, and what it skipped or lost."""

    sent: int = 0
    received: int = 0
    own_skipped: int = 0
    send_failed: int = 0
    queue_full: int = 0
    oversized: int = 0
    unreadable: int = 0
    reconnects: int = 0


class EventRelay:
    """NOTIFY this daemon's agent events; republish other daemons' to `sink` (two threads)."""

    def __init__(
        self,
        url: str,
        sink: RemoteSink,
        *,
        daemon_id: str | None = None,
        channel: str = CHANNEL,
        retry_max_s: float = RETRY_MAX_S,
        connect: Callable[[str], PgConnection] = connect_postgres,
    ) -> None:
        if not channel.isidentifier():
            raise ValueError(f"not a channel name: {channel!r}")
        self.url = url
        self.daemon_id = daemon_id or str(uuid.uuid4())
        self.channel = channel
        self.stats = RelayStats()
        self.listening = threading.Event()
        self._sink = sink
        self._connect = connect
        self._retry_max_s = retry_max_s
        self._outbox: queue.Queue[str | None] = queue.Queue(SEND_QUEUE)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    # -- out ------------------------------------------------------------------------------

    def publish(self, event: Event) -> None:
        """A bus handler: queue an agent's event for NOTIFY. Never waits."""
        if event.agent_id is None or self._stop.is_set():
            return  # a process fact (worker state, status) is this daemon's own
        payload = encode(event, self.daemon_id)
        if payload is None:
            self._count("oversized")
            log.warning("event %s too large to NOTIFY; other daemons miss it", event.kind)
            return
        try:
            self._outbox.put_nowait(payload)
        except queue.Full:
            self._count("queue_full")

    def _send_loop(self) -> None:
        conn: PgConnection | None = None
        while True:
            payload = self._outbox.get()
            if payload is None:
                break
            conn = self._send(conn, payload)
        _close(conn)

    def _send(self, conn: PgConnection | None, payload: str) -> PgConnection | None:
        """NOTIFY once; a connection found lost (a server restart since the last event) is
        replaced and the event sent again. Returns the connection to use next."""
        for _ in range(2):
            fresh = conn is None
            try:
                if conn is None:
                    conn = self._connect(self.url)
                conn.execute(NOTIFY, {"channel": self.channel, "payload": payload})
            except DATABASE_ERRORS as exc:
                _close(conn)
                conn = None
                if fresh:  # the server is away: this event is lost to the other daemons
                    self._count("send_failed")
                    log.info("NOTIFY failed (%s); the next event reconnects", exc)
                    return None
                continue
            self._count("sent")
            return conn
        return conn

    # -- in -------------------------------------------------------------------------------

    def _listen_loop(self) -> None:
        classes = event_classes()
        delay = RETRY_MIN_S
        first = True
        while not self._stop.is_set():
            conn: PgConnection | None = None
            try:
                conn = self._connect(self.url)
                conn.execute(f"LISTEN {self.channel}")
                if not first:
                    self._count("reconnects")
                first, delay = False, RETRY_MIN_S
                self.listening.set()
                while not self._stop.is_set():
                    for note in conn.raw.notifies(timeout=POLL_S):
                        self._receive(note.payload, classes)
                        if self._stop.is_set():
                            break
            except Exception as exc:  # lost or refused: reconnect after a backoff
                if self._stop.is_set():
                    break
                log.info("event listener disconnected (%s); retrying in %.1f s", exc, delay)
            finally:
                self.listening.clear()
                _close(conn)
            self._stop.wait(delay)
            delay = min(self._retry_max_s, delay * 2)

    def _receive(self, payload: str, classes: dict[str, type[Event]]) -> None:
        found = decode(payload, classes)
        if found is None:
            classes.update(event_classes())  # a class imported since the listener started
            found = decode(payload, classes)
        if found is None:
            self._count("unreadable")
            return
        daemon_id, event = found
        if daemon_id == self.daemon_id:
            self._count("own_skipped")
            return
        self._count("received")
        try:
            self._sink.publish_remote(event)
        except Exception:  # a broken subscriber must not end the listener
            log.exception("republishing %s from another daemon failed", event.kind)

    # -- life -----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the sender and the listener (daemon threads)."""
        if self._threads:
            raise RuntimeError("the relay is already started")
        self._threads = [
            threading.Thread(target=self._send_loop, name="pg-notify-send", daemon=True),
            threading.Thread(target=self._listen_loop, name="pg-notify-listen", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def stop(self, timeout: float = 2.0) -> bool:
        """Stop both threads: events queued so far are still sent, newer ones are not.
        Returns whether both ended within `timeout` each."""
        self._stop.set()
        with suppress(queue.Full):
            self._outbox.put(None, timeout=timeout)
        for thread in self._threads:
            thread.join(timeout)
        return not any(thread.is_alive() for thread in self._threads)

    def facts(self) -> dict[str, Any]:
        """What /api/status shows of the relay (`eventRelay`): listening, and its counters."""
        with self._lock:
            counts = dataclasses.asdict(self.stats)
        return {
            "daemonId": self.daemon_id,
            "channel": self.channel,
            "listening": self.listening.is_set(),
            **{_camel(name): value for name, value in counts.items()},
        }

    def _count(self, name: str) -> None:
        with self._lock:
            setattr(self.stats, name, getattr(self.stats, name) + 1)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _close(conn: PgConnection | None) -> None:
    if conn is not None:
        with suppress(Exception):
            conn.close()
