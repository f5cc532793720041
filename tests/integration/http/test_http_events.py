"""GET /api/events over a real socket: scoped SSE with heartbeats, bounded for stuck clients."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.daemon import CliDaemon, run_daemon

from signet_desktop.domain.events import MemoryCreated
from signet_desktop.domain.memory import Actor
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.service.stream import STREAM_BUFFER


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[CliDaemon]:
    with run_daemon(tmp_path, HashEmbedder(64)) as running:
        yield running


def read_frames(response: httpx.Response, wanted: int, timeout_s: float = 10) -> list[dict]:
    """Parse SSE frames (events and comments) until `wanted` events arrived."""
    frames: list[dict] = []
    current: dict = {}
    deadline = time.monotonic() + timeout_s
    for line in response.iter_lines():
        assert time.monotonic() < deadline, f"only {frames} before the deadline"
        if line.startswith(":"):
            frames.append({"comment": line[1:].strip()})
        elif line.startswith(("id:", "event:", "data:")):
            key, _, value = line.partition(":")
            current[key] = value.strip()
        elif not line and current:
            current["data"] = json.loads(current["data"])
            frames.append(current)
            current = {}
        if sum("event" in f for f in frames) >= wanted:
            return frames
    return frames


def wait_for_subscribers(daemon: CliDaemon, count: int) -> None:
    deadline = time.monotonic() + 5
    while daemon.service.events.stats().subscribers < count:
        assert time.monotonic() < deadline, "the stream never subscribed"
        time.sleep(0.01)


def test_stream_carries_own_agents_events_in_order_and_no_one_elses(daemon: CliDaemon) -> None:
    url = f"{daemon.url}/api/events?types=memory.created&agentId=alice"
    with httpx.Client(timeout=10) as http, http.stream("GET", url) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        wait_for_subscribers(daemon, 1)
        memories = daemon.service.memories
        memories.remember(RememberRequest(content="bob's secret", agent_id="bob"), Actor())
        first = memories.remember(RememberRequest(content="alice one", agent_id="alice"), Actor())
        second = memories.remember(RememberRequest(content="alice two", agent_id="alice"), Actor())
        events = [f for f in read_frames(response, 2) if "event" in f]
    assert [e["event"] for e in events] == ["memory.created", "memory.created"]
    assert [e["data"]["memoryId"] for e in events] == [first.memory.id, second.memory.id]
    assert {e["data"]["agentId"] for e in events} == {"alice"}
    assert int(events[0]["id"]) < int(events[1]["id"])


def test_idle_stream_sends_heartbeats(daemon: CliDaemon) -> None:
    url = f"{daemon.url}/api/events?heartbeat=0.1"
    with httpx.Client(timeout=10) as http, http.stream("GET", url) as response:
        comments: list[str] = []
        for line in response.iter_lines():
            if line.startswith(":"):
                comments.append(line[1:].strip())
            if comments.count("heartbeat") >= 2:
                break
    assert comments[0] == "connected" and comments.count("heartbeat") == 2


@pytest.mark.parametrize(
    ("query", "code"),
    [("types=memory.exploded", "bad_event_type"), ("agentId=a%20b", "agent_id_invalid")],
)
def test_bad_stream_requests_are_refused_before_subscribing(
    daemon: CliDaemon, query: str, code: str
) -> None:
    response = httpx.get(f"{daemon.url}/api/events?{query}", timeout=5)
    assert response.status_code == 400 and response.json()["code"] == code
    assert daemon.service.events.stats().subscribers == 0


def test_a_client_that_never_reads_costs_a_bounded_buffer_and_health_keeps_answering(
    daemon: CliDaemon,
) -> None:
    host, port = daemon.url.removeprefix("http://").split(":")
    stuck = socket.create_connection((host, int(port)))
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    try:
        stuck.sendall(f"GET /api/events HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        wait_for_subscribers(daemon, 1)
        bus = daemon.service.events
        padding = "x" * 200
        for i in range(20_000):  # ~5 MB of frames: far more than the socket buffers hold
            bus.publish(
                MemoryCreated(
                    agent_id="default", memory_id=f"{padding}{i}", memory_type="f", embedded=False
                )
            )
        deadline = time.monotonic() + 10
        while bus.stats().dropped == 0:
            assert time.monotonic() < deadline, "the stuck stream never started dropping"
            time.sleep(0.05)
        subscription = next(iter(bus._subscriptions))
        assert subscription.pending() <= STREAM_BUFFER
        health = httpx.get(f"{daemon.url}/health", timeout=5)
        assert health.status_code == 200 and health.json()["status"] == "healthy"
    finally:
        stuck.close()
