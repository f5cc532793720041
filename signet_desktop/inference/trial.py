"""One real call to the provider a workload resolves to, reported in words ("Test" in Settings).

An HTTP provider gets a tiny completion through the same path Dreaming uses (`provider_for`
→ the provider's `complete`, retries and all); a harness target (executor acpx) runs whole
passes only, so its trial starts the binary with `--version` (a completion would start the
user's agent and spend their plan). Every failure is a sentence, never a secret.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from signet_desktop.config.inference import InferenceConfig
from signet_desktop.inference.errors import ProviderError
from signet_desktop.inference.harness_agent import HarnessAgent
from signet_desktop.inference.harness_discovery import read_version
from signet_desktop.inference.registry import provider_for
from signet_desktop.inference.types import ChatMessage, ChatRequest

PROMPT = "Reply with the single word: ready"
TRIAL_TIMEOUT_S = 30.0
TRIAL_MAX_TOKENS = 16


@dataclass(frozen=True, slots=True)
class TrialOutcome:
    """Whether the call worked, and what to tell the person."""

    ok: bool
    text: str


def try_workload(
    config: InferenceConfig,
    workload: str,
    *,
    env: Mapping[str, str] | None = None,
    secrets_dir: Path | None = None,
    version: Callable[[Path], str | None] = read_version,
) -> TrialOutcome:
    """Resolve `workload` as the daemon would and make one real call to what serves it."""
    try:
        provider = provider_for(config, workload, env=env, secrets_dir=secrets_dir)
    except ProviderError as exc:
        return TrialOutcome(False, f"Not configured: {exc.message}")
    try:
        if isinstance(provider, HarnessAgent):
            return _try_harness(provider, version)
        request = ChatRequest(
            messages=(ChatMessage.user(PROMPT),),
            max_output_tokens=TRIAL_MAX_TOKENS,
            timeout_s=TRIAL_TIMEOUT_S,
        )
        started = time.monotonic()
        response = provider.complete(request)
    except ProviderError as exc:
        return TrialOutcome(False, f"{provider.name} ({provider.model}) failed: {exc.message}")
    finally:
        close = getattr(provider, "close", None)
        if callable(close):
            close()
    seconds = time.monotonic() - started
    said = " ".join(response.text.split())[:80] or "(no text)"
    return TrialOutcome(
        True,
        f"{response.provider} answered with {response.model} in {seconds:.1f} s: “{said}” "
        f"({response.usage.total_tokens} tokens)",
    )


def _try_harness(agent: HarnessAgent, version: Callable[[Path], str | None]) -> TrialOutcome:
    found = version(Path(agent.binary))
    if found is None:
        return TrialOutcome(
            False, f"{agent.label} at {agent.binary} did not start (`--version` failed)"
        )
    return TrialOutcome(
        True,
        f"{agent.label} starts ({found}, {agent.binary}); it runs whole Dreaming passes, so "
        "no test completion was sent (that would start a session on your plan)",
    )
