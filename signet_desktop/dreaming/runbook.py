"""The runbook of a pass: instructions per mode and focus, caps, and the agent's notes.

Stored in `dreaming_passes.runbook_json` when the pass starts and again on every
`runbook_write`, so an inspector sees what the model was told and what it wrote down. The
summary (≤ 2,000 characters) and open questions (≤ 20) carry over to the next pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from signet_desktop.domain.dreaming import PassMode

MAX_SUMMARY_CHARS = 2_000
MAX_OPEN_QUESTIONS = 20
MAX_QUESTION_CHARS = 500

COMMON = (
    "You consolidate one agent's episodic evidence into its knowledge graph: entities,"
    " aspects, claims and links. You change it only through apply_ontology_ops.",
    "Every content operation (create_entity, create_aspect, add_claim_value,"
    " set_claim_value, supersede_claim_value, create_link, rename_entity) cites at least one"
    " evidence item {quote, source_ref}: the quote copied exactly, character for character,"
    " from the source named by source_ref (for example memory:<id> or transcript:<key>)."
    " Paraphrased or invented quotes are rejected. Every operation states its confidence"
    " (0..1).",
    "Use search_evidence and get_evidence to read more; only completed sources are evidence.",
    "Before large changes call validate_proposal; apply in batches of at most {per_request}"
    " operations; this pass may apply at most {per_pass} operations in all.",
    "When unsure, create attention (attention_create) instead of guessing.",
    "Finish with runbook_write: a short summary and any open questions, then stop calling tools.",
)
HYGIENE = (
    "Hygiene focus: resolve pending attention records. archive_* and merge_* operations"
    " must carry provenance 'attention:<id>' of a pending attention record whose subject is"
    " the operation's target; decline_attention what needs no change.",
)
CONTENT = (
    "Content focus: read the new evidence, add or update entities, claims and links it"
    " supports, each with exact quotes.",
)


@dataclass(slots=True)
class Runbook:
    """The runbook of one pass (mutable: `runbook_write` updates the notes)."""

    mode: PassMode
    focus: str
    caps: dict[str, int]
    instructions: tuple[str, ...]
    summary: str = ""
    open_questions: list[str] = field(default_factory=list)
    previous_summary: str = ""
    previous_open_questions: tuple[str, ...] = ()
    writes: int = 0

    def record(self) -> dict[str, Any]:
        """The JSON stored in `dreaming_passes.runbook_json`."""
        return {
            "mode": self.mode,
            "focus": self.focus,
            "caps": dict(self.caps),
            "instructions": list(self.instructions),
            "summary": self.summary,
            "openQuestions": list(self.open_questions),
            "previous": {
                "summary": self.previous_summary,
                "openQuestions": list(self.previous_open_questions),
            },
            "writes": self.writes,
        }

    def prompt_text(self) -> str:
        lines = [f"Pass mode: {self.mode} (focus: {self.focus})."]
        lines += [f"- {text}" for text in self.instructions]
        if self.previous_summary:
            lines.append(f"Previous pass summary: {self.previous_summary}")
        if self.previous_open_questions:
            lines.append("Open questions from the previous pass:")
            lines += [f"  - {q}" for q in self.previous_open_questions]
        return "\n".join(lines)

    def write(self, summary: object, open_questions: object) -> dict[str, Any]:
        """`runbook_write`: validate and store the notes; ValueError names what is wrong."""
        if summary is not None:
            if not isinstance(summary, str):
                raise ValueError("summary must be a string")
            if len(summary) > MAX_SUMMARY_CHARS:
                raise ValueError(f"summary is longer than {MAX_SUMMARY_CHARS} characters")
        if open_questions is not None:
            if not isinstance(open_questions, list) or not all(
                isinstance(q, str) for q in open_questions
            ):
                raise ValueError("openQuestions must be a list of strings")
            if len(open_questions) > MAX_OPEN_QUESTIONS:
                raise ValueError(f"at most {MAX_OPEN_QUESTIONS} open questions")
            if any(len(q) > MAX_QUESTION_CHARS for q in open_questions):
                raise ValueError(f"an open question is longer than {MAX_QUESTION_CHARS}")
        if summary is not None:
            self.summary = summary
        if open_questions is not None:
            self.open_questions = list(open_questions)
        self.writes += 1
        return {"summary": self.summary, "openQuestions": list(self.open_questions)}


def build_runbook(
    mode: PassMode,
    focus: str,
    *,
    per_request: int,
    per_pass: int,
    previous: dict[str, Any] | None = None,
) -> Runbook:
    """The runbook for `mode`/`focus`, carrying the previous pass's notes."""
    extra = {"hygiene": HYGIENE, "content": CONTENT}.get(focus, HYGIENE + CONTENT)
    instructions = tuple(
        text.replace("{per_request}", str(per_request)).replace("{per_pass}", str(per_pass))
        for text in COMMON + extra
    )
    previous = previous or {}
    questions = previous.get("openQuestions") or []
    return Runbook(
        mode=mode,
        focus=focus,
        caps={"opsPerRequest": per_request, "opsPerPass": per_pass},
        instructions=instructions,
        previous_summary=str(previous.get("summary") or "")[:MAX_SUMMARY_CHARS],
        previous_open_questions=tuple(str(q) for q in questions[:MAX_OPEN_QUESTIONS]),
    )
