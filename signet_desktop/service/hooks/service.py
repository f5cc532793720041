"""The hooks capability: what a harness asks at session start, on each prompt and at the end.

Every hook call names its harness, agent and session. The first hook of a session claims it
for one runtime path (`plugin` or `legacy`): the other path then gets 409, so a session is
never driven twice. A bypassed session gets empty answers (`bypassed: true`). Injected text
comes from `service/hooks/injection.py` only, within the `hooks.*` budgets, never another agent's
or project's memory, and never repeats a memory within one context epoch (the ledger keyed by
session key, agent and epoch; compaction-complete advances the epoch).

Session start carries MEMORY.md's Global Head (`service/memory_md/service.py: head`, already through
the safety gate, whole lines within a third of the budget) before the recalled memories; the
head's memories count as injected. Compaction-complete writes the summary as a compaction
artifact (`service/artifacts/service.py`) before it stores it as a memory.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from signet_desktop.config.sections import HooksConfig
from signet_desktop.domain import remember as checks
from signet_desktop.domain import scope
from signet_desktop.domain.errors import Conflict, InvalidInput
from signet_desktop.domain.memory import Actor, Memory
from signet_desktop.domain.recall import RecallQuery
from signet_desktop.domain.sessions import (
    HookSession,
    Turn,
    check_runtime_path,
    normalize_harness,
)
from signet_desktop.recall.sanitize import query_tokens
from signet_desktop.recall.transcript_channel import NAME as TRANSCRIPT
from signet_desktop.recall.transcript_channel import TurnScope
from signet_desktop.safety.defang import defang, quoted
from signet_desktop.safety.policy import WITHHELD_MARKER
from signet_desktop.service.artifacts.service import ArtifactService
from signet_desktop.service.hooks.injection import (
    HARD_MAX_CHARS,
    TURN_BLOCK_MIN_CHARS,
    Injection,
    bounded,
    data_head,
    in_scope,
    render_injection,
    render_turns,
)
from signet_desktop.service.knowledge.lookup import entity_memories
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.service.memory_md.service import Head, MemoryMdService
from signet_desktop.service.recall.service import RecallService
from signet_desktop.service.safety.service import ContentSafetyService, PromptGate, policy_gate
from signet_desktop.service.transcripts.service import CaptureOutcome, TranscriptService
from signet_desktop.storage import hook_sessions, memories
from signet_desktop.storage.handle import DatabaseHandle

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4
IDENTITY_FILE = "IDENTITY.md"
IDENTITY_CHARS = 600
RECENT_CONTEXT_CHARS = 800
REPEAT_INJECT = "[Signet] Memory for this session was loaded at its start; it still applies."
MAX_PROMPT_CHARS = 20_000
# Turns have no vectors, so the relevance test (which weighs words by meaning) cannot judge
# them: a turn is injected when its calibrated BM25 score (recall/lexical.py's scale: |bm25|
# over the query's IDF ceiling) reaches this floor, i.e. it holds a real share of the prompt's
# rarer words. `hooks.userPromptSubmit.minScore` raises it, never lowers it.
TURN_MIN_SCORE = 0.3
NO_SESSION_KEY = "no session key: nothing to record"
NO_TRANSCRIPT_FILE = "no transcript file: the session was closed without one"
DEFAULT_GUIDELINES = (
    "Summarise this session for long-term memory: decisions made and why, facts learned about "
    "the project and the people, open questions and next steps. Leave out tool output and "
    "anything secret. Plain sentences, one fact per line."
)


@dataclass(frozen=True, slots=True)
class HookContext:
    """Who is calling: agent, harness, session, project and runtime path (edge-extracted)."""

    agent_id: str
    harness: str
    session_key: str | None = None
    project: str | None = None
    runtime_path: str | None = None
    actor: Actor = field(default_factory=Actor)
    local: bool = True  # the machine's own user: reads server paths under its default roots


@dataclass(frozen=True, slots=True)
class Identity:
    name: str
    description: str


@dataclass(frozen=True, slots=True)
class SessionStartResult:
    identity: Identity
    memories: tuple[Memory, ...]
    recent_context: str
    inject: str
    bypassed: bool = False


@dataclass(frozen=True, slots=True)
class PromptResult:
    inject: str
    memory_count: int
    query_terms: tuple[str, ...]
    engine: str
    bypassed: bool = False


@dataclass(frozen=True, slots=True)
class SessionEndResult:
    capture: CaptureOutcome | None
    bypassed: bool = False
    skipped: str | None = None  # why nothing was recorded (answered 2xx: not an error)


@dataclass(frozen=True, slots=True)
class PreCompactionResult:
    summary_prompt: str
    guidelines: str
    bypassed: bool = False


@dataclass(frozen=True, slots=True)
class CompactionResult:
    memory_id: str | None
    context_epoch: int
    bypassed: bool = False
    skipped: str | None = None


class HookService:
    """Session start, prompt submit, session end and compaction for every harness."""

    def __init__(
        self,
        db: DatabaseHandle,
        config: HooksConfig,
        *,
        memories_: MemoryService,
        recall: RecallService,
        transcripts: TranscriptService,
        workspace: Path,
        artifacts: ArtifactService | None = None,
        memory_md: MemoryMdService | None = None,
        safety: ContentSafetyService | None = None,
    ) -> None:
        self._db = db
        self._gate: PromptGate = policy_gate if safety is None else safety.prompt_texts
        self._artifacts = artifacts
        self._memory_md = memory_md
        self._config = config
        self._memories = memories_
        self._recall = recall
        self._transcripts = transcripts
        self._workspace = workspace
        self._memory_channels = tuple(n for n in recall.channel_names if n != TRANSCRIPT)

    # -- sessions --------------------------------------------------------------------------

    def _session(self, ctx: HookContext) -> HookSession | None:
        """Claim or refresh the session (None without a session key); 409 on a path clash."""
        scope.check_agent_id(ctx.agent_id)
        harness = normalize_harness(ctx.harness)
        runtime_path = check_runtime_path(ctx.runtime_path)
        project = checks.check_text_field("project", ctx.project)
        if ctx.session_key is None:
            return None
        key = scope.check_session_key(ctx.session_key)
        assert key is not None
        with self._db.write() as conn:
            existing = hook_sessions.get_session(conn, ctx.agent_id, key)
            if (
                existing is not None
                and runtime_path is not None
                and existing.runtime_path is not None
                and existing.runtime_path != runtime_path
            ):
                raise Conflict(
                    f"session {key!r} is driven by the {existing.runtime_path} runtime path; "
                    f"the {runtime_path} path may not drive it too",
                    code="runtime_path_conflict",
                )
            return hook_sessions.touch_session(
                conn, ctx.agent_id, key, harness, project, runtime_path
            )

    def set_bypass(self, ctx: HookContext, bypassed: bool) -> HookSession:
        """Turn hooks off (or on) for one session."""
        session = self._session(ctx)
        if session is None:
            raise InvalidInput("sessionKey is required", code="session_required")
        with self._db.write() as conn:
            hook_sessions.set_bypassed(conn, ctx.agent_id, session.session_key, bypassed)
            found = hook_sessions.get_session(conn, ctx.agent_id, session.session_key)
        assert found is not None
        return found

    def _record_injected(self, session: HookSession | None, memory_ids: tuple[str, ...]) -> None:
        """The ledger: these memories are in the session's context for its current epoch."""
        if session is None or not memory_ids:
            return
        with self._db.write() as conn:
            hook_sessions.record_injected(
                conn, session.agent_id, session.session_key, session.context_epoch, memory_ids
            )

    # -- session start ---------------------------------------------------------------------

    def session_start(self, ctx: HookContext) -> SessionStartResult:
        """Identity, the memories that matter most here, recent context, and the inject text."""
        session = self._session(ctx)
        identity = self.identity()
        if session is not None and session.bypassed:
            return SessionStartResult(identity, (), "", "", bypassed=True)
        config = self._config.session_start
        budget = min(config.max_inject_tokens * CHARS_PER_TOKEN, HARD_MAX_CHARS)
        if session is not None and self._already_started(session):
            return SessionStartResult(identity, (), "", REPEAT_INJECT)
        head = self._head(ctx.agent_id, budget // 3)
        in_head = set(head.memory_ids)
        chosen = [m for m in self._start_memories(ctx) if m.id not in in_head]
        recent = self._recent_context(ctx) if config.include_recent_context else ""
        preamble = ""
        if config.include_identity and identity.description:
            preamble = bounded(f"You are {identity.name}. {identity.description}", budget // 3)
        data = "\n\n".join(part for part in (recent, head.text) if part)
        injection = render_injection(
            chosen,
            agent_id=ctx.agent_id,
            project=ctx.project,
            max_chars=budget,
            heading="Signet memory",
            preamble=preamble,
            data=data,
            gate=self._gate,
        )
        text = injection.text
        if not text and data:  # no memory to list: the head, recent context
            text = data_head("Signet memory", preamble, data).rstrip("\n")
        self._record_injected(session, (*head.memory_ids, *injection.memory_ids))
        shown = set(injection.memory_ids)
        head_rows = memories.get_memories(self._db.reader(), ctx.agent_id, head.memory_ids)
        listed = [head_rows[i] for i in head.memory_ids if i in head_rows]
        listed += [m for m in chosen if m.id in shown]
        return SessionStartResult(identity, self._gated(ctx.agent_id, listed), recent, text)

    def _gated(self, agent_id: str, listed: list[Memory]) -> tuple[Memory, ...]:
        """The listed memories as the safety gate lets them out (redacted, defanged; withheld
        dropped)."""
        texts = self._gate(agent_id, "memory", [(m.id, m.content) for m in listed])
        return tuple(
            replace(m, content=defang(text))
            for m, text in zip(listed, texts, strict=True)
            if text != WITHHELD_MARKER
        )

    def _head(self, agent_id: str, max_chars: int) -> Head:
        """MEMORY.md's Global Head for session start (empty without the projection)."""
        if self._memory_md is None:
            return Head("", ())
        return self._memory_md.head(agent_id, max_chars)

    def _already_started(self, session: HookSession) -> bool:
        """A repeat session-start in the same epoch (resume, clear) gets the short inject."""
        injected = hook_sessions.injected_ids(
            self._db.reader(), session.agent_id, session.session_key, session.context_epoch
        )
        return bool(injected)

    def _start_memories(self, ctx: HookContext) -> list[Memory]:
        """Pinned first, then importance blended with recency over the newest candidates."""
        config = self._config.session_start
        if config.recall_limit == 0:
            return []
        pool = memories.list_memories(
            self._db.reader(), ctx.agent_id, config.candidate_pool_limit, 0, None
        )
        eligible = [m for m in pool if in_scope(m, ctx.agent_id, ctx.project)]
        count = max(1, len(eligible) - 1)
        bias = config.recency_bias

        def weight(item: tuple[int, Memory]) -> float:
            position, memory = item  # 0 = newest
            recency = 1.0 - position / count
            return (2.0 if memory.pinned else 0.0) + bias * recency + (1 - bias) * memory.importance

        ranked = sorted(enumerate(eligible), key=weight, reverse=True)
        return [memory for _, memory in ranked[: config.recall_limit]]

    def _recent_context(self, ctx: HookContext) -> str:
        listing = self._transcripts.sessions(ctx.agent_id, project=ctx.project, limit=5)
        previous = [
            row for row in listing.rows if row.session_key != ctx.session_key and row.completed_at
        ]
        if not previous:
            return ""
        last = self._transcripts.get(ctx.agent_id, previous[0].session_key)
        tail = self._gate(
            ctx.agent_id, "transcript", [(last.session_key, last.content[-RECENT_CONTEXT_CHARS:])]
        )[0]
        if tail == WITHHELD_MARKER:
            return ""
        return f"Last session ({last.updated_at[:10]}), its last words: " + quoted(
            "…" + tail, RECENT_CONTEXT_CHARS
        )

    def identity(self) -> Identity:
        """Name and description from the workspace's IDENTITY.md (first heading, first text)."""
        path = self._workspace / IDENTITY_FILE
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return Identity("Signet", "")
        name = "Signet"
        description: list[str] = []
        for raw in text.splitlines():
            line = raw.strip()
            named = re.match(r"(?i)^(?:#+\s*|name:\s*)(.+)$", line)
            if named and name == "Signet":
                name = named.group(1).strip()[:80]
            elif line and not line.startswith("#"):
                description.append(line)
            elif description:
                break
        return Identity(name, bounded(" ".join(description), IDENTITY_CHARS))

    # -- prompt submit ---------------------------------------------------------------------

    def user_prompt_submit(
        self, ctx: HookContext, prompt: str, *, transcript_path: str | None = None
    ) -> PromptResult:
        """Entity lookup and recall for the prompt; inject what passes the relevance test and
        minScore (recall) or names an entity the prompt names (lookup), and was not injected
        before. A named
        transcript file is captured afterwards, off the hook's path (`capture_later`)."""
        result = self._prompt_submit(ctx, prompt)
        if transcript_path and ctx.session_key and not result.bypassed:
            self._transcripts.capture_later(
                ctx.agent_id,
                ctx.session_key,
                normalize_harness(ctx.harness),
                transcript_path,
                project=ctx.project,
                local=ctx.local,
            )
        return result

    def _prompt_submit(self, ctx: HookContext, prompt: str) -> PromptResult:
        if not isinstance(prompt, str):
            raise InvalidInput("userMessage must be text", code="prompt_invalid")
        session = self._session(ctx)
        config = self._config.user_prompt_submit
        terms = tuple(query_tokens(prompt[:MAX_PROMPT_CHARS]))
        if session is not None and session.bypassed:
            return PromptResult("", 0, terms, "none", bypassed=True)
        if not config.enabled or not terms:
            return PromptResult("", 0, terms, "none")
        result = self._recall.search(
            RecallQuery(
                query=prompt[:MAX_PROMPT_CHARS],
                agent_id=ctx.agent_id,
                limit=config.recall_limit,
                min_score=config.min_score,
                channels=self._memory_channels,  # turns: `_turn_evidence`, in this scope
                relevant_only=True,  # the hook's own threshold: weak hits are never injected
            ),
            gated=False,  # render_injection gates, leaving a withheld memory out
        )
        seen: set[str] = set()
        if session is not None:
            seen = hook_sessions.injected_ids(
                self._db.reader(), ctx.agent_id, session.session_key, session.context_epoch
            )
        # The narrow entity lookup first: memories linked to entities the prompt names.
        named = entity_memories(self._db.reader(), ctx.agent_id, prompt[:MAX_PROMPT_CHARS])
        candidates = {m.id: m for m in [*named, *(hit.memory for hit in result.hits)]}
        fresh = [memory for memory in candidates.values() if memory.id not in seen]
        injection = render_injection(
            fresh,
            agent_id=ctx.agent_id,
            project=ctx.project,
            max_chars=config.max_inject_chars,
            gate=self._gate,
        )
        shown = list(candidates.values())  # a turn one of these says takes no second slot
        evidence = self._turn_evidence(ctx, session, prompt, shown, seen, injection)
        text = "\n\n".join(part for part in (injection.text, evidence.text) if part)
        self._record_injected(session, (*injection.memory_ids, *evidence.memory_ids))
        return PromptResult(text, len(injection.memory_ids), terms, result.method)

    def _turn_evidence(
        self,
        ctx: HookContext,
        session: HookSession | None,
        prompt: str,
        memories_: Sequence[Memory],
        seen: set[str],
        injection: Injection,
    ) -> Injection:
        """What past sessions said, in the slots and characters the memories left: quoted and
        attributed, this agent and project only, never this session's own turns, never a turn
        already injected in this epoch (the ledger holds its `transcript:` id)."""
        config = self._config.user_prompt_submit
        room = config.recall_limit - len(injection.memory_ids)
        left = config.max_inject_chars - len(injection.text) - 2
        if room <= 0 or left < TURN_BLOCK_MIN_CHARS:  # no line could fit: no search
            return Injection("", ())
        turns = self._recall.transcript_hits(
            prompt[:MAX_PROMPT_CHARS],
            TurnScope(
                ctx.agent_id,
                ctx.project,
                "scoped",
                exclude_session=None if session is None else session.session_key,
            ),
            room,
            min_score=max(config.min_score, TURN_MIN_SCORE),
            memories=memories_,
        )
        return render_turns([t for t in turns if t.hit_id not in seen], max_chars=left)

    # -- session end -----------------------------------------------------------------------

    def session_end(
        self,
        ctx: HookContext,
        *,
        transcript_path: str | None = None,
        turns: list[Turn] | None = None,
    ) -> SessionEndResult:
        """Retain the transcript (canonical JSONL + completed row) and close the session.

        Nothing to record is not an error (the answer says why): no session key (Signet's
        OpenCode plugin), or a transcript file that does not exist (`claude mcp list` ends a
        session that never wrote one; a file removed before we read it). A path outside the
        allowed roots or a malformed one is still refused.
        """
        session = self._session(ctx)
        if session is None:
            return SessionEndResult(None, skipped=NO_SESSION_KEY)
        if session.bypassed:
            return SessionEndResult(None, bypassed=True)
        harness = normalize_harness(ctx.harness)
        capture: CaptureOutcome | None = None
        skipped: str | None = None
        if transcript_path is not None:
            try:
                capture = self._transcripts.capture_file(
                    ctx.agent_id,
                    session.session_key,
                    harness,
                    transcript_path,
                    project=ctx.project,
                    complete=True,
                    local=ctx.local,
                )
            except InvalidInput as exc:
                if exc.code != "transcript_not_found":
                    raise
                self._transcripts.complete(ctx.agent_id, session.session_key)
                skipped = NO_TRANSCRIPT_FILE
        elif turns is not None:
            capture = self._transcripts.capture(
                ctx.agent_id,
                session.session_key,
                harness,
                turns,
                project=ctx.project,
                complete=True,
            )
        else:
            self._transcripts.complete(ctx.agent_id, session.session_key)
        with self._db.write() as conn:
            hook_sessions.end_session(conn, ctx.agent_id, session.session_key)
        return SessionEndResult(capture, skipped=skipped)

    # -- compaction ------------------------------------------------------------------------

    def pre_compaction(self, ctx: HookContext) -> PreCompactionResult:
        """The prompt the harness uses to summarise before compacting (no epoch change)."""
        session = self._session(ctx)
        config = self._config.pre_compaction
        guidelines = config.summary_guidelines or DEFAULT_GUIDELINES
        if session is not None and session.bypassed:
            return PreCompactionResult("", guidelines, bypassed=True)
        prompt = guidelines
        if config.include_recent_memories and config.memory_limit:
            recent = memories.list_memories(
                self._db.reader(), ctx.agent_id, config.memory_limit * 4, 0, None
            )
            block = render_injection(
                recent[: config.memory_limit * 4],
                agent_id=ctx.agent_id,
                project=ctx.project,
                max_chars=2_000,
                heading="Already remembered (do not repeat)",
                gate=self._gate,
            )
            if block.text:
                prompt = f"{guidelines}\n\n{block.text}"
        return PreCompactionResult(bounded(prompt, HARD_MAX_CHARS), guidelines)

    def compaction_complete(self, ctx: HookContext, summary: str) -> CompactionResult:
        """Keep the compaction summary as a memory and start the session's next epoch (an
        empty summary is nothing to keep: answered with the reason, not refused)."""
        if summary is not None and not isinstance(summary, str):
            raise InvalidInput("summary must be text", code="summary_invalid")
        if not summary or not summary.strip():  # nothing is written, not even the session
            scope.check_agent_id(ctx.agent_id)
            key = scope.check_session_key(ctx.session_key) if ctx.session_key else None
            known = key and hook_sessions.get_session(self._db.reader(), ctx.agent_id, key)
            epoch = known.context_epoch if known else 0
            return CompactionResult(None, epoch, skipped="no summary: nothing to keep")
        session = self._session(ctx)
        if session is not None and session.bypassed:
            return CompactionResult(None, session.context_epoch, bypassed=True)
        self._compaction_artifact(ctx, summary)
        outcome = self._memories.remember(
            RememberRequest(
                content=summary.strip(),
                agent_id=ctx.agent_id,
                type="episodic",
                tags=("compaction-summary",),
                project=ctx.project,
                source_type="compaction",
                session_id=ctx.session_key,
            ),
            ctx.actor,
        )
        epoch = 0
        if session is not None:
            with self._db.write() as conn:
                epoch = hook_sessions.advance_epoch(conn, ctx.agent_id, session.session_key)
        return CompactionResult(outcome.memory.id, epoch)

    def _compaction_artifact(self, ctx: HookContext, summary: str) -> None:
        """The summary as an immutable compaction artifact; a failed write never fails the
        hook (the summary is still stored as a memory, and the index can be rebuilt)."""
        if self._artifacts is None or ctx.session_key is None:
            return
        try:
            self._artifacts.write_compaction(
                ctx.agent_id,
                ctx.session_key,
                summary.strip(),
                harness=ctx.harness,
                project=ctx.project,
            )
        except OSError:
            log.exception("compaction artifact for a session of %s was not written", ctx.agent_id)
