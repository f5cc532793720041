"""A Dreaming pass's revert in words, without Qt: the dry run's verdict and one line per
change or blocker (`archive entity “logical replication”`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from signet_desktop.ui.hit_format import preview
from signet_desktop.ui.quote_format import short_ref


def revert_preview(changes: Sequence[Any], blockers: Sequence[Any]) -> tuple[str, list[str]]:
    """The dry run's verdict and its lines: every change, or every blocker when refused."""
    if blockers:
        head = (
            f"This pass cannot be reverted: {len(blockers)} later change"
            f"{'' if len(blockers) == 1 else 's'} depend on it."
        )
        return head, [describe(b) for b in blockers]
    if not changes:
        return "This pass changed nothing that a revert would undo.", []
    head = f"Reverting undoes {len(changes)} change{'' if len(changes) == 1 else 's'}:"
    return head, [describe(c) for c in changes]


TABLE_NOUNS = {
    "entities": "entity",
    "entity_aliases": "alias",
    "entity_aspects": "aspect",
    "entity_attributes": "claim",
    "entity_dependencies": "link",
    "relations": "relation",
    "memory_entity_mentions": "mention",
    "ontology_proposals": "proposal",
}


def describe(item: Any) -> str:
    """One change or blocker as a line: its own `description`/`reason`/`message`, else the
    fields that say what and where."""
    if isinstance(item, str):
        return item
    for key in ("description", "message", "reason", "summary"):
        value = item.get(key) if isinstance(item, Mapping) else getattr(item, key, None)
        if isinstance(value, str) and value:
            return value

    def field(key: str) -> Any:
        return item.get(key) if isinstance(item, Mapping) else getattr(item, key, None)

    table = field("target_table")
    if isinstance(table, str):  # a revert change: `archive entity “logical replication”`
        row = field("after") or field("before") or {}
        label = next(
            (
                row.get(k)
                for k in ("name", "alias", "content", "dependency_type")
                if isinstance(row, Mapping) and isinstance(row.get(k), str)
            ),
            None,
        )
        what = TABLE_NOUNS.get(table, table)
        shown = f"“{preview(label, 60)}”" if label else short_ref(field("target_id"), 12)
        return f"{field('action') or 'change'} {what} {shown}"
    fields = []
    for key in ("action", "operation", "target_id", "pass_id"):
        value = field(key)
        if value:
            fields.append(short_ref(value, 12) if key.endswith("id") else str(value))
    return " ".join(fields) or str(item)
