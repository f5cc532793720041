"""The Dreaming tool surface: the tools a pass's model may call, as ToolSpecs and handlers.

Read-mostly. Every input is checked against the pass's agent: an `agentId` that is not the
pass's is refused, sources are loaded through `dreaming/sources.py` in the pass's scope (a
source of another agent is a scope mismatch, an in-progress transcript is refused), graph and
attention reads are bound to the agent. The two writers, `attention_create` (a `flag`
operation) and `apply_ontology_ops`, go through the apply seam, which validates before it
writes. Malformed arguments and unknown tools become an error result given back to the
model (recorded with status `error`), never an exception out of the pass.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from signet_desktop.domain.dreaming import MutationCounts, ToolCallStatus
from signet_desktop.dreaming import sources
from signet_desktop.dreaming.evidence import EvidenceWindow
from signet_desktop.dreaming.runbook import Runbook
from signet_desktop.inference.types import ToolCall, ToolSpec

MAX_EXCERPT_CHARS = 2_000  # one excerpt
MAX_RESULT_CHARS = 16_000  # all excerpts of one result
MAX_OPS_PER_REQUEST = 100
MAX_LIMIT = 100
MAX_SEARCH_SOURCES = 50  # sources outside the window one search may look at


class ToolRefused(Exception):
    """The call is outside the pass's scope or rules (recorded as `refused`)."""


class ToolFailed(Exception):
    """The call's input is wrong (recorded as `error`); the message goes back to the model."""


class Seam(Protocol):
    """The apply seam bound to one pass (`dreaming/apply.py` behind it)."""

    def validate(self, operations: list[Any]) -> dict[str, Any]: ...

    def apply(self, operations: list[Any]) -> tuple[dict[str, Any], MutationCounts]: ...


class GraphReads(Protocol):
    """Graph reads bound to one agent (`storage/graph.py` behind it)."""

    def search_entities(
        self, query: str, entity_type: str | None, limit: int
    ) -> list[dict[str, Any]]: ...

    def get_entity(
        self, entity_id: str, include: tuple[str, ...], limit: int
    ) -> dict[str, Any] | None: ...

    def list_aspect_claims(
        self, entity_id: str, aspect_id: str | None, limit: int
    ) -> list[dict[str, Any]]: ...

    def walk_links(self, entity_id: str, depth: int, limit: int) -> list[dict[str, Any]]: ...


class NoGraph:
    """Graph reads when no graph store is wired: nothing is there yet."""

    def search_entities(
        self, query: str, entity_type: str | None, limit: int
    ) -> list[dict[str, Any]]:
        return []

    def get_entity(
        self, entity_id: str, include: tuple[str, ...], limit: int
    ) -> dict[str, Any] | None:
        return None

    def list_aspect_claims(
        self, entity_id: str, aspect_id: str | None, limit: int
    ) -> list[dict[str, Any]]:
        return []

    def walk_links(self, entity_id: str, depth: int, limit: int) -> list[dict[str, Any]]:
        return []


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What one call returned (`output` goes back to the model as JSON) and how it ended."""

    status: ToolCallStatus
    output: Any
    error: str | None = None
    arguments: Any = None
    mutations: MutationCounts = field(default_factory=MutationCounts)


@dataclass(slots=True)
class PassTools:
    """The tool surface of one pass: specs, dispatch, and what its writers did so far."""

    agent_id: str
    pass_id: str
    reader: Callable[[], sources.SourceReader]
    window: EvidenceWindow
    runbook: Runbook
    seam: Seam
    attention: Callable[[str, int], list[dict[str, Any]]]
    graph: GraphReads = field(default_factory=NoGraph)
    max_ops_per_request: int = MAX_OPS_PER_REQUEST
    max_ops_per_pass: int = 500
    on_runbook: Callable[[dict[str, Any]], None] | None = None
    # (terms, limit, kind) -> refs of the agent's sources containing every term
    search: Callable[[list[str], int, str | None], list[str]] | None = None
    ops_submitted: int = 0
    mutations: MutationCounts = field(default_factory=MutationCounts)

    def specs(self) -> tuple[ToolSpec, ...]:
        return SPECS

    def call(self, call: ToolCall) -> ToolOutcome:
        """Run one tool call; never raises for the model's mistakes."""
        try:
            arguments = call.arguments()
        except (ValueError, TypeError) as exc:
            message = f"arguments of {call.name!r} are not a JSON object: {exc}"
            return ToolOutcome("error", {"error": message}, message, call.arguments_json)
        handler = _HANDLERS.get(call.name)
        if handler is None:
            message = f"unknown tool {call.name!r}; tools: {', '.join(sorted(_HANDLERS))}"
            return ToolOutcome("error", {"error": message}, message, arguments)
        before = self.mutations
        try:
            self._check_agent(arguments)
            output = handler(self, arguments)
        except ToolRefused as exc:
            return ToolOutcome("refused", {"refused": str(exc)}, str(exc), arguments)
        except ToolFailed as exc:
            return ToolOutcome("error", {"error": str(exc)}, str(exc), arguments)
        delta = MutationCounts(
            self.mutations.applied - before.applied,
            self.mutations.skipped - before.skipped,
            self.mutations.failed - before.failed,
        )
        return ToolOutcome("ok", output, None, arguments, delta)

    def _check_agent(self, arguments: Mapping[str, Any]) -> None:
        agent = arguments.get("agentId", arguments.get("agent_id"))
        if agent is not None and agent != self.agent_id:
            raise ToolRefused(f"agent scope: this pass works for agent {self.agent_id!r} only")

    # -- evidence --------------------------------------------------------------------------

    def _source(self, ref: object) -> sources.Source:
        source = self.reader().load(ref)
        if not source.ok:
            if source.code in (sources.SCOPE_MISMATCH, sources.IN_PROGRESS, sources.BLOCKED):
                raise ToolRefused(source.reason or "source refused")
            raise ToolFailed(source.reason or "source unavailable")
        return source

    def search_evidence(self, args: Mapping[str, Any]) -> dict[str, Any]:
        chunk = _int(args, "chunkSize", MAX_EXCERPT_CHARS, 100, MAX_EXCERPT_CHARS)
        offset = _int(args, "offset", 0, 0, 10_000_000)
        ref = args.get("sourceRef")
        if ref is not None:
            source = self._source(ref)
            text = source.text[offset : offset + chunk]
            end = offset + len(text)
            return {
                "results": [{"source_ref": str(source.ref), "offset": offset, "excerpt": text}],
                "total_chars": len(source.text),
                "next_offset": end if end < len(source.text) else None,
            }
        query = _str(args, "query", required=False)
        kind = _str(args, "kind", required=False)
        terms = [t for t in re.findall(r"\w+", (query or "").lower()) if len(t) > 1]
        reader = self.reader()
        results: list[dict[str, Any]] = []
        budget = MAX_RESULT_CHARS
        refs = [item.ref for item in self.window.items if not kind or item.kind == kind]
        if terms and self.search is not None:  # beyond the window: every scoped source
            refs += self.search(terms, MAX_SEARCH_SOURCES, kind or None)
        for ref in dict.fromkeys(refs):
            source = reader.load(ref)
            if not source.ok:
                continue  # in progress, withheld or gone: never an excerpt
            for start in _matches(source.text, terms):
                excerpt = _excerpt(source.text, start, min(chunk, budget))
                if excerpt:
                    results.append({"source_ref": ref, "offset": start, "excerpt": excerpt})
                    budget -= len(excerpt)
            if budget <= 0:
                break
        return {"results": results, "query": query, "truncated": budget <= 0}

    def get_evidence(self, args: Mapping[str, Any]) -> dict[str, Any]:
        source = self._source(_str(args, "sourceRef"))
        offset = _int(args, "offset", 0, 0, 10_000_000)
        length = _int(args, "length", MAX_RESULT_CHARS, 1, MAX_RESULT_CHARS)
        text = source.text[offset : offset + length]
        end = offset + len(text)
        return {
            "source_ref": str(source.ref),
            "offset": offset,
            "text": text,
            "total_chars": len(source.text),
            "next_offset": end if end < len(source.text) else None,
        }

    # -- graph -----------------------------------------------------------------------------

    def search_entities(self, args: Mapping[str, Any]) -> dict[str, Any]:
        limit = _int(args, "limit", 20, 1, MAX_LIMIT)
        found = self.graph.search_entities(
            _str(args, "query"), _str(args, "type", required=False), limit
        )
        return {"entities": found[:limit]}

    def get_entity(self, args: Mapping[str, Any]) -> dict[str, Any]:
        include = args.get("include") or ["aspects", "links"]
        if not isinstance(include, list) or not all(isinstance(x, str) for x in include):
            raise ToolFailed("include must be a list of 'aspects' and/or 'links'")
        limit = _int(args, "limit", 20, 1, 50)
        entity = self.graph.get_entity(_str(args, "entityId"), tuple(include), limit)
        if entity is None:
            raise ToolFailed("no such entity in this agent's graph")
        return {"entity": entity}

    def list_aspect_claims(self, args: Mapping[str, Any]) -> dict[str, Any]:
        limit = _int(args, "limit", 50, 1, MAX_LIMIT)
        claims = self.graph.list_aspect_claims(
            _str(args, "entityId"), _str(args, "aspectId", required=False), limit
        )
        return {"claims": claims[:limit]}

    def walk_links(self, args: Mapping[str, Any]) -> dict[str, Any]:
        depth = _int(args, "depth", 1, 1, 3)
        limit = _int(args, "limit", 50, 1, MAX_LIMIT)
        return {"links": self.graph.walk_links(_str(args, "entityId"), depth, limit)[:limit]}

    # -- attention, runbook ----------------------------------------------------------------

    def attention_list(self, args: Mapping[str, Any]) -> dict[str, Any]:
        status = _str(args, "status", required=False) or "pending"
        if status not in ("pending", "resolved", "declined"):
            raise ToolFailed("status must be pending, resolved or declined")
        return {"attention": self.attention(status, _int(args, "limit", 50, 1, MAX_LIMIT))}

    def attention_create(self, args: Mapping[str, Any]) -> dict[str, Any]:
        subject = _str(args, "subjectRef")
        details = args.get("details", "")
        if isinstance(details, dict):
            details = json.dumps(details, ensure_ascii=False)
        if not isinstance(details, str):
            raise ToolFailed("details must be a string or an object")
        operation: dict[str, Any] = {
            "operation": "flag",
            "payload": {
                "subjectRef": subject,
                "details": details,
                "priority": _int(args, "priority", 50, 0, 100),
            },
        }
        if isinstance(args.get("reason"), str):
            operation["reason"] = args["reason"]
        return self._apply([operation])

    def validate_proposal(self, args: Mapping[str, Any]) -> dict[str, Any]:
        return self.seam.validate(self._operations(args))

    def runbook_read(self, args: Mapping[str, Any]) -> dict[str, Any]:
        return self.runbook.record()

    def runbook_write(self, args: Mapping[str, Any]) -> dict[str, Any]:
        try:
            notes = self.runbook.write(args.get("summary"), args.get("openQuestions"))
        except ValueError as exc:
            raise ToolFailed(str(exc)) from exc
        if self.on_runbook is not None:
            self.on_runbook(self.runbook.record())
        return notes

    def apply_ontology_ops(self, args: Mapping[str, Any]) -> dict[str, Any]:
        return self._apply(self._operations(args))

    def _operations(self, args: Mapping[str, Any]) -> list[Any]:
        operations = args.get("operations")
        if not isinstance(operations, list) or not operations:
            raise ToolFailed("operations must be a non-empty list")
        if len(operations) > self.max_ops_per_request:
            raise ToolFailed(
                f"{len(operations)} operations in one request; at most"
                f" {self.max_ops_per_request} (split them)"
            )
        return operations

    def _apply(self, operations: list[Any]) -> dict[str, Any]:
        left = self.max_ops_per_pass - self.ops_submitted
        if len(operations) > left:
            raise ToolRefused(
                f"write cap: this pass may submit {self.max_ops_per_pass} operations;"
                f" {max(0, left)} left"
            )
        self.ops_submitted += len(operations)
        report, counts = self.seam.apply(operations)
        self.mutations = self.mutations + counts
        return report


def _str(args: Mapping[str, Any], name: str, *, required: bool = True) -> str:
    value = args.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise ToolFailed(f"{name} must be a non-empty string")
    return value


def _int(args: Mapping[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = args.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolFailed(f"{name} must be an integer")
    if not low <= value <= high:
        raise ToolFailed(f"{name} must be between {low} and {high}")
    return value


def _matches(text: str, terms: list[str]) -> list[int]:
    """Where the first query term occurs (all terms must occur); no terms: the start."""
    if not terms:
        return [0]
    lower = text.lower()
    if not all(term in lower for term in terms):
        return []
    return [max(0, lower.index(terms[0]) - 200)]


def _excerpt(text: str, start: int, size: int) -> str:
    return text[start : start + max(0, min(size, MAX_EXCERPT_CHARS))]


def _schema(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"agentId": {"type": "string"}, **properties},
        "required": list(required),
        "additionalProperties": False,
    }


_STR = {"type": "string"}
_INT = {"type": "integer"}
_OPERATION = {
    "type": "object",
    "properties": {
        "operation": {"type": "string"},
        "payload": {"type": "object"},
        "evidence": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"quote": _STR, "source_ref": _STR},
                "required": ["quote", "source_ref"],
            },
        },
        "provenance": _STR,
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "reason": _STR,
    },
    "required": ["operation", "payload", "confidence"],
}
_OPERATIONS = {"type": "array", "items": _OPERATION, "minItems": 1, "maxItems": 100}

SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "search_evidence",
        "Search the agent's evidence: this pass's window first, then every completed source"
        " containing all query terms. With sourceRef: read that source from offset in chunks"
        " (≤2000 characters). Excerpts total at most 16000 characters. In-progress"
        " transcripts are refused.",
        _schema(
            {"query": _STR, "kind": _STR, "sourceRef": _STR, "offset": _INT, "chunkSize": _INT}
        ),
    ),
    ToolSpec(
        "get_evidence",
        "The canonical text of one source (memory:<id>, transcript:<key>, artifact:<path>,"
        " summary:<id>) from offset, at most 16000 characters.",
        _schema({"sourceRef": _STR, "offset": _INT, "length": _INT}, ("sourceRef",)),
    ),
    ToolSpec(
        "search_entities",
        "Find entities by name (limit ≤100).",
        _schema({"query": _STR, "type": _STR, "limit": _INT}, ("query",)),
    ),
    ToolSpec(
        "get_entity",
        "One entity with its aspects and/or links.",
        _schema(
            {"entityId": _STR, "include": {"type": "array", "items": _STR}, "limit": _INT},
            ("entityId",),
        ),
    ),
    ToolSpec(
        "list_aspect_claims",
        "The claims of an entity (optionally one aspect).",
        _schema({"entityId": _STR, "aspectId": _STR, "limit": _INT}, ("entityId",)),
    ),
    ToolSpec(
        "walk_links",
        "Links around an entity, up to depth 3.",
        _schema({"entityId": _STR, "depth": _INT, "limit": _INT}, ("entityId",)),
    ),
    ToolSpec(
        "attention_list",
        "Attention records of this agent (default: pending).",
        _schema({"status": _STR, "limit": _INT}),
    ),
    ToolSpec(
        "attention_create",
        "Flag something for a later pass (becomes a pending attention record).",
        _schema(
            {"subjectRef": _STR, "details": _STR, "priority": _INT, "reason": _STR},
            ("subjectRef",),
        ),
    ),
    ToolSpec(
        "validate_proposal",
        "Check operations without applying them: schema, scope, quotes, provenance, caps.",
        _schema({"operations": _OPERATIONS}, ("operations",)),
    ),
    ToolSpec("runbook_read", "This pass's runbook and notes.", _schema({})),
    ToolSpec(
        "runbook_write",
        "Write the pass summary (≤2000 characters) and open questions (≤20).",
        _schema({"summary": _STR, "openQuestions": {"type": "array", "items": _STR}}),
    ),
    ToolSpec(
        "apply_ontology_ops",
        "Apply 1..100 operations through the apply seam; each content operation cites exact"
        " quotes {quote, source_ref}; archive/merge cite provenance attention:<id>.",
        _schema({"operations": _OPERATIONS}, ("operations",)),
    ),
)

_HANDLERS: dict[str, Callable[[PassTools, Mapping[str, Any]], dict[str, Any]]] = {
    "search_evidence": PassTools.search_evidence,
    "get_evidence": PassTools.get_evidence,
    "search_entities": PassTools.search_entities,
    "get_entity": PassTools.get_entity,
    "list_aspect_claims": PassTools.list_aspect_claims,
    "walk_links": PassTools.walk_links,
    "attention_list": PassTools.attention_list,
    "attention_create": PassTools.attention_create,
    "validate_proposal": PassTools.validate_proposal,
    "runbook_read": PassTools.runbook_read,
    "runbook_write": PassTools.runbook_write,
    "apply_ontology_ops": PassTools.apply_ontology_ops,
}
TOOL_NAMES = tuple(_HANDLERS)


def result_text(outcome: ToolOutcome) -> str:
    """The tool message content sent back to the model."""
    return json.dumps(outcome.output, ensure_ascii=False, default=str)
