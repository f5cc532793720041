"""The stdin guard of `signet-mcp`: ids read from cut-off lines, depth, and line splitting."""

from __future__ import annotations

import io
import json
from typing import Any

import anyio
import mcp_types as types
import pytest

from signet_desktop.api.mcp import stdin_guard
from signet_desktop.api.mcp.stdin_guard import (
    GuardedStdin,
    Refusal,
    check_line,
    depth_of,
    leading_id,
)


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ('{"jsonrpc": "2.0", "id": 7, "params": {"big": "xxxx', 7),
        ('  {"id":"abc","method":"x"', "abc"),
        ('{"params": {"id": 3, "rest": "cut', None),  # a nested id is not the request's
        ('{"jsonrpc":"2.0","method":"m","params":[1,2],"id":12}', 12),
        ("[1, 2", None),
    ],
)
def test_leading_id(prefix: str, expected: Any) -> None:
    assert leading_id(prefix) == expected


def test_depth_of() -> None:
    assert depth_of(1) == 0
    assert depth_of({"a": [1, {"b": []}]}) == 4


def test_check_line_passes_messages_and_drops_bad_notifications() -> None:
    assert check_line('{"jsonrpc":"2.0","id":1,"method":"ping"}') is True
    assert check_line('{"method":"notifications/x","params":5}') is False
    with pytest.raises(Refusal) as refused:
        check_line('{"jsonrpc":"1.0","id":true,"method":"ping"}')
    assert refused.value.request_id is None  # a boolean is no request id


def _lines(data: bytes, limit: int, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    monkeypatch.setattr(stdin_guard, "MAX_MESSAGE_BYTES", limit)
    monkeypatch.setattr(stdin_guard, "READ_CHUNK", 7)  # lines split across reads
    replies: list[types.JSONRPCError] = []
    guard = GuardedStdin(io.BytesIO(data))

    async def reply(error: types.JSONRPCError) -> None:
        replies.append(error)

    async def read() -> list[Any]:
        guard.attach(reply)
        return [json.loads(line) async for line in guard]

    passed = anyio.run(read)
    return [*passed, *(r.model_dump() for r in replies)]


def test_an_oversize_line_is_refused_and_the_next_one_passes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    big = b'{"jsonrpc":"2.0","id":4,"method":"ping","params":{"x":"' + b"y" * 200 + b'"}}'
    ok = b'{"jsonrpc":"2.0","id":5,"method":"ping"}'
    out = _lines(big + b"\n\n" + ok + b"\n" + big, 100, monkeypatch)
    assert out[0]["id"] == 5
    assert [(e["id"], e["error"]["code"]) for e in out[1:]] == [(4, -32600), (4, -32600)]
