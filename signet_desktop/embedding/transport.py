"""JSON-over-HTTP calls to remote embedders with bounded retries, backoff and safe errors.

Retried: connection errors, timeouts, 408, 429, 500, 502, 503 and 504 (a 429's Retry-After is
honoured up to the backoff cap). Not retried: other 4xx and 501 (e.g. llama.cpp started without
`--embeddings`). Error messages name the provider and the URL without credentials; the API key
only ever travels in the Authorization header and is never formatted into text.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx

from signet_desktop.embedding.provider import EmbeddingError, EmbeddingUnavailable
from signet_desktop.inference.transport import is_loopback, redact_url

_log = logging.getLogger(__name__)
RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_ERROR_SNIPPET = 200


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many times to retry a failed call and how long to wait between attempts."""

    retries: int = 2
    backoff_s: float = 0.25
    backoff_max_s: float = 4.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to sleep before retry number `attempt` (0-based), with 10% jitter."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.backoff_max_s)
        base = min(self.backoff_s * 2.0**attempt, self.backoff_max_s)
        return base * (1.0 + 0.1 * random.random())


class JsonEndpoint:
    """A POST-JSON endpoint of one provider; thread-safe, the httpx client is made lazily."""

    def __init__(
        self,
        provider: str,
        url: str,
        *,
        timeout_s: float,
        retry: RetryPolicy,
        api_key: str | None = None,
    ) -> None:
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        if retry.retries < 0:
            raise ValueError("retries must be >= 0")
        self.provider = provider
        self.url = url
        self.safe_url = redact_url(url)
        self._timeout = httpx.Timeout(timeout_s)
        self._retry = retry
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        self._secret = api_key or ""
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"JsonEndpoint(provider={self.provider!r}, url={self.safe_url!r})"

    def post(self, payload: dict[str, Any]) -> Any:
        """POST `payload`, returning the decoded JSON body; raise EmbeddingError/Unavailable."""
        client = self._get_client()
        last, retry_after = "no attempt made", None
        for attempt in range(self._retry.retries + 1):
            if attempt:
                pause = self._retry.delay(attempt - 1, retry_after)
                _log.info("%s: %s; retry %d in %.2fs", self._where(), last, attempt, pause)
                time.sleep(pause)
            retry_after = None
            try:
                response = client.post(self.url, json=payload)
            except httpx.TimeoutException:
                last = f"timed out after {self._timeout.read}s"
                continue
            except httpx.TransportError as exc:
                last = f"connection failed ({type(exc).__name__})"
                continue
            if response.status_code in RETRYABLE_STATUS:
                last, retry_after = self._status_text(response), _retry_after(response)
                continue
            if response.status_code >= 400:
                detail = self._status_text(response)
                raise EmbeddingError(f"{self._where()} rejected the request: {detail}")
            return self._decode(response)
        tries = self._retry.retries + 1
        raise EmbeddingUnavailable(f"{self._where()} unavailable after {tries} attempts: {last}")

    def close(self) -> None:
        """Close the HTTP client (a later post() opens a new one)."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def _get_client(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                # Proxy variables apply to hosted APIs only, never to a local model server.
                self._client = httpx.Client(
                    timeout=self._timeout,
                    headers=self._headers,
                    trust_env=not is_loopback(self.url),
                )
            return self._client

    def _decode(self, response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError as exc:
            raise EmbeddingError(f"{self._where()} returned a body that is not JSON") from exc

    def _status_text(self, response: httpx.Response) -> str:
        """'HTTP 503: <server message>', shortened, with the API key masked if echoed."""
        text = f"HTTP {response.status_code}"
        detail = _error_detail(response)
        if detail:
            text += f": {detail}"
        if self._secret:
            text = text.replace(self._secret, "***")
        return text

    def _where(self) -> str:
        return f"{self.provider} embedder at {self.safe_url}"


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds from a 429/503 Retry-After header given in seconds (dates are ignored)."""
    value = response.headers.get("Retry-After", "").strip()
    return float(value) if value.isdigit() else None


def _error_detail(response: httpx.Response) -> str:
    """The server's error message from Ollama/OpenAI/llama.cpp-style bodies, or raw text."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:_ERROR_SNIPPET].strip()
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        error = error.get("message")
    return str(error if error is not None else body)[:_ERROR_SNIPPET]
