"""Which workloads have a model configured (provider, model, host — never a key) and why not."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from signet_desktop.config.inference import InferenceConfig
from signet_desktop.inference.errors import ProviderNotConfigured
from signet_desktop.inference.registry import WORKLOADS, YAML_NAMES, resolve_chain
from signet_desktop.inference.transport import is_loopback


@dataclass(frozen=True, slots=True)
class WorkloadStatus:
    """One workload: configured (provider, model, host, target, policy) or the reason why not."""

    workload: str
    configured: bool
    provider: str | None = None
    model: str | None = None
    host: str | None = None
    target: str | None = None
    policy: str | None = None
    local: bool | None = None
    priced: bool | None = None
    reason: str | None = None
    fallbacks: tuple[str, ...] = ()  # "target: provider model @ host", in order
    skipped: tuple[str, ...] = ()  # why a listed target cannot be used
    executor: str | None = None  # "http" (a provider Signet calls) or "acpx" (a harness)
    harness: str | None = None  # acpx: the harness binary that runs the passes

    def as_dict(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "config_key": f"inference.workloads.{YAML_NAMES[self.workload]}",
            "configured": self.configured,
            "provider": self.provider,
            "model": self.model,
            "host": self.host,
            "target": self.target,
            "policy": self.policy,
            "local": self.local,
            "priced": self.priced,
            "reason": self.reason,
            "fallbacks": list(self.fallbacks),
            "skipped": list(self.skipped),
            "executor": self.executor,
            "harness": self.harness,
        }


def workload_status(
    config: InferenceConfig,
    workload: str,
    *,
    env: Mapping[str, str] | None = None,
    secrets_dir: Path | None = None,
) -> WorkloadStatus:
    """The status of one workload (resolves the config; no network I/O)."""
    try:
        resolution = resolve_chain(config, workload, env=env, secrets_dir=secrets_dir)
    except ProviderNotConfigured as exc:
        return WorkloadStatus(workload, configured=False, reason=exc.reason)
    resolved, *rest = resolution.targets
    pricing = resolved.pricing
    harness = resolved.harness
    if harness is not None:  # the harness reports its own usage and cost per pass
        return WorkloadStatus(
            workload,
            configured=True,
            provider=resolved.label,
            model=resolved.model,
            target=resolved.target,
            policy=resolved.policy,
            executor="acpx",
            harness=harness.binary,
        )
    return WorkloadStatus(
        workload,
        configured=True,
        provider=resolved.label,
        model=resolved.model,
        host=resolved.host,
        target=resolved.target,
        policy=resolved.policy,
        local=is_loopback(resolved.base_url),
        executor="http",
        priced=pricing.price is not None or pricing.free,
        fallbacks=tuple(f"{t.target}: {t.label} {t.model} @ {t.host}" for t in rest),
        skipped=resolution.skipped,
    )


def inference_status(
    config: InferenceConfig,
    *,
    env: Mapping[str, str] | None = None,
    secrets_dir: Path | None = None,
) -> dict[str, Any]:
    """`{"enabled", "workloads": [...]}` for every workload, JSON-able and secret-free."""
    environ = os.environ if env is None else env
    return {
        "enabled": config.enabled,
        "workloads": [
            workload_status(config, w, env=environ, secrets_dir=secrets_dir).as_dict()
            for w in WORKLOADS
        ],
    }
