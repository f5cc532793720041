"""A psycopg connection behind our `Connection` protocol, so portable SQL runs unchanged.

Our SQL names its parameters `:name` or marks them `?` (sqlite3's styles); psycopg wants
`%(name)s` / `%s`. `translate` rewrites a statement once (cached), leaving string literals,
quoted names, comments and `::` casts alone, and doubles every `%` (psycopg reads them
everywhere, literals included). Rows
are indexable by position and by column name, like `sqlean.Row`. JSON columns (`jsonb`) are
read back as text, as SQLite stores them, so the row mappers (`row_to_memory`) need no
dialect.

Values are bound client-side (`ClientCursor`): our portable idiom `(:type IS NULL OR type =
:type)` leaves a server-side parameter without a type, which PostgreSQL refuses ("could not
determine data type of parameter"); as a literal, NULL or a quoted string resolves like it
does in SQLite. Connections are in autocommit mode, as the SQLite ones are
(`isolation_level=None`): a transaction is an explicit BEGIN ... COMMIT.

Errors leave the adapter as `storage/errors.py` classes (`translate_error`), never as
psycopg's, so callers catch them without importing the driver.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import psycopg
from psycopg import ClientCursor
from psycopg.pq import TransactionStatus
from psycopg.rows import RowMaker
from psycopg.types.string import TextLoader

from signet_desktop.storage.connect import Params
from signet_desktop.storage.dialect import json_array_twin
from signet_desktop.storage.errors import (
    DatabaseError,
    DatabaseUnavailable,
    IntegrityError,
    UniqueViolation,
)

CONNECT_TIMEOUT_S = 10
# HNSW scans keep going past the first candidates when scope filters remove them, returning
# exact distance order (pgvector 0.8): an agent's nearest rows are found even when most of the
# index belongs to other agents.
SESSION_SETTINGS = ("SET hnsw.iterative_scan = strict_order",)

_TOKEN = re.compile(
    r"""'(?:[^']|'')*'        # a string literal
      | "(?:[^"]|"")*"        # a quoted identifier
      | --[^\n]*              # a line comment
      | ::                    # a cast, not a parameter
      | :([A-Za-z_]\w*)       # a named parameter
      | (\?)                  # a positional parameter (sqlite3's qmark style)
      | %                     # psycopg's placeholder character, doubled when literal
      | \b((?i:instr))\(      # SQLite's instr(), PostgreSQL's strpos()
    """,
    re.VERBOSE,
)


@lru_cache(maxsize=1024)
def translate(sql: str, positional: bool = False) -> str:
    """`:name` parameters as psycopg's `%(name)s`, or (`positional`) each `?` as `%s`; a
    literal `%` doubled. A `?` in a statement with named parameters is left alone: there it
    is jsonb's key-exists operator. SQLite's `instr(haystack, needle)` becomes `strpos`, its
    PostgreSQL twin (the same 1-based position, 0 when absent).

    SQLite's `json_each(<array>)` is rendered as its jsonb twin (`storage/dialect.py:
    json_array_twin`, elements as text): PostgreSQL has a `json_each` of its own, for objects,
    which would otherwise turn a missed twin into "operator does not exist: text = json". An
    owner still writes a twin by hand where the elements are compared as numbers."""
    if "json_each(" in sql:
        sql = json_array_twin(sql)

    def swap(match: re.Match[str]) -> str:
        text = match.group(0)
        if match.group(1) is not None:
            return f"%({match.group(1)})s"
        if match.group(2) is not None:
            return "%s" if positional else text
        if match.group(3) is not None:
            return "strpos("
        return text.replace("%", "%%")  # psycopg reads `%` inside literals and comments too

    return _TOKEN.sub(swap, sql)


class PgRow:
    """One result row: `row[0]`, `row["name"]`, `keys()`, iteration and length."""

    __slots__ = ("_index", "_values")

    def __init__(self, values: Sequence[Any], index: Mapping[str, int]) -> None:
        self._values = values
        self._index = index

    def __getitem__(self, key: int | str) -> Any:
        if isinstance(key, str):
            return self._values[self._index[key]]
        return self._values[key]

    def keys(self) -> list[str]:
        """Column names, in order."""
        return list(self._index)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"PgRow({dict(zip(self._index, self._values, strict=True))!r})"


def _row_factory(cursor: Any) -> RowMaker[PgRow]:
    names = [column.name for column in cursor.description or ()]
    index = {name: position for position, name in enumerate(names)}
    return lambda values: PgRow(values, index)


class PgCursor:
    """The `Cursor` protocol over a psycopg cursor."""

    def __init__(self, cursor: psycopg.Cursor[PgRow]) -> None:
        self._cursor = cursor

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    @property
    def lastrowid(self) -> int | None:
        return None  # PostgreSQL has no rowid: statements that need the id say RETURNING

    def fetchone(self) -> PgRow | None:
        return self._cursor.fetchone() if self._cursor.description else None

    def fetchall(self) -> list[PgRow]:
        return self._cursor.fetchall() if self._cursor.description else []

    def fetchmany(self, size: int = 1, /) -> list[PgRow]:
        return self._cursor.fetchmany(size) if self._cursor.description else []

    def __iter__(self) -> Iterator[PgRow]:
        return iter(self.fetchall())


class PgConnection:
    """The `Connection` protocol over one psycopg connection (autocommit, client binding)."""

    dialect = "postgresql"

    def __init__(self, raw: psycopg.Connection[PgRow]) -> None:
        self._raw = raw

    @property
    def raw(self) -> psycopg.Connection[PgRow]:
        """The psycopg connection, for what the protocol does not cover (COPY, LISTEN)."""
        return self._raw

    def execute(self, sql: str, parameters: Params = (), /) -> PgCursor:
        with neutral_errors(self._raw):
            cursor = self._raw.cursor()
            if isinstance(parameters, Mapping):
                cursor.execute(translate(sql), parameters)
            elif parameters:  # `?` placeholders, bound in order
                cursor.execute(translate(sql, True), tuple(parameters))
            else:  # no placeholders to fill: the text goes as written (`%` too)
                cursor.execute(sql)
        return PgCursor(cursor)

    def executemany(self, sql: str, parameters: Iterable[Params], /) -> PgCursor:
        rows = list(parameters)
        positional = bool(rows) and not isinstance(rows[0], Mapping)
        values = [p if isinstance(p, Mapping) else tuple(p) for p in rows]
        with neutral_errors(self._raw):
            cursor = self._raw.cursor()
            cursor.executemany(translate(sql, positional), values)
        return PgCursor(cursor)

    @property
    def broken(self) -> bool:
        """The connection is closed or was lost (server restart, network): replace it."""
        return self._raw.closed or self._raw.broken

    def close(self) -> None:
        self._raw.close()

    def enable_load_extension(self, enabled: bool, /) -> None:
        raise NotImplementedError(
            "PostgreSQL loads extensions with CREATE EXTENSION, in its migrations"
        )

    @property
    def in_transaction(self) -> bool:
        return self._raw.info.transaction_status != TransactionStatus.IDLE

    @property
    def aborted(self) -> bool:
        """In a transaction an error aborted: every statement but ROLLBACK is refused, and
        COMMIT would be answered with a silent ROLLBACK."""
        return self._raw.info.transaction_status == TransactionStatus.INERROR


def connect_postgres(url: str, *, timeout_s: float = CONNECT_TIMEOUT_S) -> PgConnection:
    """Open one autocommit connection to `url` with the adapter's row and JSON handling.

    A server that cannot be reached raises `DatabaseUnavailable`."""
    with neutral_errors(None):
        raw = psycopg.connect(
            url,
            autocommit=True,
            cursor_factory=ClientCursor,
            row_factory=_row_factory,
            connect_timeout=max(1, round(timeout_s)),
        )
        try:
            for type_name in ("json", "jsonb"):
                raw.adapters.register_loader(type_name, TextLoader)
            for statement in SESSION_SETTINGS:
                raw.execute(statement)
        except BaseException:
            raw.close()
            raise
    return PgConnection(raw)


# SQLSTATE classes and codes that mean "the server is not there for us": connection exceptions
# (08), operator intervention (57P01 admin shutdown, 57P02 crash shutdown, 57P03 starting up).
_UNAVAILABLE_CLASSES = ("08",)
_UNAVAILABLE_CODES = frozenset({"57P01", "57P02", "57P03"})


def translate_error(exc: psycopg.Error, raw: psycopg.Connection[Any] | None) -> DatabaseError:
    """The `storage/errors.py` class for a psycopg error raised on `raw` (None: connecting)."""
    sqlstate = exc.sqlstate
    message = str(exc).strip() or type(exc).__name__
    lost = raw is None or raw.closed or raw.broken
    if isinstance(exc, psycopg.errors.UniqueViolation):
        return UniqueViolation(message, sqlstate)
    if isinstance(exc, psycopg.IntegrityError):
        return IntegrityError(message, sqlstate)
    if (
        lost
        or isinstance(exc, psycopg.errors.ConnectionTimeout)
        or (sqlstate is not None and sqlstate.startswith(_UNAVAILABLE_CLASSES))
        or sqlstate in _UNAVAILABLE_CODES
    ):
        return DatabaseUnavailable(message, sqlstate)
    return DatabaseError(message, sqlstate)


@contextmanager
def neutral_errors(raw: psycopg.Connection[Any] | None) -> Iterator[None]:
    """Re-raise a psycopg error from the block as its `storage/errors.py` class."""
    try:
        yield
    except psycopg.Error as exc:
        raise translate_error(exc, raw) from exc
