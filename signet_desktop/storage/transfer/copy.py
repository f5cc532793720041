"""Moving the rows: batches in key order, each in one target transaction with its progress.

Every table is read in its key's order (byte order for text on both backends: SQLite's BINARY
collation, PostgreSQL's `COLLATE "C"`) and resumed after the last key the target recorded, so
a run killed at any moment (the batch in flight rolls back with its progress row) continues
where it stopped and never copies a row twice. A table that references itself is copied
parents first instead: its whole order is computed from the source (keys only) and the
record is a position in it. The target's triggers run as rows arrive (the FTS5 indexes on
SQLite, the 0009/0012 counters on both); what they count ends as the source holds it: the
counter tables are copied last and overwrite what the triggers counted, and entities.mentions
is inserted as 0 (its CHECK holds whatever the triggers add) then set to the source's value
once every table is in (`restore_counted`, an idempotent pass run at the end of each run).

PostgreSQL's identity columns are inserted as they are (`OVERRIDING SYSTEM VALUE`) and their
sequence set past the highest value (and past SQLite's AUTOINCREMENT mark) once the table
is done.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres
from signet_desktop.storage.transfer import progress
from signet_desktop.storage.transfer.convert import Kind, to_postgres, to_sqlite
from signet_desktop.storage.transfer.plan import TablePlan, TransferError, quoted

DEFAULT_BATCH = 1000
Report = Callable[[str, int, int], None]  # table, rows done, rows in the source
BatchHook = Callable[[str, int], None]  # test seam: (table, batch number), inside the batch

SOURCE_SEQUENCE = "SELECT seq FROM sqlite_sequence WHERE name = :name"
SET_SEQUENCE = "SELECT setval(pg_get_serial_sequence(:table, :column), :value, :called)"


class Target(Protocol):
    """The part of a database handle the copy writes through."""

    def write(self) -> AbstractContextManager[Connection]: ...


def copy_tables(
    source: Connection,
    target: Target,
    plans: Sequence[TablePlan],
    *,
    batch_size: int = DEFAULT_BATCH,
    report: Report | None = None,
    batch_hook: BatchHook | None = None,
) -> None:
    """Copy every planned table not yet done, resuming from the target's record."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    with target.write() as conn:
        done = progress.read_progress(conn)
    for plan in plans:
        state = done.get(plan.name, progress.TableProgress())
        total = int(source.execute(f"SELECT COUNT(*) FROM {quoted(plan.name)}").fetchone()[0])
        table = _TableCopy(source, target, plan, batch_size, batch_hook)
        reported = None
        if not state.done:
            batches = table.parents_first if plan.self_refs else table.in_key_order
            for reported in batches(state):
                if report:
                    report(plan.name, reported, total)
            with target.write() as conn:
                table.finish(conn)
        if report and reported is None:  # nothing left to copy: say where the table stands
            report(plan.name, state.rows_done if state.done else total, total)
    for plan in plans:
        if plan.zeroed:
            restore_counted(source, target, plan, batch_size)


def restore_counted(source: Connection, target: Target, plan: TablePlan, batch_size: int) -> None:
    """Set the trigger-counted columns (`plan.zeroed`) to the source's values, in batches."""
    key, counted = plan.key, plan.zeroed
    selected = ", ".join(quoted(c) for c in (*key, *counted))
    order = ", ".join(quoted(c) for c in key)
    if is_postgres(source):
        order = ", ".join(
            f'{quoted(c)} COLLATE "C"' if plan.kind(c) is Kind.TEXT else quoted(c) for c in key
        )
    sets = ", ".join(f"{quoted(c)} = :v{i}" for i, c in enumerate(counted))
    match = " AND ".join(f"{quoted(c)} = :k{i}" for i, c in enumerate(key))
    update = f"UPDATE {quoted(plan.name)} SET {sets} WHERE {match}"
    last: tuple[Any, ...] | None = None
    while True:
        params: dict[str, Any] = {"limit": batch_size}
        where = ""
        if last is not None:
            where = f" WHERE ({order}) > ({', '.join(f':k{i}' for i in range(len(last)))})"
            params.update({f"k{i}": v for i, v in enumerate(last)})
        rows = source.execute(
            f"SELECT {selected} FROM {quoted(plan.name)}{where} ORDER BY {order} LIMIT :limit",
            params,
        ).fetchall()
        if not rows:
            return
        values = [
            {
                **{f"k{i}": row[i] for i in range(len(key))},
                **{f"v{i}": row[len(key) + i] for i in range(len(counted))},
            }
            for row in rows
        ]
        with target.write() as conn:
            conn.executemany(update, values)
        last = tuple(rows[-1][i] for i in range(len(key)))


class _TableCopy:
    def __init__(
        self,
        source: Connection,
        target: Target,
        plan: TablePlan,
        batch_size: int,
        batch_hook: BatchHook | None,
    ) -> None:
        self.source = source
        self.target = target
        self.plan = plan
        self.size = batch_size
        self.hook = batch_hook
        self.from_pg = is_postgres(source)
        self.columns = ", ".join(quoted(c) for c in plan.columns)
        self.batches = 0

    def in_key_order(self, state: progress.TableProgress) -> Iterator[int]:
        """Batches after the recorded key; yields the rows done after each."""
        last, rows_done = state.last_key, state.rows_done
        order = ", ".join(self._ordered(c) for c in self.plan.key)
        while True:
            params: dict[str, Any] = {"limit": self.size}
            where = ""
            if last is not None:
                names = [f":k{i}" for i in range(len(last))]
                where = f" WHERE ({order}) > ({', '.join(names)})"
                params.update({f"k{i}": v for i, v in enumerate(last)})
            rows = self.source.execute(
                f"SELECT {self.columns} FROM {quoted(self.plan.name)}{where} "
                f"ORDER BY {order} LIMIT :limit",
                params,
            ).fetchall()
            if not rows:
                return
            last = self._key_of(rows[-1])
            rows_done += len(rows)
            self._write(rows, last, rows_done)
            yield rows_done

    def parents_first(self, state: progress.TableProgress) -> Iterator[int]:
        """Batches of a self-referencing table, each row after the rows it references."""
        if len(self.plan.key) != 1:
            raise TransferError(f"table {self.plan.name}: a self-reference needs a one-column key")
        order = self._parents_order()
        position = state.rows_done
        key = quoted(self.plan.key[0])
        while position < len(order):
            keys = order[position : position + self.size]
            names = ", ".join(f":k{i}" for i in range(len(keys)))
            fetched = self.source.execute(
                f"SELECT {self.columns} FROM {quoted(self.plan.name)} WHERE {key} IN ({names})",
                {f"k{i}": k for i, k in enumerate(keys)},
            ).fetchall()
            by_key = {self._key_of(r): r for r in fetched}
            rows = [by_key[(k,)] for k in keys]
            position += len(rows)
            self._write(rows, (keys[-1],), position)
            yield position

    def _parents_order(self) -> list[Any]:
        key = self.plan.key[0]
        selected = ", ".join(quoted(c) for c in (key, *(c for c, _ in self.plan.self_refs)))
        order = self._ordered(key)
        rows = self.source.execute(
            f"SELECT {selected} FROM {quoted(self.plan.name)} ORDER BY {order}"
        ).fetchall()
        parents = {r[0]: [v for v in tuple(r)[1:] if v is not None and v != r[0]] for r in rows}
        ordered: list[Any] = []
        placed: set[Any] = set()
        for start in parents:
            stack = [(start, iter(parents[start]))]
            visiting = {start}
            while stack:
                node, pending = stack[-1]
                parent = next((p for p in pending if p in parents and p not in placed), None)
                if parent is None:
                    stack.pop()
                    if node not in placed:
                        placed.add(node)
                        ordered.append(node)
                    continue
                if parent in visiting:
                    raise TransferError(f"table {self.plan.name}: rows reference each other")
                visiting.add(parent)
                stack.append((parent, iter(parents[parent])))
        return ordered

    def _write(self, rows: Sequence[Any], last: tuple[Any, ...], rows_done: int) -> None:
        with self.target.write() as conn:
            values = [self._values(row) for row in rows]
            conn.executemany(self._insert(is_postgres(conn)), values)
            progress.record_batch(conn, self.plan.name, last, rows_done)
            self.batches += 1
            if self.hook is not None:
                self.hook(self.plan.name, self.batches)

    def finish(self, conn: Connection) -> None:
        """Mark the table done; on PostgreSQL its identity sequence goes past every copied id."""
        if self.plan.identity and is_postgres(conn):
            column = quoted(self.plan.identity)
            highest = conn.execute(
                f"SELECT COALESCE(MAX({column}), 0) FROM {quoted(self.plan.name)}"
            ).fetchone()[0]
            value = max(int(highest), self._source_mark())
            conn.execute(
                SET_SEQUENCE,
                {
                    "table": self.plan.name,
                    "column": self.plan.identity,
                    "value": max(value, 1),
                    "called": value > 0,
                },
            )
        progress.finish_table(conn, self.plan.name)

    def _source_mark(self) -> int:
        """SQLite's AUTOINCREMENT high-water mark (ids never reused), 0 when none."""
        if self.from_pg:
            return 0
        try:
            row = self.source.execute(SOURCE_SEQUENCE, {"name": self.plan.name}).fetchone()
        except Exception:  # no AUTOINCREMENT table in this database: no sqlite_sequence
            return 0
        return int(row[0]) if row else 0

    def _insert(self, to_pg: bool) -> str:
        plan = self.plan
        values = []
        for i, kind in enumerate(plan.kinds):
            cast = {Kind.JSON: "jsonb", Kind.VECTOR: "vector"}.get(kind) if to_pg else None
            values.append(f"CAST(:p{i} AS {cast})" if cast else f":p{i}")
        overriding = " OVERRIDING SYSTEM VALUE" if to_pg and plan.identity else ""
        sql = (
            f"INSERT INTO {quoted(plan.name)} ({self.columns}){overriding} "
            f"VALUES ({', '.join(values)})"
        )
        if plan.overwrite:
            others = [c for c in plan.columns if c not in plan.key]
            sets = ", ".join(f"{quoted(c)} = excluded.{quoted(c)}" for c in others)
            action = f"DO UPDATE SET {sets}" if others else "DO NOTHING"
            sql += f" ON CONFLICT ({', '.join(quoted(c) for c in plan.key)}) {action}"
        return sql

    def _values(self, row: Any) -> dict[str, Any]:
        convert = to_sqlite if self.from_pg else to_postgres
        values = {}
        for i, (column, kind) in enumerate(zip(self.plan.columns, self.plan.kinds, strict=True)):
            value = 0 if column in self.plan.zeroed else convert(kind, row[i])
            values[f"p{i}"] = value
        return values

    def _ordered(self, column: str) -> str:
        if self.from_pg and self.plan.kind(column) is Kind.TEXT:
            return f'{quoted(column)} COLLATE "C"'
        return quoted(column)

    def _key_of(self, row: Any) -> tuple[Any, ...]:
        return tuple(row[self.plan.columns.index(c)] for c in self.plan.key)
