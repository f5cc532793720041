"""One JSON POST to a chat API, with errors mapped to `ProviderError`s and secrets kept out.

The API key only travels in a header; messages name the provider and its URL without
credentials or query string, and any echo of the key in a server's error text is masked.
A body that is an SSE stream, not JSON, or not a JSON object is a `ProviderBadResponse`.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
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

_SNIPPET = 200


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
        client = self._get_client()
        try:
            response = client.post(self.url, json=payload, timeout=httpx.Timeout(timeout_s))
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
        status = response.status_code
        if status == 429:
            raise ProviderRateLimited(
                f"{self.where} is rate limiting requests ({self._status_text(response)})",
                _retry_after(response),
            )
        if status == 408 or status >= 500:
            raise ProviderUnavailable(f"{self.where} failed: {self._status_text(response)}")
        if status >= 400:
            raise ProviderRejected(
                f"{self.where} rejected the request: {self._status_text(response)}", status
            )
        if status >= 300:
            location = redact_url(response.headers.get("location", "")) or "elsewhere"
            raise ProviderRejected(
                f"{self.where} redirects (HTTP {status}) to {location}; "
                "set the endpoint to the final URL",
                status,
            )
        return self._decode(response)

    def _decode(self, response: httpx.Response) -> dict[str, Any]:
        content_type = response.headers.get("content-type", "").lower()
        head = response.content[:64].lstrip()
        if "event-stream" in content_type or head.startswith((b"data:", b"event:")):
            raise ProviderBadResponse(
                f"{self.where} answered with an event stream where one JSON body was expected "
                "(does the server ignore stream: false?)"
            )
        try:
            body = response.json()
        except ValueError:
            raise ProviderBadResponse(f"{self.where} returned a body that is not JSON") from None
        if not isinstance(body, dict):
            raise ProviderBadResponse(f"{self.where} returned JSON that is not an object")
        return body

    def bad(self, detail: str) -> ProviderError:
        """A ProviderBadResponse naming this endpoint."""
        return ProviderBadResponse(f"{self.where} returned an unexpected response: {detail}")

    def _status_text(self, response: httpx.Response) -> str:
        text = f"HTTP {response.status_code}"
        detail = _error_detail(response)
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
        with self._lock:
            if self._client is None:
                # Proxy variables apply to hosted APIs only, never to a local model server.
                client = httpx.Client(headers=self._headers, trust_env=not is_loopback(self.url))
                # A provider dropped without close() still closes its sockets.
                self._closer = weakref.finalize(self, client.close)
                self._client = client
            return self._client


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds from a Retry-After header given in seconds (HTTP dates are ignored)."""
    value = response.headers.get("Retry-After", "").strip()
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def _error_detail(response: httpx.Response) -> str:
    """The server's error message from OpenAI/Anthropic/Ollama-style bodies, or raw text."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:_SNIPPET].strip()
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        error = error.get("message")
    return " ".join(str(error if error is not None else body).split())[:_SNIPPET]
