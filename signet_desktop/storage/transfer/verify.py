"""Checking a copy: per table, the row count and a content hash on each side.

A table's hash is SHA-256 over its rows in key order (byte order for text on both backends),
each row the JSON list of its values in their normal form (`convert.py: normalised`: JSON
re-serialised with sorted keys, vectors as their float32 bytes, reals by repr), so the same
content hashes the same whichever backend it was read from.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres
from signet_desktop.storage.transfer.convert import Kind, normalised
from signet_desktop.storage.transfer.plan import TablePlan, quoted

HASH_BATCH = 2000


@dataclass(frozen=True, slots=True)
class TableCheck:
    """One table compared."""

    name: str
    source_rows: int
    target_rows: int
    source_hash: str
    target_hash: str

    @property
    def ok(self) -> bool:
        return self.source_rows == self.target_rows and self.source_hash == self.target_hash


def table_digest(conn: Connection, plan: TablePlan) -> tuple[int, str]:
    """(rows, SHA-256 hex) of a table's content in its normal form."""
    pg = is_postgres(conn)
    order = ", ".join(
        f'{quoted(c)} COLLATE "C"' if pg and plan.kind(c) is Kind.TEXT else quoted(c)
        for c in plan.key
    )
    columns = ", ".join(quoted(c) for c in plan.columns)
    digest = hashlib.sha256()
    count = 0
    last: tuple[Any, ...] | None = None
    positions = [plan.columns.index(c) for c in plan.key]
    while True:
        params: dict[str, Any] = {"limit": HASH_BATCH}
        where = ""
        if last is not None:
            where = f" WHERE ({order}) > ({', '.join(f':k{i}' for i in range(len(last)))})"
            params.update({f"k{i}": v for i, v in enumerate(last)})
        rows = conn.execute(
            f"SELECT {columns} FROM {quoted(plan.name)}{where} ORDER BY {order} LIMIT :limit",
            params,
        ).fetchall()
        if not rows:
            return count, digest.hexdigest()
        for row in rows:
            values = [normalised(k, row[i]) for i, k in enumerate(plan.kinds)]
            digest.update(json.dumps(values, ensure_ascii=False).encode("utf-8") + b"\n")
        count += len(rows)
        last = tuple(rows[-1][i] for i in positions)


def compare(source: Connection, target: Connection, plans: Sequence[TablePlan]) -> list[TableCheck]:
    """Every planned table's count and hash on both sides."""
    checks = []
    for plan in plans:
        source_rows, source_hash = table_digest(source, plan)
        target_rows, target_hash = table_digest(target, plan)
        checks.append(TableCheck(plan.name, source_rows, target_rows, source_hash, target_hash))
    return checks
