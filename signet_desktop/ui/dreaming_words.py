"""Dreaming's tool calls and operations in plain words, without Qt.

`Merge ledger-svc into ledger`, not `merge_entities`; `Search the evidence for “billing db”`,
not `search_evidence({"query": …})`. Entities are called by name (`names`: id → name); an id
without a name reads as "an entity" — the ids themselves, like the raw JSON, are for the
Dreaming pane's Details view (`dreaming_format`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from signet_desktop.ui.hit_format import preview

Names = Mapping[str, str]
QUOTED_CHARS = 60
SOURCE_KINDS = {"transcript": "a transcript", "memory": "a memory", "document": "a document"}


def quoted(value: object, chars: int = QUOTED_CHARS) -> str:
    """`“text”`, one line, cut to `chars`."""
    return f"“{preview(' '.join(str(value).split()), chars)}”"


def sentence(text: str) -> str:
    """`text` with its first letter capitalised (the rest as it is: names keep their case)."""
    return text[:1].upper() + text[1:]


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


class _Payload:
    """Reads a payload's fields by name, entities by their names."""

    def __init__(self, payload: Mapping[str, Any], names: Names | None) -> None:
        self.payload = payload
        self.names = names or {}

    def text(self, key: str) -> str:
        value = self.payload.get(key)
        return str(value) if isinstance(value, (str, int, float)) else ""

    def entity(self, key: str, fallback: str = "an entity") -> str:
        value = self.payload.get(key)
        return self.named(value, fallback)

    def named(self, value: object, fallback: str = "an entity") -> str:
        return self.names.get(str(value), fallback) if value else fallback

    def claim(self) -> str:
        """`billing’s database`."""
        key = self.text("claimKey") or "claim"
        return f"{self.entity('entityId')}’s {key}"


def _merge(p: _Payload) -> str:
    targets = p.payload.get("targets")
    survivor = p.payload.get("survivor")
    if not isinstance(targets, list):  # an older payload: one entity into another
        if p.payload.get("intoEntityId"):
            return f"merge {p.entity('fromEntityId')} into {p.entity('intoEntityId')}"
        return "merge entities"
    merged = [p.named(t, "another entity") for t in targets if t != survivor]
    return f"merge {' and '.join(merged) or 'an entity'} into {p.named(survivor)}"


def _merge_aspects(p: _Payload) -> str:
    sources = p.payload.get("sources")
    count = len(sources) if isinstance(sources, list) else 1
    into = f" as {quoted(p.text('newName'))}" if p.text("newName") else ""
    return f"merge {plural(count, 'aspect')} of {p.entity('entityId')} into one{into}"


def _create_entity(p: _Payload) -> str:
    kind = p.text("type")
    return f"create entity {quoted(p.text('name'))}" + (
        f" ({kind})" if kind and kind != "unknown" else ""
    )


def _rename_entity(p: _Payload) -> str:
    old = p.text("oldName") or p.text("name") or p.entity("entityId")
    return f"rename {old} to {quoted(p.text('newName'))}"


OPERATIONS: dict[str, Callable[[_Payload], str]] = {
    "create_entity": _create_entity,
    "create_aspect": lambda p: f"add aspect {quoted(p.text('name'))} to {p.entity('entityId')}",
    "rename_aspect": lambda p: (
        f"rename an aspect of {p.entity('entityId')} to {quoted(p.text('newName'))}"
    ),
    "add_claim_value": lambda p: f"record {p.claim()}: {quoted(p.text('value'))}",
    "set_claim_value": lambda p: f"set {p.claim()} to {quoted(p.text('value'))}",
    "supersede_claim_value": lambda p: f"replace {p.claim()} with {quoted(p.text('value'))}",
    "create_link": lambda p: (
        f"link {p.entity('fromEntityId')} to {p.entity('toEntityId', 'another entity')}"
        + (f" ({p.text('linkType')})" if p.text("linkType") else "")
    ),
    "update_link": lambda p: f"make a link {quoted(p.text('linkType'))}",
    "rename_entity": _rename_entity,
    "archive_entity": lambda p: f"archive {p.entity('target')}",
    "archive_aspect": lambda p: "archive an aspect",
    "archive_claim_value": lambda p: "archive a claim",
    "archive_link": lambda p: "archive a link",
    "merge_entities": _merge,
    "merge_aspects": _merge_aspects,
    "flag": lambda p: (
        "flag for attention" + (f": {quoted(p.text('details'))}" if p.text("details") else "")
    ),
    "decline_attention": lambda p: "decline an attention item",
}


def operation_words(operation: str, payload: Mapping[str, Any], names: Names | None = None) -> str:
    """`Merge ledger-svc into ledger`, `Set billing’s database to “Postgres 16”`."""
    words = OPERATIONS.get(operation)
    if words is None:
        return sentence(operation.replace("_", " "))
    return sentence(words(_Payload(payload, names)))


def _source(p: _Payload) -> str:
    ref = p.text("sourceRef")
    return SOURCE_KINDS.get(ref.partition(":")[0], "a source") if ref else "a source"


def _operations_count(p: _Payload) -> int:
    operations = p.payload.get("operations")
    return len(operations) if isinstance(operations, list) else 0


TOOLS: dict[str, Callable[[_Payload], str]] = {
    "search_evidence": lambda p: (
        "search the evidence" + (f" for {quoted(p.text('query'))}" if p.text("query") else "")
    ),
    "get_evidence": lambda p: f"read {_source(p)}",
    "search_entities": lambda p: f"look up entities matching {quoted(p.text('query'))}",
    "get_entity": lambda p: f"read {p.entity('entityId')}",
    "list_aspect_claims": lambda p: f"list the claims of {p.entity('entityId')}",
    "walk_links": lambda p: f"follow the links of {p.entity('entityId')}",
    "attention_list": lambda p: "list what needs attention",
    "attention_create": lambda p: (
        "ask for attention" + (f": {quoted(p.text('details'))}" if p.text("details") else "")
    ),
    "validate_proposal": lambda p: f"check {plural(_operations_count(p), 'operation')}",
    "runbook_read": lambda p: "read the runbook",
    "runbook_write": lambda p: "update the runbook",
    "apply_ontology_ops": lambda p: f"apply {plural(_operations_count(p), 'operation')}",
}


def tool_call_words(tool: str, arguments: Any, names: Names | None = None) -> str:
    """`Search the evidence for “billing db”`, `Apply 4 operations`."""
    words = TOOLS.get(tool)
    if words is None:
        return sentence(tool.replace("_", " "))
    payload = arguments if isinstance(arguments, Mapping) else {}
    return sentence(words(_Payload(payload, names)))
