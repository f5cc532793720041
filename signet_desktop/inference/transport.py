"""One JSON POST to a chat API, with errors mapped to `ProviderError`s and secrets kept out.

The API key only travels in a header; messages name the provider and its URL without
credentials or query string, and any echo of the key in a server's error text is masked.
A body that is an SSE stream, not JSON, or not a JSON object is a `ProviderBadResponse`.
"""

from __future__ import annotations

import json
import threading
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import SecretStr

from signet_desktop.inference.errors import (
    ProviderBadResponse,
    ProviderError,
    ProviderRateLimited,
    ProviderRejected,
    ProviderTimeout,
    ProviderUnavailable,
)
from signet_desktop.inference.retry import RetryPolicy, call_with_retries

if TYPE_CHECKING:  # httpx (~0.15 s with its CLI's imports) loads at the first request
    import httpx

_SNIPPET = 200
MAX_BODY_BYTES = 32 * 2**20  # far above any chat answer; a runaway body is refused


@dataclass(frozen=True, slots=True)
class _Answer:
    """A read HTTP answer: status, headers and the whole (decoded) body."""

    status: int
    headers: httpx.Headers
    body: bytes


def redact_url(url: str) -> str:
    """`url` without user:password@ and without the query string (either may hold secrets)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def is_loopback(url: str) -> bool:
    """True for URLs on localhost, 127.0.0.0/8 or ::1 (a model server on this machine)."""
    host = (urlsplit(url).hostname or "").lower()
    return host == "localhost" or host.startswith("127.") or host == "::1"


class JsonTransport:
    """POSTs JSON to one chat endpoint; thread-safe, the httpx client is made lazily."""

    def __init__(
        self,
        label: str,
        url: str,
        *,
        headers: Mapping[str, str],
        secret: SecretStr | None,
        retry: RetryPolicy,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{label}: base URL must be an http(s) URL, not {redact_url(url)!r}")
        self.label = label
        self.url = url
        self.safe_url = redact_url(url)
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        self._headers.update(headers)
        self._secret = secret
        self._retry = retry
        self._client: httpx.Client | None = None
        self._closer: weakref.finalize[Any, Any] | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"JsonTransport({self.label!r}, {self.safe_url!r})"

    def post(self, payload: dict[str, Any], deadline_s: float) -> dict[str, Any]:
        """POST with retries inside `deadline_s`; the decoded JSON object, or a ProviderError."""
        return call_with_retries(
            lambda timeout: self._attempt(payload, timeout),
            policy=self._retry,
            deadline_s=deadline_s,
            what=self.where,
        )

    @property
    def where(self) -> str:
        return f"{self.label} at {self.safe_url}"

    def close(self) -> None:
        """Close the connection pool (a later post() opens a new one)."""
        with self._lock:
            if self._closer is not None:
                self._closer()
            self._client = self._closer = None

    def _attempt(self, payload: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        answer = self._exchange(payload, timeout_s)
        status = answer.status
        if status == 429:
            raise ProviderRateLimited(
                f"{self.where} is rate limiting requests ({self._status_text(answer)})",
                _retry_after(answer.headers),
            )
        if status == 408 or status >= 500:
            raise ProviderUnavailable(f"{self.where} failed: {self._status_text(answer)}")
        if status >= 400:
            raise ProviderRejected(
                f"{self.where} rejected the request: {self._status_text(answer)}", status
            )
        if status >= 300:
            location = redact_url(answer.headers.get("location", "")) or "elsewhere"
            raise ProviderRejected(
                f"{self.where} redirects (HTTP {status}) to {location}; "
                "set the endpoint to the final URL",
                status,
            )
        return self._decode(answer)

    def _exchange(self, payload: dict[str, Any], timeout_s: float) -> _Answer:
        """One request; the body is read against the whole `timeout_s` and `MAX_BODY_BYTES`
        (httpx's own timeout is per read, so a server dripping bytes would outlast it)."""
        import httpx

        client = self._get_client()
        end = time.monotonic() + timeout_s
        try:
            with client.stream(
                "POST", self.url, json=payload, timeout=httpx.Timeout(timeout_s)
            ) as response:
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > MAX_BODY_BYTES:
                        raise ProviderBadResponse(
                            f"{self.where} sent more than {MAX_BODY_BYTES // 2**20} MiB"
                        )
                    if time.monotonic() > end:
                        raise ProviderTimeout(
                            f"{self.where} did not finish its answer within {timeout_s:.1f}s"
                        )
                return _Answer(response.status_code, response.headers, bytes(body))
        except httpx.TimeoutException:
            raise ProviderTimeout(f"{self.where} did not answer within {timeout_s:.1f}s") from None
        except httpx.TransportError as exc:
            raise ProviderUnavailable(
                f"{self.where} could not be reached ({type(exc).__name__})"
            ) from None
        except httpx.HTTPError as exc:  # e.g. a body that fails to decode
            raise ProviderBadResponse(
                f"{self.where} sent an unreadable answer ({type(exc).__name__})"
            ) from None

    def _decode(self, answer: _Answer) -> dict[str, Any]:
        content_type = answer.headers.get("content-type", "").lower()
        head = answer.body[:64].lstrip()
        if "event-stream" in content_type or head.startswith((b"data:", b"event:")):
            raise ProviderBadResponse(
                f"{self.where} answered with an event stream where one JSON body was expected "
                "(does the server ignore stream: false?)"
            )
        try:
            body = json.loads(answer.body)
        except ValueError:
            raise ProviderBadResponse(f"{self.where} returned a body that is not JSON") from None
        if not isinstance(body, dict):
            raise ProviderBadResponse(f"{self.where} returned JSON that is not an object")
        return body

    def bad(self, detail: str) -> ProviderError:
        """A ProviderBadResponse naming this endpoint."""
        return ProviderBadResponse(f"{self.where} returned an unexpected response: {detail}")

    def _status_text(self, answer: _Answer) -> str:
        text = f"HTTP {answer.status}"
        detail = _error_detail(answer.body)
        if detail:
            text += f": {detail}"
        return self.mask(text)

    def mask(self, text: str) -> str:
        """`text` with the API key (if it occurs) replaced by ***."""
        if self._secret is not None:
            value = self._secret.get_secret_value()
            if value:
                text = text.replace(value, "***")
        return text

    def _get_client(self) -> httpx.Client:
        import httpx

        with self._lock:
            if self._client is None:
                # Proxy variables apply to hosted APIs only, never to a local model server.
                client = httpx.Client(headers=self._headers, trust_env=not is_loopback(self.url))
                # A provider dropped without close() still closes its sockets.
                self._closer = weakref.finalize(self, client.close)
                self._client = client
            return self._client


def _retry_after(headers: httpx.Headers) -> float | None:
    """Seconds from a Retry-After header given in seconds (HTTP dates are ignored)."""
    value = headers.get("Retry-After", "").strip()
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def _error_detail(raw: bytes) -> str:
    """The server's error message from OpenAI/Anthropic/Ollama-style bodies, or raw text."""
    try:
        body = json.loads(raw)
    except ValueError:
        return " ".join(raw[: _SNIPPET * 4].decode("utf-8", "replace").split())[:_SNIPPET]
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        error = error.get("message")
    return " ".join(str(error if error is not None else body).split())[:_SNIPPET]
