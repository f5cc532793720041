"""`inference.*`: the LLM registry (accounts, targets, policies, workload bindings).

Permissive but typed: the keys the inference layer reads are validated, anything else in an
account, target or policy is kept untouched for forward compatibility with Signet's registry.
Executors Signet removed (`claude-code`, `codex`, `opencode`, `command`) fail with the
replacement named, instead of silently picking another backend.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    AliasChoices,
    BeforeValidator,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
)

from signet_desktop.config.base import CamelConfigModel, OpenConfigModel

# Removed executor -> what to write instead (Signet's "folded executor" table).
REMOVED_EXECUTORS: dict[str, str] = {
    "claude-code": "executor: acpx with acpx.agent: claude (or executor: anthropic for the API)",
    "codex": "executor: acpx with acpx.agent: codex (or an openai-compatible target)",
    "opencode": "executor: acpx with acpx.agent: opencode (or an openai-compatible target)",
    "command": "executor: acpx with acpx.agent set to your binary, or an openai-compatible target",
}


class InferenceAccount(OpenConfigModel):
    """`inference.accounts.<name>`: credentials and endpoint for one provider account."""

    provider: str | None = None
    api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("apiKey", "api_key")
    )
    base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("baseUrl", "base_url", "endpoint")
    )


class ModelPricing(CamelConfigModel):
    """`inference.targets.<t>.models.<m>.pricing`: USD per 1M tokens (cache prices optional)."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(default=None, ge=0)
    cache_write: float | None = Field(default=None, ge=0)


class InferenceTarget(OpenConfigModel):
    """`inference.targets.<name>`: one routable backend (executor + account + models)."""

    executor: str
    account: str | None = None
    endpoint: str | None = Field(
        default=None, validation_alias=AliasChoices("endpoint", "base_url")
    )
    acpx: dict[str, Any] | None = None
    models: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @field_validator("executor", mode="after")
    @classmethod
    def _executor_not_removed(cls, value: str) -> str:
        replacement = REMOVED_EXECUTORS.get(value.strip().lower())
        if replacement is not None:
            raise ValueError(f"executor '{value}' was removed; use {replacement}")
        return value

    @field_validator("models", mode="after")
    @classmethod
    def _pricing_is_valid(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        # Checked at load so a typo in a price fails there, not in the middle of a pass.
        for name, settings in value.items():
            pricing = settings.get("pricing") if isinstance(settings, dict) else None
            if pricing is None:
                continue
            try:
                ModelPricing.model_validate(pricing)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(part) for part in first["loc"])
                detail = f".{where}" if where else ""
                raise ValueError(
                    f"{name}.pricing{detail}: {first['msg']} "
                    "(prices are numbers: USD per 1M tokens, keys input, output, "
                    "cacheRead, cacheWrite)"
                ) from None
        return value


def _binding_from_string(value: object) -> object:
    # Signet writes a bare policy name (`memoryExtraction: memory-pipeline`) as shorthand.
    return {"policy": value} if isinstance(value, str) else value


class WorkloadBinding(OpenConfigModel):
    """Which policy or target serves one workload; `None` means the default policy."""

    policy: str | None = None
    target: str | None = None
    model: str | None = None


Binding = Annotated[WorkloadBinding | None, BeforeValidator(_binding_from_string)]


class InferenceWorkloads(CamelConfigModel):
    """`inference.workloads`: bindings for the three workloads Signet routes."""

    memory_extraction: Binding = None
    session_synthesis: Binding = None
    interactive: Binding = None


class InferenceConfig(CamelConfigModel):
    """`inference`: the LLM registry. Empty by default: no background LLM work is configured."""

    enabled: bool = True
    default_policy: str | None = None
    default_agent_id: str | None = None
    accounts: dict[str, InferenceAccount] = Field(default_factory=dict)
    targets: dict[str, InferenceTarget] = Field(default_factory=dict)
    policies: dict[str, dict[str, Any]] = Field(default_factory=dict)
    workloads: InferenceWorkloads = InferenceWorkloads()
