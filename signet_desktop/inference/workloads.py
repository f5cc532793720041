"""Providers per workload from one loaded config, built on first use and reused.

What the composition root hands to Dreaming and hints: `providers.source("memory_extraction")`
is a `Callable[[], ChatProvider]` that raises `ProviderNotConfigured` (with the key to set)
each time it is called while nothing is configured, and returns the same provider (one
connection pool) once it is.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from signet_desktop.config.inference import InferenceConfig
from signet_desktop.inference.registry import build_chain, resolve_chain
from signet_desktop.inference.retry import RetryPolicy
from signet_desktop.inference.status import inference_status
from signet_desktop.inference.types import ChatProvider

SECRETS_DIR_NAME = ".secrets"


def secrets_dir_for(workspace_root: Path) -> Path:
    """Where `$secret:NAME` files live: `<workspace>/.secrets/NAME`."""
    return workspace_root / SECRETS_DIR_NAME


class WorkloadProviders:
    """Thread-safe cache of the provider serving each workload."""

    def __init__(
        self,
        config: InferenceConfig,
        *,
        env: Mapping[str, str] | None = None,
        secrets_dir: Path | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self._config = config
        self._env = os.environ if env is None else env
        self._secrets_dir = secrets_dir
        self._retry = retry
        self._built: dict[str, ChatProvider] = {}
        self._retired: list[ChatProvider] = []
        self._lock = threading.Lock()

    def get(self, workload: str) -> ChatProvider:
        """The provider for `workload`; ProviderNotConfigured when none is configured."""
        with self._lock:
            found = self._built.get(workload)
            if found is None:
                resolution = resolve_chain(
                    self._config, workload, env=self._env, secrets_dir=self._secrets_dir
                )
                found = self._built[workload] = build_chain(resolution, retry=self._retry)
            return found

    def source(self, workload: str) -> Callable[[], ChatProvider]:
        """A zero-argument callable returning `get(workload)`."""
        return lambda: self.get(workload)

    def status(self) -> dict[str, Any]:
        """`inference_status` for this config (secret-free, JSON-able)."""
        return inference_status(self._config, env=self._env, secrets_dir=self._secrets_dir)

    def refresh(self) -> None:
        """Build providers again on next use (a `$secret:` value changed). The built ones are
        kept until `close`: a running pass may still hold one."""
        with self._lock:
            self._retired.extend(self._built.values())
            self._built = {}

    def close(self) -> None:
        """Close every built provider's connections."""
        with self._lock:
            built, self._built = [*self._retired, *self._built.values()], {}
            self._retired = []
        for provider in built:
            close = getattr(provider, "close", None)
            if callable(close):
                close()
