"""Rows into values: a frozen dataclass read from a row by field name, and a table's selects.

Repositories return dataclasses, never rows. Most columns map one to one onto a field of the
same name; `from_row` reads those and takes the few that need converting (JSON, bool) from its
caller. `TableRows` holds one table's column list and mapper, so a read names only its fixed
`WHERE` (and `ORDER BY`) fragment and its parameters. `texts`, `scalar_int`, `rows_changed`
and `like_contains` are the small query shapes many owners repeated. Nothing here names a
table: each owner module still writes its SQL.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import cache
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from signet_desktop.storage.connect import Connection, Cursor, Params, Row

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    D = TypeVar("D", bound=DataclassInstance)
T = TypeVar("T")


@cache
def _init_fields(cls: type[DataclassInstance]) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls) if f.init)


def from_row(cls: type[D], row: Row, **converted: Any) -> D:
    """A `cls` value: each field read from the row column of its name, unless `converted` has it.

    A field that is not a column (even one with a default) must be given in `converted`.
    """
    named = {name: row[name] for name in _init_fields(cls) if name not in converted}
    return cls(**named, **converted)


@dataclass(frozen=True, slots=True)
class TableRows(Generic[T]):
    """One table's reads: `SELECT columns FROM table WHERE …`, each row made a value by `build`."""

    table: str
    columns: str
    build: Callable[[Row], T]

    def _select(self, conn: Connection, where: str, params: Params) -> Cursor:
        return conn.execute(f"SELECT {self.columns} FROM {self.table} WHERE {where}", params)

    def one(self, conn: Connection, where: str, params: Params) -> T | None:
        """The first row matching `where` (a fixed fragment and its parameters); None if none."""
        row = self._select(conn, where, params).fetchone()
        return None if row is None else self.build(row)

    def all(self, conn: Connection, where: str, params: Params) -> list[T]:
        """Every row matching `where` (a fixed fragment, with its ORDER BY and LIMIT if any)."""
        return [self.build(row) for row in self._select(conn, where, params).fetchall()]


def texts(conn: Connection, sql: str, params: Params = ()) -> list[str]:
    """The first column of every row the query returns, as text (ids, paths, keys)."""
    return [str(row[0]) for row in conn.execute(sql, params).fetchall()]


def scalar_int(conn: Connection, sql: str, params: Params = ()) -> int:
    """The first column of the query's one row, as an int (a COUNT, SUM or MAX)."""
    return int(conn.execute(sql, params).fetchone()[0])


def rows_changed(conn: Connection, sql: str, params: Params = ()) -> int:
    """Run one write statement; how many rows it inserted, changed or deleted."""
    return int(conn.execute(sql, params).rowcount)


def like_contains(text: str) -> str:
    """A LIKE pattern matching `text` anywhere, its `\\ % _` escaped (use with ESCAPE '\\')."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
