"""`auth.*` and `hooks.*` sections of agent.yaml."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr

from signet_desktop.config.base import CamelConfigModel

AuthMode = Literal["local", "team", "hybrid"]


class RateLimitRule(CamelConfigModel):
    """One sliding-window limit: at most `max` calls per `windowMs`."""

    window_ms: int = Field(default=60_000, ge=1000, le=86_400_000)
    max: int = Field(ge=0, le=100_000)


def _per_minute(limit: int) -> RateLimitRule:
    return RateLimitRule(max=limit)


class RateLimitsConfig(CamelConfigModel):
    """`auth.rateLimits`: the limits the daemon applies, per actor, in team and hybrid modes.

    Signet's per-minute defaults. A key set in agent.yaml replaces that one rule. Signet's
    `recallLlm` and `inference*` limits guard routes this build does not have: they are
    listed as ignored keys (config/keys.py), never reported as applied.
    """

    forget: RateLimitRule = _per_minute(30)
    modify: RateLimitRule = _per_minute(60)
    batch_forget: RateLimitRule = _per_minute(5)
    force_delete: RateLimitRule = _per_minute(3)
    admin: RateLimitRule = _per_minute(10)
    repair: RateLimitRule = _per_minute(10)

    def by_name(self) -> dict[str, RateLimitRule]:
        """Each rule under its agent.yaml name (`batchForget`, `forceDelete`, ...)."""
        return {
            str(info.alias or name): getattr(self, name)
            for name, info in type(self).model_fields.items()
        }


class AuthConfig(CamelConfigModel):
    """`auth`: who may call the daemon. `local` trusts loopback callers and needs no token."""

    mode: AuthMode = "local"
    token: SecretStr | None = None
    # Lifetimes of scoped tokens (`signet token create`) issued without --ttl: API tokens,
    # and session tokens (`--session`: one harness session's credential).
    default_token_ttl_seconds: int = Field(default=604_800, ge=60, le=31_536_000)
    session_token_ttl_seconds: int = Field(default=86_400, ge=60, le=31_536_000)
    rate_limits: RateLimitsConfig = RateLimitsConfig()


class SessionStartHookConfig(CamelConfigModel):
    """`hooks.sessionStart`: what is injected when a harness session begins."""

    recall_limit: int = Field(default=50, ge=0, le=500)
    candidate_pool_limit: int = Field(default=100, ge=1, le=2000)
    include_identity: bool = True
    include_recent_context: bool = True
    recency_bias: float = Field(default=0.7, ge=0.0, le=1.0)
    max_inject_tokens: int = Field(default=12_000, ge=0, le=200_000)


class UserPromptSubmitHookConfig(CamelConfigModel):
    """`hooks.userPromptSubmit`: per-prompt recall injection.

    The hook injects only hits that pass the relevance test (the memory's meaning is close to
    the prompt's, or it holds most of the prompt's rarer words; docs/RECALL.md, "Relevance:
    weak hits and the hooks' threshold"), the `recall_limit` best of them. `min_score` is an
    extra floor on the fused score (our calibrated scale, not Signet's, whose default 0.8 let
    almost nothing through); its default 0 leaves the decision to the relevance test. The
    fused score is no relevance test: 0.45 (the default before) dropped "billing runs on
    Postgres 16" (0.13 in a busy workspace) for "which database does billing use?", and a
    real paraphrase that shares no word with its answer scores 0.03-0.2. A value set in
    agent.yaml is used as given.
    """

    enabled: bool = True
    recall_limit: int = Field(default=10, ge=1, le=100)
    max_inject_chars: int = Field(default=500, ge=0, le=100_000)
    min_score: float = Field(default=0.0, ge=0.0, le=1.0)


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
