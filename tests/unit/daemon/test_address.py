"""Listen address: flag > environment > default, loopback detection, and the bind errors."""

from __future__ import annotations

import socket

import pytest

from signet_desktop.daemon.address import (
    AddressError,
    ListenAddress,
    bind,
    http_url,
    is_loopback,
    resolve_address,
)


def test_defaults_are_signets() -> None:
    assert resolve_address(None, None, {}) == ListenAddress("127.0.0.1", 3850)


def test_environment_then_flags_win() -> None:
    env = {"SIGNET_HOST": "localhost", "SIGNET_PORT": " 4000 "}
    assert resolve_address(None, None, env) == ListenAddress("localhost", 4000)
    assert resolve_address("::1", 0, env) == ListenAddress("::1", 0)
    both = {"SIGNET_HOST": "127.0.0.1", "SIGNET_BIND": "0.0.0.0"}
    assert resolve_address(None, None, both).host == "0.0.0.0"
    assert resolve_address("  ", None, {"SIGNET_HOST": " "}).host == "127.0.0.1"


@pytest.mark.parametrize("raw", ["abc", "70000", "-1", "3850.5"])
def test_bad_signet_port_names_the_variable(raw: str) -> None:
    with pytest.raises(AddressError, match="SIGNET_PORT") as caught:
        resolve_address(None, None, {"SIGNET_PORT": raw})
    assert caught.value.usage


def test_out_of_range_flag_is_refused() -> None:
    with pytest.raises(AddressError, match="--port"):
        resolve_address(None, 65536, {})


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", True),
        ("127.3.2.1", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("example.com", False),
    ],
)
def test_is_loopback(host: str, expected: bool) -> None:
    assert is_loopback(host) is expected


def test_http_url_brackets_ipv6() -> None:
    assert http_url("127.0.0.1", 3850) == "http://127.0.0.1:3850"
    assert http_url("::1", 9) == "http://[::1]:9"
    assert http_url("[::1]", 9) == "http://[::1]:9"


def test_port_zero_binds_a_free_port_that_accepts() -> None:
    sock = bind(ListenAddress("127.0.0.1", 0))
    try:
        port = sock.getsockname()[1]
        assert port > 0
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
    finally:
        sock.close()


def test_busy_port_is_a_conflict_not_a_usage_error() -> None:
    first = bind(ListenAddress("127.0.0.1", 0))
    try:
        port = first.getsockname()[1]
        with pytest.raises(AddressError, match="already in use") as caught:
            bind(ListenAddress("127.0.0.1", port))
        assert not caught.value.usage
    finally:
        first.close()


def test_unresolvable_host_is_a_usage_error() -> None:
    with pytest.raises(AddressError) as caught:
        bind(ListenAddress("no-such-host.invalid", 0))
    assert caught.value.usage
