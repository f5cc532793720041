"""The rate limiter's windows and which routes count against which limit."""

from __future__ import annotations

import pytest

from signet_desktop.api.http.ratelimit import (
    MAX_WINDOWS,
    RateLimit,
    RateLimiter,
    retry_after,
    route_rules,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_window_allows_max_then_refuses_until_it_resets() -> None:
    clock = Clock()
    limiter = RateLimiter({"forget": RateLimit(60, 2)}, clock)
    assert limiter.acquire(("forget",), "a") is None
    clock.now += 10
    assert limiter.acquire(("forget",), "a") is None
    clock.now += 5
    assert limiter.acquire(("forget",), "a") == ("forget", 45.0)
    assert limiter.acquire(("forget",), "b") is None  # per actor
    clock.now += 45
    assert limiter.acquire(("forget",), "a") is None


def test_a_refused_call_counts_against_no_rule() -> None:
    clock = Clock()
    limiter = RateLimiter({"forget": RateLimit(60, 5), "forceDelete": RateLimit(60, 1)}, clock)
    assert limiter.acquire(("forget", "forceDelete"), "a") is None
    for _ in range(3):
        assert limiter.acquire(("forget", "forceDelete"), "a") == ("forceDelete", 60.0)
    for _ in range(4):  # 1 forced + 4 plain = the 5 forgets allowed
        assert limiter.acquire(("forget",), "a") is None
    assert limiter.acquire(("forget",), "a") is not None


def test_zero_max_refuses_everything_and_unknown_rules_are_free() -> None:
    limiter = RateLimiter({"admin": RateLimit(60, 0)}, Clock())
    assert limiter.acquire(("admin",), "a") == ("admin", 60.0)
    assert limiter.acquire(("repair",), "a") is None


def test_windows_stay_bounded_when_actors_rotate() -> None:
    clock = Clock()
    limiter = RateLimiter({"forget": RateLimit(60, 1)}, clock)
    for index in range(MAX_WINDOWS * 2):
        assert limiter.acquire(("forget",), f"actor-{index}") is None
    assert len(limiter._windows) <= MAX_WINDOWS


@pytest.mark.parametrize(
    ("method", "path", "query", "body", "rules"),
    [("DELETE", "/api/memory/m1", b"", b"", ("forget",)),
     ("DELETE", "/api/memory/m1", b"force=true", b"", ("forget", "forceDelete")),
     ("DELETE", "/api/memory/m1", b"", b'{"force": true}', ("forget", "forceDelete")),
     ("DELETE", "/api/memory/m1", b"", b"{not json", ("forget",)),
     ("PATCH", "/api/memory/m1", b"", b"{}", ("modify",)),
     ("POST", "/api/memory/modify", b"", b"{}", ("modify",)),
     ("POST", "/api/memory/forget", b"", b"{}", ("batchForget",)),
     ("POST", "/api/pipeline/pause", b"", b"", ("admin",)),
     ("POST", "/api/pipeline/resume", b"", b"", ("admin",)),
     ("POST", "/api/repair/resync-vec", b"", b"{}", ("repair",)),
     ("POST", "/api/embeddings/backfill", b"", b"{}", ("repair",)),
     ("GET", "/api/memory/m1", b"", b"", ()),
     ("POST", "/api/memory/remember", b"", b"{}", ()),
     ("POST", "/api/memory/m1/recover", b"", b"{}", ()),
     ("GET", "/api/pipeline/status", b"", b"", ()),
     # MCP tool calls behind the same gate count like the routes they mirror
     ("POST", "/mcp", b"", b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
      b'"params":{"name":"memory_forget","arguments":{"id":"m1"}}}', ("forget",)),
     ("POST", "/mcp/", b"", b'[{"method":"tools/call","params":{"name":"memory_modify"}},'
      b'{"method":"tools/call","params":{"name":"memory_forget"}}]', ("modify", "forget")),
     ("POST", "/mcp", b"", b'{"method":"tools/call","params":{"name":"memory_search"}}', ()),
     ("POST", "/mcp", b"", b'{"method":"tools/list"}', ()),
     ("POST", "/mcp", b"", b"{not json", ())],
)  # fmt: skip
def test_route_rules(
    method: str, path: str, query: bytes, body: bytes, rules: tuple[str, ...]
) -> None:
    assert route_rules(method, path, query, body) == rules


def test_retry_after_is_whole_seconds_at_least_one() -> None:
    assert retry_after(0.01) == "1"
    assert retry_after(44.2) == "45"
