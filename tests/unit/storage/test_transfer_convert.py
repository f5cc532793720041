"""storage/transfer/convert.py: values between the backends, and one normal form for hashing."""

from __future__ import annotations

import json

import numpy as np
import pytest

from signet_desktop.embedding.vectors import vector_blob
from signet_desktop.storage.postgres.vector_text import pg_vector_text
from signet_desktop.storage.transfer.convert import (
    Kind,
    kind_of,
    normalised,
    pgvector_to_blob,
    to_postgres,
    to_sqlite,
)


def test_a_vector_blob_goes_to_pgvector_text_and_back_bit_for_bit() -> None:
    rng = np.random.default_rng(7)
    for _ in range(50):
        blob = vector_blob(rng.standard_normal(384), 384)
        text = pg_vector_text(blob)
        assert pgvector_to_blob(text) == blob
        assert to_sqlite(Kind.VECTOR, to_postgres(Kind.VECTOR, blob)) == blob
    tiny = np.array([1e-45, -3.4028235e38, 0.1], dtype="<f4").tobytes()
    assert pgvector_to_blob(pg_vector_text(tiny)) == tiny


def test_both_sides_of_a_value_hash_alike() -> None:
    blob = vector_blob([0.5, 0.25, -1.0], 3)
    assert normalised(Kind.VECTOR, blob) == normalised(Kind.VECTOR, pg_vector_text(blob))
    written = json.dumps({"b": [1, 2.5], "a": {"y": None, "x": "é"}})
    jsonb = '{"a": {"x": "é", "y": null}, "b": [1, 2.5]}'  # as PostgreSQL gives it back
    assert normalised(Kind.JSON, written) == normalised(Kind.JSON, jsonb)
    assert normalised(Kind.REAL, 1) == normalised(Kind.REAL, 1.0)
    assert normalised(Kind.INTEGER, 7) == 7 and normalised(Kind.TEXT, None) is None


def test_every_column_type_of_the_schema_has_a_kind() -> None:
    assert kind_of("jsonb") is Kind.JSON and kind_of("vector") is Kind.VECTOR
    assert kind_of("int8") is Kind.INTEGER and kind_of("float8") is Kind.REAL
    with pytest.raises(ValueError, match="tsvector"):
        kind_of("tsvector")  # generated, never copied
