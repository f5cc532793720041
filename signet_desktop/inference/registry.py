"""Resolve a workload to a ChatProvider from `inference.*`: binding → policy → target → account.

A workload (`memory_extraction`, `session_synthesis`, `interactive`) is bound in
`inference.workloads` to a policy or a target (or falls back to `inference.defaultPolicy`).
A policy names its targets in `target`/`defaultTarget` and `targets` (in order: the later
ones are fallbacks, skipped when not configured); a target ref may carry a model
(`local/qwen3:4b`). The target's `executor` picks the wire format:
`anthropic`, or OpenAI-compatible (`openai-compatible`, `openai`, `openrouter`, `ollama`,
`llama-cpp`, `lmstudio`, `vllm`; `pi` takes its account's provider); `acpx` runs the user's
agent harness (`inference/harness_agent.py`: Dreaming only). Anything not set says,
in a `ProviderNotConfigured`, which key to set. Nothing here does network I/O.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import SecretStr

from signet_desktop.config.inference import InferenceAccount, InferenceConfig, InferenceTarget
from signet_desktop.inference.accounting import ModelPrice, Pricing
from signet_desktop.inference.anthropic import AnthropicProvider
from signet_desktop.inference.errors import ProviderNotConfigured
from signet_desktop.inference.fallback import FallbackProvider
from signet_desktop.inference.harness_agent import HarnessAgent, resolve_harness
from signet_desktop.inference.openai_compat import OpenAICompatProvider
from signet_desktop.inference.retry import RetryPolicy
from signet_desktop.inference.secrets import resolve_secret
from signet_desktop.inference.transport import is_loopback
from signet_desktop.inference.types import ChatProvider

Workload = Literal["memory_extraction", "session_synthesis", "interactive"]
WORKLOADS: tuple[Workload, ...] = ("memory_extraction", "session_synthesis", "interactive")
YAML_NAMES: dict[str, str] = {
    "memory_extraction": "memoryExtraction",
    "session_synthesis": "sessionSynthesis",
    "interactive": "interactive",
}
Wire = Literal["openai-compatible", "anthropic", "acpx"]

# Executor (or account provider) -> (wire format, label, default base URL or None).
_BACKENDS: dict[str, tuple[Wire, str, str | None]] = {
    "anthropic": ("anthropic", "anthropic", "https://api.anthropic.com"),
    "openai": ("openai-compatible", "openai", "https://api.openai.com/v1"),
    "openrouter": ("openai-compatible", "openrouter", "https://openrouter.ai/api/v1"),
    "ollama": ("openai-compatible", "ollama", "http://localhost:11434/v1"),
    "llama-cpp": ("openai-compatible", "llama-cpp", "http://localhost:8080/v1"),
    "llamacpp": ("openai-compatible", "llama-cpp", "http://localhost:8080/v1"),
    "lmstudio": ("openai-compatible", "lmstudio", "http://localhost:1234/v1"),
    "lm-studio": ("openai-compatible", "lmstudio", "http://localhost:1234/v1"),
    "vllm": ("openai-compatible", "vllm", "http://localhost:8000/v1"),
    "openai-compatible": ("openai-compatible", "openai-compatible", None),
    "openai_compatible": ("openai-compatible", "openai-compatible", None),
}
_NEEDS_KEY = frozenset({"anthropic", "openai", "openrouter"})
_POLICY_TARGET_KEYS = ("target", "defaultTarget", "default_target")
_POLICY_LIST_KEYS = ("targets", "defaultTargets", "default_targets", "fallback")


@dataclass(frozen=True, slots=True)
class ResolvedTarget:
    """Everything needed to build the provider for one workload; repr shows no key."""

    workload: str
    policy: str | None
    target: str
    wire: Wire
    label: str
    base_url: str
    model: str
    pricing: Pricing
    api_key: SecretStr | None = field(default=None, repr=False)
    harness: HarnessAgent | None = None  # executor acpx: the harness that runs the pass

    @property
    def host(self) -> str:
        """The base URL's host[:port] (for status output)."""
        parts = urlsplit(self.base_url)
        host = parts.hostname or ""
        return f"{host}:{parts.port}" if parts.port is not None else host


@dataclass(frozen=True, slots=True)
class Resolution:
    """A workload's usable targets in order, and why any listed target was skipped."""

    targets: tuple[ResolvedTarget, ...]
    skipped: tuple[str, ...] = ()


def resolve_workload(
    config: InferenceConfig,
    workload: str,
    *,
    env: Mapping[str, str] | None = None,
    secrets_dir: Path | None = None,
) -> ResolvedTarget:
    """The first usable target serving `workload`; ProviderNotConfigured if none."""
    return resolve_chain(config, workload, env=env, secrets_dir=secrets_dir).targets[0]


def resolve_chain(
    config: InferenceConfig,
    workload: str,
    *,
    env: Mapping[str, str] | None = None,
    secrets_dir: Path | None = None,
) -> Resolution:
    """Every usable target of `workload`'s binding or policy, in order (fallbacks after the
    first); ProviderNotConfigured, with the first target's problem, when none is usable."""
    if workload not in YAML_NAMES:
        raise ValueError(f"unknown workload {workload!r}; expected one of {', '.join(WORKLOADS)}")
    yaml_key = f"inference.workloads.{YAML_NAMES[workload]}"
    if not config.enabled:
        raise ProviderNotConfigured("inference is disabled (inference.enabled: false)")
    binding = getattr(config.workloads, workload)
    model = binding.model if binding is not None else None
    policy_name: str | None = None
    if binding is not None and binding.target:
        refs = [binding.target]
    else:
        policy_name = (binding.policy if binding is not None else None) or config.default_policy
        if not policy_name:
            raise ProviderNotConfigured(
                f"no model is configured for the {workload} workload; set {yaml_key} to a "
                "policy or target (or set inference.defaultPolicy) — see docs/INFERENCE.md"
            )
        refs, model = _policy_targets(config, policy_name, yaml_key, model)
    where = f"inference.policies.{policy_name}" if policy_name else yaml_key
    environ = os.environ if env is None else env
    usable: list[ResolvedTarget] = []
    problems: list[ProviderNotConfigured] = []
    for index, ref in enumerate(refs):
        name, ref_model = _split_ref(config, ref)
        try:
            target = config.targets.get(name)
            if target is None:
                raise ProviderNotConfigured(
                    f"{where} names target '{name}', which inference.targets does not define"
                )
            chosen = (model if index == 0 else None) or ref_model
            usable.append(
                _resolve_target(
                    config,
                    workload,
                    policy_name,
                    name,
                    target,
                    chosen,
                    env=environ,
                    secrets_dir=secrets_dir,
                )
            )
        except ProviderNotConfigured as exc:
            problems.append(exc)
    if not usable:
        raise problems[0]
    return Resolution(tuple(usable), tuple(p.reason for p in problems))


def provider_for(
    config: InferenceConfig,
    workload: str,
    *,
    env: Mapping[str, str] | None = None,
    secrets_dir: Path | None = None,
    retry: RetryPolicy | None = None,
) -> ChatProvider:
    """The ChatProvider serving `workload` (a FallbackProvider when the policy lists several
    usable targets); no I/O until `complete`."""
    resolution = resolve_chain(config, workload, env=env, secrets_dir=secrets_dir)
    return build_chain(resolution, retry=retry)


def build_chain(resolution: Resolution, *, retry: RetryPolicy | None = None) -> ChatProvider:
    """One provider, or a FallbackProvider over the resolution's targets in order (a harness
    target first is used alone: it runs whole passes, which do not fall back mid-way)."""
    first = resolution.targets[0]
    if first.harness is not None:
        return first.harness
    usable = [target for target in resolution.targets if target.harness is None]
    built = [build_provider(target, retry=retry) for target in usable]
    return built[0] if len(built) == 1 else FallbackProvider(built)


def build_provider(resolved: ResolvedTarget, *, retry: RetryPolicy | None = None) -> ChatProvider:
    """The provider object for a resolved target."""
    if resolved.harness is not None:
        return resolved.harness
    if resolved.wire == "anthropic":
        return AnthropicProvider(
            model=resolved.model,
            api_key=resolved.api_key,
            base_url=resolved.base_url,
            name=resolved.label,
            pricing=resolved.pricing,
            retry=retry,
        )
    return OpenAICompatProvider(
        base_url=resolved.base_url,
        model=resolved.model,
        api_key=resolved.api_key,
        name=resolved.label,
        pricing=resolved.pricing,
        retry=retry,
        token_limit_field="max_completion_tokens" if resolved.label == "openai" else "max_tokens",
    )


def _policy_targets(
    config: InferenceConfig, policy_name: str, yaml_key: str, model: str | None
) -> tuple[list[str], str | None]:
    policy = config.policies.get(policy_name)
    if policy is None:
        if policy_name in config.targets:  # a binding may name a target directly
            return [policy_name], model
        raise ProviderNotConfigured(
            f"{yaml_key} uses policy '{policy_name}', which inference.policies does not define"
        )
    where = f"inference.policies.{policy_name}"
    refs = _listed_targets(policy)
    if not refs:
        raise ProviderNotConfigured(f"{where} names no target; set {where}.target")
    policy_model = policy.get("model")
    if model is None and isinstance(policy_model, str) and policy_model.strip():
        model = policy_model.strip()
    return refs, model


def _listed_targets(policy: Mapping[str, Any]) -> list[str]:
    """`target`/`defaultTarget`, then the entries of `targets`/`defaultTargets`/`fallback`."""
    refs: list[str] = []
    for key in (*_POLICY_TARGET_KEYS, *_POLICY_LIST_KEYS):
        value = policy.get(key)
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, Mapping):
                item = item.get("target")
            if isinstance(item, str) and item.strip() and item.strip() not in refs:
                refs.append(item.strip())
    return refs


def _split_ref(config: InferenceConfig, ref: str) -> tuple[str, str | None]:
    """`target` or `target/model` (model names may contain '/' and ':' themselves)."""
    if ref in config.targets or "/" not in ref:
        return ref, None
    name, model = ref.split("/", 1)
    return name, model or None


def _resolve_target(
    config: InferenceConfig,
    workload: str,
    policy: str | None,
    name: str,
    target: InferenceTarget,
    model: str | None,
    *,
    env: Mapping[str, str],
    secrets_dir: Path | None,
) -> ResolvedTarget:
    where = f"inference.targets.{name}"
    account: InferenceAccount | None = None
    if target.account:
        account = config.accounts.get(target.account)
        if account is None:
            raise ProviderNotConfigured(
                f"{where}.account names '{target.account}', which inference.accounts "
                "does not define"
            )
    executor = target.executor.strip().lower()
    if executor == "pi":
        provider = (account.provider if account is not None else None) or ""
        executor = provider.strip().lower() or "openai-compatible"
    if executor == "acpx":
        harness = resolve_harness(where, target.acpx, name, model or _default_model(target), env)
        return ResolvedTarget(
            workload=workload,
            policy=policy,
            target=name,
            wire="acpx",
            label=harness.name,
            base_url="",
            model=harness.model,
            pricing=Pricing(),
            harness=harness,
        )
    backend = _BACKENDS.get(executor)
    if backend is None:
        known = ", ".join(sorted({*_BACKENDS, "pi"}))
        raise ProviderNotConfigured(
            f"{where}.executor '{target.executor}' is not supported; use one of: {known}"
        )
    wire, label, default_url = backend
    if account is not None and account.provider and executor == "openai-compatible":
        label = _BACKENDS.get(account.provider.strip().lower(), backend)[1]
    base_url = target.endpoint or (account.base_url if account is not None else None)
    if not base_url:
        base_url = default_url
    if not base_url:
        raise ProviderNotConfigured(f"{where}: set {where}.endpoint to the server's base URL")
    if urlsplit(base_url).scheme not in ("http", "https") or not urlsplit(base_url).hostname:
        raise ProviderNotConfigured(f"{where}: the base URL must be an http(s) URL")
    if wire == "openai-compatible" and urlsplit(base_url).path in ("", "/"):
        base_url = base_url.rstrip("/") + "/v1"
    model = model or _default_model(target)
    if not model:
        raise ProviderNotConfigured(
            f"{where} has no single model to use; list one under {where}.models or set "
            f"inference.workloads.{YAML_NAMES[workload]}.model"
        )
    api_key = _api_key(account, target, label, base_url, env=env, secrets_dir=secrets_dir)
    return ResolvedTarget(
        workload=workload,
        policy=policy,
        target=name,
        wire=wire,
        label=label,
        base_url=base_url,
        model=model,
        pricing=_pricing(target, model, base_url),
        api_key=api_key,
    )


def _default_model(target: InferenceTarget) -> str | None:
    if len(target.models) == 1:
        return next(iter(target.models))
    defaults = [
        name
        for name, settings in target.models.items()
        if isinstance(settings, dict) and settings.get("default") is True
    ]
    return defaults[0] if len(defaults) == 1 else None


def _api_key(
    account: InferenceAccount | None,
    target: InferenceTarget,
    label: str,
    base_url: str,
    *,
    env: Mapping[str, str],
    secrets_dir: Path | None,
) -> SecretStr | None:
    if account is not None and account.api_key is not None:
        return resolve_secret(
            account.api_key,
            key_path=f"inference.accounts.{target.account}.apiKey",
            env=env,
            secrets_dir=secrets_dir,
        )
    if label in _NEEDS_KEY and not is_loopback(base_url):
        account_hint = (
            f"inference.accounts.{target.account}.apiKey"
            if target.account
            else "an account with an apiKey (inference.accounts.<name>.apiKey) and point "
            "the target's account at it"
        )
        raise ProviderNotConfigured(f"{label} needs an API key; set {account_hint}")
    return None


def _pricing(target: InferenceTarget, model: str, base_url: str) -> Pricing:
    settings = target.models.get(model)
    raw = settings.get("pricing") if isinstance(settings, dict) else None
    if isinstance(raw, Mapping):
        return Pricing(price=ModelPrice.from_config(raw))
    return Pricing(free=is_loopback(base_url))
