"""Provider errors. `str(error)` is a user-facing sentence that never contains a secret."""

from __future__ import annotations


class ProviderError(Exception):
    """An inference call failed; `retryable` says whether trying again may help."""

    retryable = False

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ProviderTimeout(ProviderError):
    """The provider did not answer within the call's deadline."""

    retryable = True


class ProviderRateLimited(ProviderError):
    """HTTP 429; `retry_after` is the server's requested wait in seconds, when it gave one."""

    retryable = True

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ProviderUnavailable(ProviderError):
    """A 5xx answer or a connection failure."""

    retryable = True


class ProviderRejected(ProviderError):
    """A 4xx answer other than 429 (bad key, unknown model, request too large): not retried."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class ProviderBadResponse(ProviderError):
    """The answer is not what the API promises: not JSON, an SSE stream, or the wrong shape."""


class ProviderNotConfigured(ProviderError):
    """No provider is configured for a workload; `reason` says which key to set."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
