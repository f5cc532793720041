"""Prospective hints: an LLM writes the future questions a memory answers; FTS indexes them.

`HintService.run(agent_id, memory_id)` is one `prospective_hints` job: read the memory (live,
not a document chunk, long enough), ask the configured LLM (workload `memory_extraction`) for
up to `hints.max` questions — outside any write transaction, bounded by `hints.timeoutMs` —,
parse and validate the strict JSON answer, then write the hints in one short transaction after
checking again that the memory is still live (deleted meanwhile: nothing is written). A junk
answer or a timeout raises, so the job fails and the queue's retry budget applies; nothing is
written for it. Hints are retrieval aids (the `hint` recall channel), never graph assertions.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from signet_desktop.config.pipeline import HintsConfig
from signet_desktop.domain.documents import CHUNK_MEMORY_TYPE
from signet_desktop.domain.memory import Memory
from signet_desktop.inference.errors import ProviderError, ProviderNotConfigured
from signet_desktop.inference.harness_agent import HarnessAgent
from signet_desktop.inference.types import ChatMessage, ChatProvider, ChatRequest
from signet_desktop.queue import jobs
from signet_desktop.storage import hints as hint_rows
from signet_desktop.storage import memories
from signet_desktop.storage.guard import assert_provider_call_allowed
from signet_desktop.storage.handle import DatabaseHandle

log = logging.getLogger(__name__)

JOB_TYPE = "prospective_hints"
WORKLOAD = "memory_extraction"
MIN_HINT_CHARS = 3
MAX_HINT_CHARS = hint_rows.HINT_MAX_CHARS
MAX_PROMPT_CHARS = 4000  # the memory text sent to the model (hints need the gist, not all)
DISABLED = "idle: memory.pipelineV2.hints.enabled is false"

SYSTEM_PROMPT = (
    "You index a personal memory store for search. Given one memory, write up to {n} short, "
    "distinct questions or search queries a person might type later whose answer is this "
    "memory. Use the memory's own names and terms. Do not restate the memory. "
    'Answer with JSON only: {{"hints": ["...", "..."]}}'
)

ProviderSource = Callable[[], ChatProvider]  # raises ProviderNotConfigured with the key to set


class HintsRejected(ValueError):
    """The model's answer is not the promised JSON (nothing is written; the job fails)."""


@dataclass(frozen=True, slots=True)
class HintOutcome:
    """What one job did: hints written, or why nothing was asked or written."""

    memory_id: str
    written: int = 0
    proposed: int = 0
    skipped: str | None = None  # deleted | document_chunk | too_short | has_hints

    def as_result(self) -> dict[str, Any]:
        result: dict[str, Any] = {"memoryId": self.memory_id, "hints": self.written}
        if self.proposed:
            result["proposed"] = self.proposed
        if self.skipped:
            result["skipped"] = self.skipped
        return result


def not_configured_reason(exc: ProviderNotConfigured) -> str:
    """The status line for a missing LLM (the registry's reason names the key to set)."""
    reason = exc.reason or "set inference.workloads.memoryExtraction"
    return f"idle: no inference target for workload {WORKLOAD} — {reason}"


def parse_hints(text: str, memory_text: str, limit: int) -> list[str]:
    """Validated hints from the model's answer: a JSON list of strings or {"hints": [...]}.

    Anything else (not JSON, another shape, a non-string item) raises HintsRejected. Items
    shorter than 3 or longer than 200 characters, duplicates (case-insensitive) and the
    memory's own text are dropped; at most `limit` are kept.
    """
    body = text.strip()
    if body.startswith("```"):  # a fenced block around the JSON is still the JSON
        body = body.strip("`").removeprefix("json").strip()
    try:
        value = json.loads(body)
    except ValueError:
        raise HintsRejected(f"the hints answer is not JSON: {text[:80]!r}") from None
    if isinstance(value, dict) and set(value) == {"hints"}:
        value = value["hints"]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise HintsRejected('the hints answer must be a list of strings or {"hints": [...]}')
    own = " ".join(memory_text.split()).casefold()
    kept: list[str] = []
    seen: set[str] = set()
    for item in value:
        hint = " ".join(item.split())
        key = hint.casefold()
        if not MIN_HINT_CHARS <= len(hint) <= MAX_HINT_CHARS or key in seen or key == own:
            continue
        seen.add(key)
        kept.append(hint)
        if len(kept) >= limit:
            break
    return kept


class HintService:
    """Generates and applies a memory's prospective hints (see the module docstring)."""

    def __init__(
        self,
        db: DatabaseHandle,
        config: HintsConfig,
        provider: ProviderSource,
        *,
        max_attempts: int = jobs.DEFAULT_MAX_ATTEMPTS,
    ) -> None:
        self._db = db
        self.config = config
        self._provider_source = provider
        self.max_attempts = max_attempts

    # -- readiness ------------------------------------------------------------------------

    def provider(self) -> ChatProvider:
        """The LLM for workload memory_extraction (ProviderNotConfigured when there is none,
        or when it is an agent harness: a hint is not worth starting the user's agent)."""
        provider = self._provider_source()
        if isinstance(provider, HarnessAgent):
            raise ProviderNotConfigured(
                f"{provider.label} (executor acpx) runs Dreaming passes only; hints need an "
                "HTTP provider"
            )
        return provider

    def idle_reason(self) -> str | None:
        """Why the worker cannot run (disabled, no LLM), or None when it can."""
        if not self.config.enabled:
            return DISABLED
        try:
            self.provider()
        except ProviderNotConfigured as exc:
            return not_configured_reason(exc)
        except ProviderError as exc:
            return f"idle: the {WORKLOAD} provider cannot be built — {exc.message}"
        return None

    def eligible(self, memory: Memory) -> str | None:
        """Why `memory` gets no hints (None: it does). Chunks and short texts are skipped."""
        if memory.is_deleted:
            return "deleted"
        if memory.type == CHUNK_MEMORY_TYPE:
            return "document_chunk"  # a document's text is already indexed as itself
        if len(memory.content.strip()) < self.config.min_content_chars:
            return "too_short"
        return None

    # -- one job --------------------------------------------------------------------------

    def generate(self, memory: Memory) -> list[str]:
        """Ask the LLM for the memory's hints; never inside a write transaction.

        Raises the provider's error (timeout, unavailable...) or HintsRejected (junk JSON).
        """
        assert_provider_call_allowed("prospective hints generation")
        limit = self.config.max
        request = ChatRequest(
            messages=(
                ChatMessage.system(SYSTEM_PROMPT.format(n=limit)),
                ChatMessage.user(memory.content[:MAX_PROMPT_CHARS]),
            ),
            max_output_tokens=self.config.max_tokens,
            temperature=0.2,
            timeout_s=self.config.timeout_ms / 1000,
            response_format="json",
        )
        response = self.provider().complete(request)
        return parse_hints(response.text, memory.content, limit)

    def apply(self, agent_id: str, memory_id: str, hints: Sequence[str]) -> int:
        """Write `hints` in one short transaction if the memory is still live; rows written."""
        if not hints:
            return 0
        with self._db.write() as conn:
            return hint_rows.insert_hints(conn, agent_id, memory_id, hints, limit=self.config.max)

    def run(self, agent_id: str, memory_id: str) -> HintOutcome:
        """One `prospective_hints` job: read, generate (no transaction), re-check and write."""
        conn = self._db.reader()
        memory = memories.get_memory(conn, agent_id, memory_id)
        skipped = "deleted" if memory is None else self.eligible(memory)
        if skipped is None and hint_rows.hints_for(conn, agent_id, [memory_id]):
            skipped = "has_hints"  # e.g. given by its structured remember payload
        if memory is None or skipped is not None:
            return HintOutcome(memory_id, skipped=skipped)
        proposed = self.generate(memory)
        written = self.apply(agent_id, memory_id, proposed)
        if proposed and not written:
            current = memories.get_memory(self._db.reader(), agent_id, memory_id)
            if current is None or current.is_deleted:
                return HintOutcome(memory_id, 0, len(proposed), skipped="deleted")
        return HintOutcome(memory_id, written, len(proposed))

    # -- enqueueing -----------------------------------------------------------------------

    def enqueue(self, targets: Sequence[tuple[str, str]], *, first: bool = False) -> int:
        """Queue a job per (agent id, memory id) without an open one; returns jobs created.
        `first` (new memories, the scan's finds): only for memories that never had a hint job
        of any state, checked under the dedupe lock — daemons sharing a PostgreSQL queue
        notice, scan and enqueue concurrently, and another may have run the memory's job
        already. An edited memory (its hints dropped) is queued again."""
        created = 0
        if not targets:
            return 0
        with self._db.write() as conn:
            jobs.lock_dedupe(conn, JOB_TYPE)
            for agent_id, memory_id in targets:
                if first and hint_rows.ever_queued(conn, job_type=JOB_TYPE, memory_id=memory_id):
                    continue
                _, new = jobs.enqueue(
                    conn,
                    JOB_TYPE,
                    agent_id=agent_id,
                    memory_id=memory_id,
                    payload={"memoryId": memory_id, "agentId": agent_id},
                    max_attempts=self.max_attempts,
                    dedupe_memory=True,
                )
                created += int(new)
        return created

    def scan(self, after_seq: int, window: int) -> hint_rows.HintScan:
        """One window of the backfill scan (live memories with neither hints nor a job)."""
        return hint_rows.memories_needing_hints(
            self._db.reader(),
            job_type=JOB_TYPE,
            after_seq=after_seq,
            window=window,
            min_chars=self.config.min_content_chars,
            skip_type=CHUNK_MEMORY_TYPE,
        )

    def hints_of(self, agent_id: str, memory_ids: Sequence[str]) -> dict[str, list[str]]:
        """The hints of the agent's memories among `memory_ids`."""
        return hint_rows.hints_for(self._db.reader(), agent_id, memory_ids)

    def count(self, agent_id: str | None = None) -> int:
        """Hint rows stored (of one agent, or all)."""
        return hint_rows.count(self._db.reader(), agent_id)
