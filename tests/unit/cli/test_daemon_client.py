"""Daemon URL resolution and DaemonClient's mapping of transport and HTTP failures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from cli_fakes import FakeDaemon

from signet_desktop.client.daemon import (
    DaemonClient,
    DaemonResponseError,
    DaemonUnreachable,
    DaemonUrlError,
    resolve_daemon_url,
    start_command,
)


def test_default_url_is_loopback_3850() -> None:
    assert resolve_daemon_url(None, {}) == "http://127.0.0.1:3850"


def test_flag_beats_env_url_beats_host_port() -> None:
    env = {
        "SIGNET_DAEMON_URL": "http://10.0.0.5:9000/",
        "SIGNET_HOST": "localhost",
        "SIGNET_PORT": "4000",
    }
    assert resolve_daemon_url("http://127.0.0.1:1234/", env) == "http://127.0.0.1:1234"
    assert resolve_daemon_url(None, env) == "http://10.0.0.5:9000"
    del env["SIGNET_DAEMON_URL"]
    assert resolve_daemon_url(None, env) == "http://localhost:4000"


def test_blank_env_values_fall_through() -> None:
    env = {"SIGNET_DAEMON_URL": "  ", "SIGNET_HOST": "", "SIGNET_PORT": " "}
    assert resolve_daemon_url(None, env) == "http://127.0.0.1:3850"


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("::1", "http://[::1]:3850"),
        ("0.0.0.0", "http://127.0.0.1:3850"),
        ("::", "http://[::1]:3850"),
        ("[::1]", "http://[::1]:3850"),
    ],
)
def test_host_forms(host: str, expected: str) -> None:
    assert resolve_daemon_url(None, {"SIGNET_HOST": host}) == expected


@pytest.mark.parametrize("port", ["abc", "0", "70000", "-1", "38.5"])
def test_bad_port_is_a_clear_error(port: str) -> None:
    with pytest.raises(DaemonUrlError, match="SIGNET_PORT"):
        resolve_daemon_url(None, {"SIGNET_PORT": port})


@pytest.mark.parametrize("url", ["localhost:3850", "ftp://x", "http://", "http://h:99999"])
def test_bad_urls_are_refused(url: str) -> None:
    with pytest.raises(DaemonUrlError):
        resolve_daemon_url(url, {})


def test_sends_agent_token_and_request_id(fake_daemon: FakeDaemon) -> None:
    fake_daemon.reply("POST", "/api/memory/recall", 200, {"results": []})
    with DaemonClient(fake_daemon.url, agent_id="agent-a", token="s3cret") as client:
        assert client.post("/api/memory/recall", {"query": "x"}) == {"results": []}
    (request,) = fake_daemon.requests
    assert request.headers["x-signet-agent-id"] == "agent-a"
    assert request.headers["authorization"] == "Bearer s3cret"
    assert len(request.headers["x-signet-request-id"]) == 32
    assert request.headers["content-type"] == "application/json"
    assert request.body == {"query": "x"}


def test_no_agent_or_token_headers_unless_given(fake_daemon: FakeDaemon) -> None:
    fake_daemon.reply("GET", "/health", 200, {"status": "ok"})
    with DaemonClient(fake_daemon.url) as client:
        client.get("/health")
    headers = fake_daemon.requests[0].headers
    assert "x-signet-agent-id" not in headers
    assert "authorization" not in headers


def test_error_json_becomes_response_error(fake_daemon: FakeDaemon) -> None:
    fake_daemon.reply(
        "DELETE",
        "/api/memory/m1",
        409,
        {"error": "memory is pinned", "code": "pinned_requires_force"},
    )
    with DaemonClient(fake_daemon.url) as client, pytest.raises(DaemonResponseError) as info:
        client.delete("/api/memory/m1", {"reason": "x"})
    error = info.value
    assert (error.status, error.message, error.code) == (
        409,
        "memory is pinned",
        "pinned_requires_force",
    )
    assert error.is_input_error
    assert error.user_message() == "error: memory is pinned [pinned_requires_force]"


def test_non_json_error_keeps_status_and_first_line(fake_daemon: FakeDaemon) -> None:
    fake_daemon.reply("GET", "/health", 502, "Bad Gateway\nmore")
    with DaemonClient(fake_daemon.url) as client, pytest.raises(DaemonResponseError) as info:
        client.get("/health")
    assert info.value.status == 502
    assert info.value.message == "daemon answered HTTP 502: Bad Gateway"
    assert not info.value.is_input_error


def test_non_json_success_is_an_error(fake_daemon: FakeDaemon) -> None:
    fake_daemon.reply("GET", "/health", 200, "<html>hello</html>")
    with (
        DaemonClient(fake_daemon.url) as client,
        pytest.raises(DaemonResponseError, match="non-JSON"),
    ):
        client.get("/health")


@pytest.mark.parametrize(
    ("status", "input_error"), [(400, True), (404, True), (429, False), (503, False)]
)
def test_input_error_classification(status: int, input_error: bool) -> None:
    assert DaemonResponseError(status, "x").is_input_error is input_error


def test_401_message_hints_at_token() -> None:
    assert "SIGNET_TOKEN" in DaemonResponseError(401, "unauthorized").user_message()


def test_500_message_carries_request_id() -> None:
    text = DaemonResponseError(500, "internal error", request_id="abc123").user_message()
    assert text == "error: internal error (request id abc123)"


def test_connection_refused_is_unreachable(closed_url: str) -> None:
    with DaemonClient(closed_url) as client, pytest.raises(DaemonUnreachable) as info:
        client.get("/health")
    assert info.value.url == closed_url
    assert not info.value.timed_out
    message = info.value.user_message()
    assert closed_url in message and "signet-desktop --headless" in message


def test_timeout_is_unreachable_with_timed_out() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    client = DaemonClient("http://127.0.0.1:1", transport=httpx.MockTransport(slow))
    with client, pytest.raises(DaemonUnreachable) as info:
        client.get("/health")
    assert info.value.timed_out
    assert "did not answer in time" in info.value.user_message()


def test_start_command_from_a_checkout_says_uv_run(tmp_path: Path, monkeypatch: Any) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'signet-desktop'\n")
    monkeypatch.chdir(tmp_path)
    assert start_command(str(tmp_path / ".venv")) == "uv run signet-desktop --headless"
    monkeypatch.chdir(tmp_path.parent)
    assert start_command(str(tmp_path / ".venv")) == (
        f"cd {tmp_path} && uv run signet-desktop --headless"
    )


def test_start_command_from_an_install(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    assert start_command(str(venv), on_path="/usr/bin/signet-desktop") == (
        "signet-desktop --headless"
    )
    assert start_command(str(venv), on_path="") == f"{venv}/bin/signet-desktop --headless"
