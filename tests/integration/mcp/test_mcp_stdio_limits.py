"""`signet-mcp` over stdio, spoken to as raw JSON-RPC lines: every bad message is answered.

An oversize message, one nested past the limit (200 and 100,000 deep), a line that is not
JSON and JSON that is no JSON-RPC message each get a JSON-RPC error with the request's id
(null when it cannot be read); an argument too long for the daemon's URL is a tool error
naming it. After all of them the server still answers, and nothing was written.
"""

from __future__ import annotations

import json
import selectors
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from conftest import SIGNET_MCP, Daemon

from signet_desktop.api.mcp.stdin_guard import MAX_DEPTH, MAX_MESSAGE_BYTES
from tests.e2e.launcher import clean_env

ANSWER_TIMEOUT_S = 20.0
STARTUP_TIMEOUT_S = 180.0


class RawClient:
    """A `signet-mcp` child spoken to line by line."""

    def __init__(self, daemon: Daemon) -> None:
        self.proc = subprocess.Popen(
            [SIGNET_MCP, "--url", daemon.url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=clean_env(daemon.home),
        )
        self.selector = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self.selector.register(self.proc.stdout, selectors.EVENT_READ)

    def send_line(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_line(json.dumps(message).encode())

    def answer(self, timeout_s: float = ANSWER_TIMEOUT_S) -> dict[str, Any]:
        assert self.selector.select(timeout_s), "no answer: the client would hang"
        assert self.proc.stdout is not None
        return dict(json.loads(self.proc.stdout.readline()))

    def call(self, request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        params = {"name": tool, "arguments": arguments}
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})
        return self.answer()

    def kill(self) -> None:
        """End a client whose start failed, leaving no process or pipe behind."""
        self.selector.close()
        self.proc.kill()
        self.proc.communicate()

    def close(self) -> str:
        """Close stdin (the server then exits 0) and return its stderr."""
        self.selector.close()
        _, stderr = self.proc.communicate(timeout=20)
        assert self.proc.returncode == 0, stderr
        return stderr.decode()


@pytest.fixture(scope="module")
def raw(daemon: Daemon) -> Iterator[RawClient]:
    """One `signet-mcp` for the module: each refusal below must also leave it serving the
    next test's messages (and a process start is ~1 s of CPU)."""
    client = RawClient(daemon)
    client.send(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        }
    )
    try:  # the first answer waits for the process to start: >20 s at load 30 on 2 cores
        assert client.answer(STARTUP_TIMEOUT_S)["id"] == 0
    except BaseException:
        client.kill()
        raise
    client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    yield client
    assert "Traceback" not in client.close()


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"a": value}
    return value


def error_of(answer: dict[str, Any], request_id: Any, code: int) -> str:
    assert answer["id"] == request_id and "result" not in answer, answer
    assert answer["error"]["code"] == code, answer
    return str(answer["error"]["message"])


def test_deep_messages_are_invalid_requests(raw: RawClient, daemon: Daemon) -> None:
    before = daemon.counts()
    for request_id, depth in ((1, 200), (2, MAX_DEPTH + 1)):
        answer = raw.call(request_id, "memory_store", {"content": "x", "metadata": nested(depth)})
        assert f"nested deeper than {MAX_DEPTH}" in error_of(answer, request_id, -32600)
    deepest = b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":' + b"[" * 100_000
    raw.send_line(deepest + b"]" * 100_000 + b"}")
    assert "nested deeper" in error_of(raw.answer(), 3, -32600)
    assert daemon.counts() == before


def test_a_message_just_under_the_depth_limit_reaches_the_tool(raw: RawClient) -> None:
    arguments = {"query": "x", "unknown": nested(MAX_DEPTH - 8)}  # unknown: ignored
    answer = raw.call(4, "memory_search", arguments)
    assert answer["id"] == 4 and answer["result"]["isError"] is False, answer


def test_an_oversize_message_is_refused_with_its_id(raw: RawClient, daemon: Daemon) -> None:
    before = daemon.counts()
    answer = raw.call(5, "memory_store", {"content": "x", "tags": ["t" * 1000] * 4500})
    assert f"larger than {MAX_MESSAGE_BYTES:,} bytes" in error_of(answer, 5, -32600)
    assert daemon.counts() == before


def test_an_argument_too_long_for_a_url_is_a_tool_error(raw: RawClient) -> None:
    """Was `internal_error`: httpx refused to build the URL of a 64 KiB query string."""
    for request_id, (tool, name) in enumerate(
        (("memory_list", "type"), ("knowledge_list_entities", "query")), start=6
    ):
        answer = raw.call(request_id, tool, {name: "y" * 70_000})
        body = json.loads(answer["result"]["content"][0]["text"])
        assert answer["result"]["isError"] is True
        assert body["code"] == "invalid_request" and body["error"].startswith(
            f"invalid request: {name}: String should have at most"
        )


def test_lines_that_are_not_json_rpc_are_answered(raw: RawClient) -> None:
    raw.send_line(b"not json")
    assert error_of(raw.answer(), None, -32700).startswith("parse error")
    raw.send_line(b'{"id": 9, "method": 5}')
    assert "not a JSON-RPC 2.0 message" in error_of(raw.answer(), 9, -32600)
    raw.send_line(b"[1, 2]")
    error_of(raw.answer(), None, -32600)
    raw.send({"jsonrpc": "2.0", "id": 10, "method": "tools/list"})
    assert raw.answer()["result"]["tools"]  # still serving


def test_calls_that_find_no_tool_are_invalid_params(raw: RawClient, daemon: Daemon) -> None:
    """The MCP spec's protocol errors: an unknown tool, or params that do not fit `tools/call`."""
    before = daemon.counts()
    assert error_of(raw.call(11, "nope", {}), 11, -32602) == "Unknown tool: nope"
    for request_id, params in enumerate(
        ({"name": "memory_store", "arguments": ["content"]}, {"arguments": {}}), start=12
    ):
        raw.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})
        error_of(raw.answer(), request_id, -32602)
    raw.send({"jsonrpc": "2.0", "id": 14, "method": "resources/read",
              "params": {"uri": "memory://memories/no-such-id"}})  # fmt: skip
    assert "not found" in error_of(raw.answer(), 14, -32602)
    assert daemon.counts() == before


def test_streamable_http_answers_a_deep_message_too(daemon: Daemon) -> None:
    """The daemon's `/mcp`: the SDK's parser refuses it as a parse error, with an answer."""
    headers = {"accept": "application/json, text/event-stream"}
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "memory_search", "arguments": {"query": "x", "m": nested(200)}},
    }
    reply = httpx.post(f"{daemon.url}/mcp", json=message, headers=headers, timeout=20)
    assert reply.status_code == 400
    assert reply.json()["error"]["code"] == -32700


@pytest.mark.parametrize(
    ("tool", "arguments", "name"),
    [
        ("memory_store", {"content": "a\u0000b"}, "content"),
        ("memory_search", {"query": "x", "tags": ["ok", "\u001b[2J"]}, "tags.1"),
        ("memory_get", {"id": "a\tb"}, "id"),
        ("knowledge_list_entities", {"query": "\u0007"}, "q"),
    ],
)
def test_control_characters_are_refused_by_name(
    raw: RawClient, daemon: Daemon, tool: str, arguments: dict[str, Any], name: str
) -> None:
    before = daemon.counts()
    answer = raw.call(20, tool, arguments)
    body = json.loads(answer["result"]["content"][0]["text"])
    assert answer["result"]["isError"] is True and body["code"] == "invalid_request", body
    assert body["error"].startswith(f"invalid request: {name}: must not contain control")
    assert daemon.counts() == before
