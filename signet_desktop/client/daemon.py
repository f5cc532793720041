"""DaemonClient: the HTTP transport to the running daemon, and how a client finds the daemon.

Used by the CLI (which never opens the database: every command is one or two JSON calls) and,
later, by harness hooks and the MCP stdio shim; its import path stays small (httpx only). This
module owns the base-URL resolution (`--url` > `SIGNET_DAEMON_URL` > `SIGNET_HOST`/`SIGNET_PORT`)
and turns transport failures and `{"error": ...}` answers into two exception types that the
dispatcher maps to exit codes.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from signet_desktop.domain.address import DEFAULT_HOST, DEFAULT_PORT

DEFAULT_TIMEOUT_S = 10.0
POLL_S = 0.25  # how often `poll` asks again about work the daemon does in the background


# A daemon bound to the wildcard address is reached on loopback.
_WILDCARD_HOSTS = {"0.0.0.0": "127.0.0.1", "::": "::1", "[::]": "::1"}


class DaemonUrlError(ValueError):
    """The daemon address from flags or environment is malformed."""


class DaemonUnreachable(Exception):
    """No usable answer from the daemon: connection refused, DNS failure or timeout."""

    def __init__(self, url: str, reason: str, *, timed_out: bool = False) -> None:
        super().__init__(reason)
        self.url = url
        self.reason = reason
        self.timed_out = timed_out

    def user_message(self) -> str:
        """One line a person can act on."""
        if self.timed_out:
            return f"Signet daemon at {self.url} did not answer in time ({self.reason})"
        return f"Signet daemon is not running at {self.url} — start it with `{start_command()}`"


class DaemonResponseError(Exception):
    """The daemon answered with a non-2xx status (its `{"error"}` message is kept)."""

    def __init__(
        self, status: int, message: str, *, code: str | None = None, request_id: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.request_id = request_id

    @property
    def is_input_error(self) -> bool:
        """A 4xx other than rate limiting: the request as given was refused."""
        return 400 <= self.status < 500 and self.status != 429

    def user_message(self) -> str:
        """`error: <message>` plus a hint for auth failures and the request id for 5xx."""
        text = f"error: {self.message}"
        if self.code and self.code not in self.message:
            text += f" [{self.code}]"
        if self.status == 401:
            text += " (set SIGNET_TOKEN to the daemon's auth.token)"
        if self.status >= 500 and self.request_id:
            text += f" (request id {self.request_id})"
        return text


def start_command(prefix: str | None = None, on_path: str | None = None) -> str:
    """The command that starts the daemon from where this client runs.

    From a source checkout (this interpreter is the checkout's `.venv`), `signet-desktop` is
    not on the user's PATH outside `uv run`, so the command says `uv run` and the folder.
    """
    venv = Path(prefix or sys.prefix)
    checkout = venv.parent
    if venv.name == ".venv" and (checkout / "pyproject.toml").is_file():
        here = Path.cwd()
        where = "" if here == checkout else f"cd {checkout} && "
        return f"{where}uv run signet-desktop --headless"
    found = on_path if on_path is not None else shutil.which("signet-desktop")
    return "signet-desktop --headless" if found else f"{venv / 'bin' / 'signet-desktop'} --headless"


def _format_host(host: str) -> str:
    host = _WILDCARD_HOSTS.get(host, host)
    if ":" in host and not host.startswith("["):
        return f"[{host}]"
    return host


def _check_url(url: str, source: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise DaemonUrlError(
            f"{source} must be an http(s) URL like http://127.0.0.1:3850, got {url!r}"
        )
    try:
        _ = parts.port
    except ValueError as exc:
        raise DaemonUrlError(f"{source} has an invalid port: {url!r}") from exc
    return url.rstrip("/")


def resolve_daemon_url(cli_url: str | None, env: Mapping[str, str]) -> str:
    """Base URL: `--url`, else SIGNET_DAEMON_URL, else http://SIGNET_HOST:SIGNET_PORT."""
    if cli_url:
        return _check_url(cli_url.strip(), "--url")
    env_url = env.get("SIGNET_DAEMON_URL", "").strip()
    if env_url:
        return _check_url(env_url, "SIGNET_DAEMON_URL")
    host = env.get("SIGNET_HOST", "").strip() or DEFAULT_HOST
    raw_port = env.get("SIGNET_PORT", "").strip()
    port = DEFAULT_PORT
    if raw_port:
        if not raw_port.isdigit() or not 1 <= int(raw_port) <= 65535:
            raise DaemonUrlError(f"SIGNET_PORT must be a port number (1-65535), got {raw_port!r}")
        port = int(raw_port)
    return f"http://{_format_host(host)}:{port}"


def _error_from_response(response: httpx.Response) -> DaemonResponseError:
    request_id = response.headers.get("x-signet-request-id")
    message = f"daemon answered HTTP {response.status_code}"
    code: str | None = None
    try:
        body = response.json()
    except ValueError:
        snippet = response.text.strip().splitlines()[0][:200] if response.text.strip() else ""
        if snippet:
            message += f": {snippet}"
    else:
        if isinstance(body, dict) and isinstance(body.get("error"), str):
            message = body["error"]
            code = body.get("code") if isinstance(body.get("code"), str) else None
            request_id = body.get("requestId", request_id)
    return DaemonResponseError(response.status_code, message, code=code, request_id=request_id)


class DaemonClient:
    """JSON over HTTP to the daemon. Raises DaemonUnreachable or DaemonResponseError."""

    def __init__(
        self,
        base_url: str,
        *,
        agent_id: str | None = None,
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        transport: httpx.BaseTransport | None = None,
        user_agent: str = "signet-cli",
    ) -> None:
        self.base_url = base_url
        headers = {"accept": "application/json", "user-agent": user_agent}
        if agent_id:
            headers["x-signet-agent-id"] = agent_id
        if token:
            headers["authorization"] = f"Bearer {token}"
        # trust_env=False: a proxy from HTTP_PROXY must never sit between us and loopback.
        self._http = httpx.Client(
            base_url=base_url,
            headers=headers,
            timeout=timeout,
            trust_env=False,
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def add_headers(self, headers: Mapping[str, str]) -> None:
        """Send `headers` with every later request (the MCP shim names its actor this way)."""
        self._http.headers.update(headers)

    def __enter__(self) -> DaemonClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        """GET `path` and return the decoded JSON body."""
        return self.request("GET", path, params=params)

    def poll(self, path: str) -> Iterator[tuple[Mapping[str, Any], float]]:
        """GET `path` every POLL_S, forever: each answer with the seconds since polling began.

        The caller stops iterating once an answer says the work ended."""
        started = time.monotonic()
        while True:
            answer: Mapping[str, Any] = self.get(path)
            yield answer, time.monotonic() - started
            time.sleep(POLL_S)

    def post(self, path: str, body: Mapping[str, Any]) -> Any:
        """POST a JSON body and return the decoded JSON answer."""
        return self.request("POST", path, body=body)

    def delete(self, path: str, body: Mapping[str, Any]) -> Any:
        """DELETE with a JSON body (Signet's forget takes reason/force/if_version there)."""
        return self.request("DELETE", path, body=body)

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> Any:
        """One call; every failure becomes DaemonUnreachable or DaemonResponseError."""
        headers = {"x-signet-request-id": uuid.uuid4().hex}
        content = None if body is None else json.dumps(body).encode("utf-8")
        if content is not None:
            headers["content-type"] = "application/json"
        try:
            response = self._http.request(
                method, path, params=dict(params or {}), content=content, headers=headers
            )
        except httpx.InvalidURL as exc:  # e.g. a query string past httpx's 65,536 characters
            raise DaemonResponseError(414, f"request not sent: {exc}", code="uri_too_long") from exc
        except httpx.TimeoutException as exc:
            raise DaemonUnreachable(self.base_url, _timeout_reason(exc), timed_out=True) from exc
        except httpx.TransportError as exc:
            raise DaemonUnreachable(self.base_url, str(exc) or type(exc).__name__) from exc
        if response.status_code >= 400:
            raise _error_from_response(response)
        try:
            return response.json()
        except ValueError as exc:
            raise DaemonResponseError(
                response.status_code, f"daemon sent a non-JSON answer to {method} {path}"
            ) from exc


def _timeout_reason(exc: httpx.TimeoutException) -> str:
    if isinstance(exc, httpx.ConnectTimeout):
        return "connect timed out"
    return "timed out waiting for the answer"
