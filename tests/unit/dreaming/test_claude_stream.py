"""Reading Claude Code's `stream-json` init event during a pass: whether the pass's tools were
connected, and Claude Code's own word for it when they were not (the pass's error says it)."""

from __future__ import annotations

import json

import pytest

from signet_desktop.dreaming.harness_streams import ClaudeStream

PREFIX = "mcp__signet-dreaming__"


def init(*statuses: str) -> bytes:
    servers = [{"name": f"s{n}", "status": status} for n, status in enumerate(statuses)]
    event = {"type": "system", "subtype": "init", "model": "m", "mcp_servers": servers}
    return json.dumps(event).encode() + b"\n"


@pytest.mark.parametrize(
    ("statuses", "connected", "said"),
    [
        (("connected",), True, "connected"),
        (("pending",), False, "pending"),  # connecting in the background: no tools yet
        (("failed",), False, "failed"),
        ((), False, "no server"),
    ],
)
def test_the_init_event_says_whether_the_tools_are_there(
    statuses: tuple[str, ...], connected: bool, said: str
) -> None:
    stream = ClaudeStream(lambda name, args: None, PREFIX)
    stream.take(init(*statuses))
    assert (stream.state.tools_connected, stream.state.tools_status) == (connected, said)
    assert stream.state.model == "m"


def test_without_an_init_event_nothing_is_claimed() -> None:
    stream = ClaudeStream(lambda name, args: None, PREFIX)
    assert (stream.state.tools_connected, stream.state.tools_status) == (None, None)
