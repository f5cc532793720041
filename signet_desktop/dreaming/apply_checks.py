"""The apply seam's pre-write checks: a pure read that says, per operation, valid or why not.

Order per operation: schema (`operations.parse_operation`), targets (every id resolves to an
ACTIVE row of this agent; another agent's row reads as not found), evidence (each cited quote
occurs verbatim, trimmed, in a usable source of this agent: `dreaming/sources.py`), hygiene
provenance (archive_* / merge_* name a pending attention row of this agent whose subject is
the target), control rules (flag needs a subject; decline_attention a pending row). In
create_aspect, the claim operations and create_link, an id may be `$<index>`: the row an
earlier valid create_entity / create_aspect of the same request makes (or finds). A valid
operation is then either written directly or, when it is review-only, proposed.

Review-only (becomes a pending `ontology_proposals` row instead of a write):
- an operation marked `risk: "high"`;
- rename_entity or archive_entity of a pinned entity;
- merge_entities of more than `ApplyCaps.merge_review_size` entities (survivor included).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from signet_desktop.domain.entities import canonical_entity_name
from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.knowledge import Entity, check_entity_type
from signet_desktop.domain.ontology import Attention
from signet_desktop.dreaming import operations as ops
from signet_desktop.dreaming.operations import Operation, Rejection
from signet_desktop.dreaming.sources import SourceReader
from signet_desktop.storage import attention as attention_rows
from signet_desktop.storage import dreaming_operations as op_rows
from signet_desktop.storage import knowledge_reads as graph
from signet_desktop.storage.connect import Connection

REFERENCE = re.compile(r"\$(\d{1,3})")  # `$<index>`: the row an earlier operation creates
REFERENCE_FIELDS = ("entity_id", "aspect_id", "from_entity_id", "to_entity_id")
SUBJECT_KINDS = {
    "archive_entity": "entity",
    "archive_aspect": "aspect",
    "archive_claim_value": "claim",
    "archive_link": "link",
    "merge_entities": "entity",
    "merge_aspects": "aspect",
}


@dataclass(frozen=True, slots=True)
class ApplyCaps:
    """Write caps: per request, per pass, batch size, and the merge size that needs review."""

    max_per_request: int = 100
    max_per_pass: int = 500
    batch_size: int = 10
    merge_review_size: int = 3


DEFAULT_CAPS = ApplyCaps()


@dataclass(frozen=True, slots=True)
class OperationVerdict:
    """What the checks decided for one operation: `valid`, `propose` or `rejected`."""

    index: int
    operation: str
    status: str
    code: str | None = None
    reason: str | None = None
    parsed: Operation | None = None
    raw: Any = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return self.status != "rejected"


class Refused(Exception):
    """One check failed: a code and a reason for the operation's verdict."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


def _reject(index: int, name: str, code: str, reason: str, raw: Any) -> OperationVerdict:
    return OperationVerdict(index, name, "rejected", code, reason, raw=raw)


def validate_operations(
    conn: Connection,
    *,
    agent_id: str,
    pass_id: str | None,
    operations: Sequence[Any],
    caps: ApplyCaps = DEFAULT_CAPS,
    workspace: Path | None = None,
    review: bool = True,
) -> list[OperationVerdict]:
    """A verdict per operation (pure read). `review=False` applies review-only operations
    directly (a person approved the proposal)."""
    raws = list(operations)
    if len(raws) > caps.max_per_request:
        reason = (
            f"{len(raws)} operations in one request exceed the cap of {caps.max_per_request}"
            " (max_per_request); nothing was applied"
        )
        return [
            _reject(i, _name_of(raw), "request_cap_exceeded", reason, raw)
            for i, raw in enumerate(raws)
        ]
    checker = _Checker(conn, agent_id, SourceReader(conn, agent_id, workspace), caps, review)
    verdicts: list[OperationVerdict] = []
    for i, raw in enumerate(raws):
        checker.earlier = verdicts
        verdicts.append(checker.check(ops.parse_operation(raw, i), raw))
    return _pass_cap(conn, agent_id, pass_id, verdicts, caps)


def _name_of(raw: Any) -> str:
    name = raw.get("operation") if isinstance(raw, dict) else None
    return name if isinstance(name, str) else ""


def _pass_cap(
    conn: Connection,
    agent_id: str,
    pass_id: str | None,
    verdicts: list[OperationVerdict],
    caps: ApplyCaps,
) -> list[OperationVerdict]:
    """Valid operations beyond the pass's remaining write budget are rejected (in order)."""
    if pass_id is None:
        return verdicts
    left = caps.max_per_pass - op_rows.written_in_pass(conn, agent_id, pass_id)
    out = []
    for verdict in verdicts:
        if verdict.ok:
            if left <= 0:
                verdict = _reject(
                    verdict.index,
                    verdict.operation,
                    "pass_cap_exceeded",
                    f"the pass reached its cap of {caps.max_per_pass} written operations"
                    " (max_per_pass)",
                    verdict.raw,
                )
            left -= 1
        out.append(verdict)
    return out


class _Checker:
    def __init__(
        self, conn: Connection, agent_id: str, reader: SourceReader, caps: ApplyCaps, review: bool
    ) -> None:
        self.conn = conn
        self.agent = agent_id
        self.reader = reader
        self.caps = caps
        self.review = review
        self.earlier: list[OperationVerdict] = []

    def check(self, parsed: Operation | Rejection, raw: Any) -> OperationVerdict:
        if isinstance(parsed, Rejection):
            return _reject(parsed.index, parsed.operation, parsed.code, parsed.reason, raw)
        try:
            review_reason = self._targets(parsed)
            self._evidence(parsed)
            self._provenance(parsed)
        except Refused as refused:
            return _reject(parsed.index, parsed.name, refused.code, refused.reason, raw)
        if parsed.envelope.risk == "high":
            review_reason = review_reason or 'risk "high" needs review'
        if review_reason and self.review:
            return OperationVerdict(
                parsed.index, parsed.name, "propose", "review_only", review_reason, parsed, raw
            )
        return OperationVerdict(parsed.index, parsed.name, "valid", parsed=parsed, raw=raw)

    # -- targets ---------------------------------------------------------------------------

    def reference(self, value: str, made_by: str) -> Operation | None:
        """The earlier operation `$<index>` names (it must be valid and a `made_by`), or None
        when `value` is a plain id."""
        match = REFERENCE.fullmatch(value)
        if match is None:
            return None
        index = int(match[1])
        if index >= len(self.earlier):
            raise Refused(
                "reference_invalid", f"{value} must name an earlier operation of this request"
            )
        earlier = self.earlier[index]
        if earlier.operation != made_by:
            raise Refused(
                "reference_invalid",
                f"{value} names a {earlier.operation or 'bad operation'}, not a {made_by}",
            )
        if earlier.status != "valid" or earlier.parsed is None:
            raise Refused(
                "reference_invalid",
                f"{value} names operation {index}, which will not be applied"
                f" ({earlier.code or earlier.status})",
            )
        return earlier.parsed

    def entity_target(self, value: str) -> None:
        """An active entity of this agent, or `$<index>` of a create_entity before it."""
        if self.reference(value, "create_entity") is None:
            self.entity(value)

    def aspect_target(self, value: str, entity_value: str) -> None:
        """An active aspect of that entity, or `$<index>` of a create_aspect on it."""
        made = self.reference(value, "create_aspect")
        if made is None:
            if REFERENCE.fullmatch(entity_value):
                raise Refused(
                    "target_mismatch", f"aspect {value} is not an aspect of {entity_value}"
                )
            self.aspect(value, entity_value)
            return
        owner: Any = made.payload
        if owner.entity_id != entity_value:
            raise Refused("target_mismatch", f"{value} is an aspect of {owner.entity_id}")

    def entity(self, entity_id: str) -> Entity:
        return _active(graph.entity(self.conn, self.agent, entity_id), f"entity {entity_id}")

    def aspect(self, aspect_id: str, entity_id: str | None = None) -> str:
        found = _active(graph.aspect(self.conn, self.agent, aspect_id), f"aspect {aspect_id}")
        if entity_id is not None and found.entity_id != entity_id:
            raise Refused("target_mismatch", f"aspect {aspect_id} is not an aspect of {entity_id}")
        self.entity(found.entity_id)
        return found.entity_id

    def claim(self, attribute_id: str, aspect_id: str | None = None) -> None:
        found = _active(
            graph.claim(self.conn, self.agent, attribute_id), f"claim value {attribute_id}"
        )
        if aspect_id is not None and found.aspect_id != aspect_id:
            raise Refused(
                "target_mismatch", f"claim value {attribute_id} is not under aspect {aspect_id}"
            )

    def link(self, link_id: str) -> None:
        _active(graph.dependency(self.conn, self.agent, link_id), f"link {link_id}")

    def _targets(self, op: Operation) -> str | None:
        """Resolve every target; the reason the operation needs review, if it does."""
        p: Any = op.payload
        name = op.name
        if name == "create_entity":
            try:
                check_entity_type(p.type)
            except InvalidInput as exc:
                raise Refused("payload_malformed", exc.message) from exc
            if not canonical_entity_name(p.name):
                raise Refused("payload_malformed", "entity name has no letters or digits")
        elif name == "create_aspect":
            self.entity_target(p.entity_id)
        elif name == "rename_aspect":
            raise Refused(
                "operation_unsupported", "rename_aspect is not supported by the graph writer yet"
            )
        elif name in ("add_claim_value", "set_claim_value", "supersede_claim_value"):
            self.entity_target(p.entity_id)
            self.aspect_target(p.aspect_id, p.entity_id)
            if name == "supersede_claim_value" and p.attribute_id:
                self.claim(p.attribute_id, p.aspect_id)
        elif name == "create_link":
            if p.from_entity_id == p.to_entity_id:
                raise Refused("payload_malformed", "a link needs two different entities")
            self.entity_target(p.from_entity_id)
            self.entity_target(p.to_entity_id)
        elif name == "update_link":
            self.link(p.link_id)
        elif name == "rename_entity":
            if self.entity(p.entity_id).pinned:
                return "renaming a pinned entity needs review"
        elif name == "archive_entity":
            if self.entity(p.target).pinned:
                return "archiving a pinned entity needs review"
        elif name == "archive_aspect":
            self.aspect(p.target)
        elif name == "archive_claim_value":
            self.claim(p.target)
        elif name == "archive_link":
            self.link(p.target)
        elif name == "merge_entities":
            return self._merge_entities(p)
        elif name == "merge_aspects":
            if p.target in p.sources:
                raise Refused("payload_malformed", "merge_aspects: the target is among the sources")
            self.aspect(p.target, p.entity_id)
            for source in p.sources:
                self.aspect(source, p.entity_id)
            if p.new_name:
                raise Refused(
                    "operation_unsupported",
                    "merge_aspects newName (an aspect rename) is not supported by the graph"
                    " writer yet; leave it out",
                )
        elif name == "flag":
            if not p.subject_ref.strip():
                raise Refused("subject_required", "flag needs a subjectRef")
        elif name == "decline_attention":
            self._pending_attention(p.attention_id)
        return None

    def _merge_entities(self, p: Any) -> str | None:
        ids = list(dict.fromkeys([*p.targets, p.survivor]))
        if len(ids) < 2:
            raise Refused("payload_malformed", "merge_entities needs two different entities")
        survivor = self.entity(p.survivor)
        for entity_id in ids:
            found = self.entity(entity_id)
            if found.canonical_name != survivor.canonical_name:
                raise Refused(
                    "merge_not_duplicates",
                    f"entity {entity_id} ({found.name!r}) is not in the duplicate group of"
                    f" {survivor.name!r} (same canonical name)",
                )
            if found.pinned and entity_id != survivor.id:
                raise Refused("merge_pinned", f"entity {entity_id} is pinned; it is never merged")
        if len(ids) > self.caps.merge_review_size:
            return f"a merge of {len(ids)} entities needs review"
        return None

    # -- evidence and provenance -----------------------------------------------------------

    def _evidence(self, op: Operation) -> None:
        evidence = op.envelope.evidence
        if op.kind == "content" and not evidence:
            raise Refused(
                "evidence_required", f"{op.name} must cite at least one exact quote (evidence)"
            )
        for item in evidence:
            source = self.reader.load(item.source_ref)
            if not source.ok:
                raise Refused(source.code or "source_invalid", source.reason or "bad source")
            if not source.contains(item.quote):
                raise Refused("quote_not_found", f"quote not found in {item.source_ref}")

    def _provenance(self, op: Operation) -> None:
        provenance = op.envelope.provenance
        attention_id = op.attention_id()
        if provenance and attention_id is None:
            raise Refused("provenance_invalid", 'provenance must be "attention:<id>"')
        if op.kind != "hygiene":
            if attention_id is not None:
                self._pending_attention(attention_id)
            return
        if attention_id is None:
            raise Refused(
                "attention_required",
                f'{op.name} needs provenance "attention:<id>" naming a pending attention record',
            )
        row = self._pending_attention(attention_id)
        targets = _hygiene_targets(op)
        if not _subject_matches(row.subject_ref, SUBJECT_KINDS[op.name], targets):
            raise Refused(
                "attention_target_mismatch",
                f"attention {attention_id} is about {row.subject_ref!r}, not {', '.join(targets)}",
            )

    def _pending_attention(self, attention_id: str) -> Attention:
        row = attention_rows.get_attention(self.conn, self.agent, attention_id)
        if row is None:
            raise Refused(
                "attention_not_found", f"attention {attention_id} not found in this agent's scope"
            )
        if row.status != "pending":
            raise Refused("attention_not_pending", f"attention {attention_id} is {row.status}")
        return row


def _hygiene_targets(op: Operation) -> list[str]:
    p: Any = op.payload
    if op.name == "merge_entities":
        return list(dict.fromkeys([*p.targets, p.survivor]))
    if op.name == "merge_aspects":
        return [p.target, *p.sources]
    return [p.target]


def _subject_matches(subject_ref: str, kind: str, targets: Sequence[str]) -> bool:
    """`<kind>:<id>` (or a bare id) naming one of the targets."""
    subject = subject_ref.strip()
    prefix, sep, rest = subject.partition(":")
    subject_id = rest.strip() if sep and prefix.strip().lower() == kind else subject
    return subject_id in targets


class _Stated(Protocol):
    """A graph row with a status: entity, aspect, claim value or link."""

    @property
    def status(self) -> str: ...


_T = TypeVar("_T", bound=_Stated)


def _active(found: _T | None, what: str) -> _T:
    """`found` when the agent has it and it is active; Refused (not found / not active) else."""
    if found is None:
        raise Refused("target_not_found", f"{what} not found in this agent's scope")
    if found.status != "active":
        raise Refused("target_not_active", f"{what} is {found.status}, not active")
    return found
