"""Per-column conversion between the backends, and the normal form both sides hash alike.

The PostgreSQL schema says what a column is (`jsonb`, `vector`, integer, double precision,
text); SQLite stores JSON as text and vectors as float32 little-endian blobs. A value goes to
PostgreSQL as text for jsonb and pgvector (`[x1,x2,...]`, as the daemon writes it:
`storage/postgres/vector_text.py`) and comes back as SQLite's text and blob.
"""

from __future__ import annotations

import json
from enum import Enum
from typing import Any

import numpy as np

from signet_desktop.storage.postgres.vector_text import pg_vector_text


class Kind(Enum):
    """What a copied column holds, read from the PostgreSQL schema."""

    TEXT = "text"
    INTEGER = "integer"
    REAL = "real"
    JSON = "json"
    VECTOR = "vector"


PG_TYPES = {
    "jsonb": Kind.JSON,
    "json": Kind.JSON,
    "vector": Kind.VECTOR,
    "int2": Kind.INTEGER,
    "int4": Kind.INTEGER,
    "int8": Kind.INTEGER,
    "float4": Kind.REAL,
    "float8": Kind.REAL,
    "numeric": Kind.REAL,
    "text": Kind.TEXT,
    "varchar": Kind.TEXT,
}


def kind_of(udt_name: str) -> Kind:
    """The kind of a PostgreSQL column type (`information_schema.columns.udt_name`)."""
    try:
        return PG_TYPES[udt_name]
    except KeyError:
        raise ValueError(f"no conversion for PostgreSQL column type {udt_name!r}") from None


def pgvector_to_blob(text: str) -> bytes:
    """pgvector text back to the float32 little-endian blob it was made from."""
    inner = text.strip().removeprefix("[").removesuffix("]")
    values = [np.float32(part) for part in inner.split(",")] if inner else []
    return np.array(values, dtype="<f4").tobytes()


def to_postgres(kind: Kind, value: Any) -> Any:
    """A SQLite value as the PostgreSQL column takes it."""
    if value is None:
        return None
    if kind is Kind.VECTOR:
        return pg_vector_text(value)
    if kind is Kind.REAL:
        return float(value)
    return value


def to_sqlite(kind: Kind, value: Any) -> Any:
    """A PostgreSQL value as the SQLite column takes it (jsonb arrives as text already)."""
    if value is None:
        return None
    if kind is Kind.VECTOR:
        return pgvector_to_blob(value)
    return value


def normalised(kind: Kind, value: Any) -> Any:
    """The form a value is hashed in, the same whichever backend it was read from."""
    if value is None:
        return None
    if kind is Kind.VECTOR:
        blob = pgvector_to_blob(value) if isinstance(value, str) else bytes(value)
        return blob.hex()
    if kind is Kind.JSON:
        return json.dumps(json.loads(value), sort_keys=True, separators=(",", ":"))
    if kind is Kind.REAL:
        return repr(float(value))
    if kind is Kind.INTEGER and not isinstance(value, bool):
        return int(value)
    return value
