"""A policy's targets in order: the next one answers when the one before is unavailable.

Falls back on `ProviderUnavailable` (connection refused, 5xx after its retries) and
`ProviderRateLimited`; never on a rejection, a bad response or a timeout (a timeout has used
the caller's time). Each target gets the request's full timeout. The response names the
provider and model that actually answered.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from signet_desktop.inference.errors import ProviderRateLimited, ProviderUnavailable
from signet_desktop.inference.types import ChatProvider, ChatRequest, ChatResponse

_log = logging.getLogger(__name__)
FALLBACK_ON = (ProviderUnavailable, ProviderRateLimited)


class FallbackProvider:
    """A ChatProvider over several; `name` and `model` are the first one's."""

    def __init__(self, providers: Sequence[ChatProvider]) -> None:
        if not providers:
            raise ValueError("a fallback chain needs at least one provider")
        self.providers = tuple(providers)

    @property
    def name(self) -> str:
        return self.providers[0].name

    @property
    def model(self) -> str:
        return self.providers[0].model

    def complete(self, request: ChatRequest) -> ChatResponse:
        last: Exception | None = None
        for index, provider in enumerate(self.providers):
            try:
                return provider.complete(request)
            except FALLBACK_ON as exc:
                last = exc
                if index + 1 < len(self.providers):
                    after = self.providers[index + 1]
                    _log.warning("%s; falling back to %s (%s)", exc, after.name, after.model)
        assert last is not None
        raise last

    def close(self) -> None:
        for provider in self.providers:
            close = getattr(provider, "close", None)
            if callable(close):
                close()

    def __repr__(self) -> str:
        return f"FallbackProvider({', '.join(repr(p) for p in self.providers)})"
