"""`auth.*` and `hooks.*` sections of agent.yaml."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator

from signet_desktop.config.base import CamelConfigModel

AuthMode = Literal["local", "team", "hybrid"]


class RateLimitRule(CamelConfigModel):
    """One sliding-window limit: at most `max` calls per `windowMs`."""

    window_ms: int = Field(default=60_000, ge=1000, le=86_400_000)
    max: int = Field(ge=0, le=100_000)


# Signet's per-minute defaults for the destructive and costly operations.
DEFAULT_RATE_LIMITS: dict[str, int] = {
    "forget": 30,
    "modify": 60,
    "batchForget": 5,
    "forceDelete": 3,
    "admin": 10,
    "recallLlm": 60,
    "inferenceExplain": 120,
    "inferenceExecute": 20,
    "inferenceGateway": 30,
    "repair": 10,
}


def _default_rate_limits() -> dict[str, RateLimitRule]:
    return {name: RateLimitRule(max=limit) for name, limit in DEFAULT_RATE_LIMITS.items()}


class AuthConfig(CamelConfigModel):
    """`auth`: who may call the daemon. `local` trusts loopback callers and needs no token."""

    mode: AuthMode = "local"
    token: SecretStr | None = None
    default_token_ttl_seconds: int = Field(default=604_800, ge=60, le=31_536_000)
    session_token_ttl_seconds: int = Field(default=86_400, ge=60, le=31_536_000)
    rate_limits: dict[str, RateLimitRule] = Field(default_factory=_default_rate_limits)

    @field_validator("rate_limits", mode="after")
    @classmethod
    def _merge_defaults(cls, value: dict[str, RateLimitRule]) -> dict[str, RateLimitRule]:
        # A user override replaces one operation's rule; the others keep their defaults.
        return {**_default_rate_limits(), **value}


class SessionStartHookConfig(CamelConfigModel):
    """`hooks.sessionStart`: what is injected when a harness session begins."""

    recall_limit: int = Field(default=50, ge=0, le=500)
    candidate_pool_limit: int = Field(default=100, ge=1, le=2000)
    include_identity: bool = True
    include_recent_context: bool = True
    recency_bias: float = Field(default=0.7, ge=0.0, le=1.0)
    max_inject_tokens: int = Field(default=12_000, ge=0, le=200_000)


class UserPromptSubmitHookConfig(CamelConfigModel):
    """`hooks.userPromptSubmit`: per-prompt recall injection."""

    enabled: bool = True
    recall_limit: int = Field(default=10, ge=1, le=100)
    max_inject_chars: int = Field(default=500, ge=0, le=100_000)
    min_score: float = Field(default=0.8, ge=0.0, le=1.0)


class PreCompactionHookConfig(CamelConfigModel):
    """`hooks.preCompaction`: what goes into the harness's pre-compaction summary prompt."""

    include_recent_memories: bool = True
    memory_limit: int = Field(default=5, ge=0, le=100)
    summary_guidelines: str | None = None


class HooksConfig(CamelConfigModel):
    """`hooks`: harness lifecycle hooks."""

    session_start: SessionStartHookConfig = SessionStartHookConfig()
    user_prompt_submit: UserPromptSubmitHookConfig = UserPromptSubmitHookConfig()
    pre_compaction: PreCompactionHookConfig = PreCompactionHookConfig()
