"""`signet-mcp`'s stdin, checked line by line before the SDK reads it: every bad line answered.

The SDK's stdio reader hands a line it cannot parse to the server as an exception, which is
logged and never answered, so a client waits forever (a message nested ~200 deep did this).
Here each line is refused with a JSON-RPC error instead: larger than MAX_MESSAGE_BYTES or
nested deeper than MAX_DEPTH is -32600 (invalid request), not JSON is -32700 (parse error),
JSON that is no JSON-RPC message is -32600. The error carries the request's id when it can
be read (for an oversize line: from its first bytes), else null. Notifications get no answer,
as JSON-RPC says. Lines that pass are given to the SDK unchanged.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from pydantic import ValidationError

MAX_MESSAGE_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
READ_CHUNK = 65_536
ID_SCAN_BYTES = 65_536  # of an oversize line, the part searched for its id

Reply = Callable[[types.JSONRPCError], Awaitable[None]]
_DECODER = json.JSONDecoder()


class Refusal(Exception):
    """A line answered with a JSON-RPC error instead of being passed on."""

    def __init__(self, code: int, message: str, request_id: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id if _is_id(request_id) else None

    def error(self) -> types.JSONRPCError:
        data = types.ErrorData(code=self.code, message=self.message)
        return types.JSONRPCError(jsonrpc="2.0", id=self.request_id, error=data)


def _is_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def depth_of(value: Any) -> int:
    """How deep arrays and objects nest in a JSON value (a scalar is 0)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
        else:
            continue
        deepest = max(deepest, depth + 1)
    return deepest


def leading_id(prefix: str) -> Any:
    """The top-level `id` of a JSON object read from its start (None once it is cut off)."""
    text = prefix.lstrip()
    if not text.startswith("{"):
        return None
    at = 1
    try:
        while True:
            at = _skip_space(text, at)
            key, at = _DECODER.raw_decode(text, at)
            at = _skip_space(text, at)
            if text[at] != ":":
                return None
            value, at = _DECODER.raw_decode(text, _skip_space(text, at + 1))
            if key == "id":
                return value
            at = _skip_space(text, at)
            if text[at] != ",":
                return None
            at += 1
    except (ValueError, IndexError, RecursionError):
        return None


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def check_line(line: str) -> bool:
    """True if `line` is a JSON-RPC message the SDK can read; raises Refusal if not.

    (False: a bad notification, dropped without an answer.)
    """
    try:
        message = json.loads(line)
    except RecursionError:
        raise Refusal(types.INVALID_REQUEST, _too_deep(), leading_id(line)) from None
    except ValueError as exc:
        raise Refusal(types.PARSE_ERROR, f"parse error: {exc}") from None
    request_id = message.get("id") if isinstance(message, dict) else None
    if depth_of(message) > MAX_DEPTH:
        raise Refusal(types.INVALID_REQUEST, _too_deep(), request_id)
    try:
        types.jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError:
        if isinstance(message, dict) and "id" not in message and "method" in message:
            return False  # a malformed notification: nobody waits for an answer
        raise Refusal(
            types.INVALID_REQUEST, "invalid request: not a JSON-RPC 2.0 message", request_id
        ) from None
    return True


def _too_deep() -> str:
    return f"invalid request: message is nested deeper than {MAX_DEPTH} levels"


def _too_large() -> str:
    return f"invalid request: message is larger than {MAX_MESSAGE_BYTES:,} bytes"


class GuardedStdin:
    """An async iterator of checked lines over a binary stream, for `stdio_server(stdin=...)`.

    Refusals are answered through `attach`'s reply function, set once the server's write
    stream exists; lines are read only after that.
    """

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = anyio.wrap_file(raw)
        self._reply: Reply | None = None
        self._ready = anyio.Event()

    def attach(self, reply: Reply) -> None:
        self._reply = reply
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        await self._ready.wait()
        async for line in self._raw_lines():
            if isinstance(line, Refusal):
                await self._answer(line)
                continue
            if not line.strip():
                continue
            try:
                passed = check_line(line)
            except Refusal as refusal:
                await self._answer(refusal)
                continue
            if passed:
                yield line

    async def _answer(self, refusal: Refusal) -> None:
        assert self._reply is not None
        await self._reply(refusal.error())

    async def _raw_lines(self) -> AsyncIterator[str | Refusal]:
        """Decoded lines; an oversize one becomes a Refusal, its rest read and dropped."""
        buffer, dropping, head = bytearray(), False, b""
        while chunk := await self._raw.read1(READ_CHUNK):
            buffer += chunk
            while (end := buffer.find(b"\n")) >= 0:
                line, buffer = bytes(buffer[:end]), buffer[end + 1 :]
                if dropping:
                    dropping = False
                    yield Refusal(types.INVALID_REQUEST, _too_large(), _head_id(head))
                elif len(line) > MAX_MESSAGE_BYTES:
                    yield Refusal(types.INVALID_REQUEST, _too_large(), _head_id(line))
                else:
                    yield line.decode("utf-8", errors="replace")
            if not dropping and len(buffer) > MAX_MESSAGE_BYTES:
                dropping, head = True, bytes(buffer[:ID_SCAN_BYTES])
            if dropping:
                buffer.clear()
        if dropping:  # the last line, cut off by the end of input
            yield Refusal(types.INVALID_REQUEST, _too_large(), _head_id(head))
        elif buffer:
            yield buffer.decode("utf-8", errors="replace")


def _head_id(head: bytes) -> Any:
    return leading_id(head[:ID_SCAN_BYTES].decode("utf-8", errors="replace"))
