"""Embedding generations: registration, activation, retirement and the vec0 mirror DDL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from signet_desktop.embedding import generations as gens
from signet_desktop.storage.database import Database, open_database


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "g.db")
    assert database.vec.available
    yield database
    database.close()


def register(db: Database, model: str, dims: int = 64) -> gens.Generation:
    with db.write() as conn:
        return gens.register_generation(conn, provider="p", model=model, dimensions=dims)


def test_first_generation_is_active_and_later_ones_build(db: Database) -> None:
    first = register(db, "a")
    assert (first.status, first.vec_table) == ("active", f"vec_embeddings_g{first.id}")
    assert first.activated_at is not None
    second = register(db, "b")
    assert second.status == "building"
    assert register(db, "a") == first  # idempotent
    assert gens.active_generation(db.reader()) == first


def test_activation_retires_the_previous_generation(db: Database) -> None:
    first = register(db, "a")
    second = register(db, "b")
    with db.write() as conn:
        active = gens.activate_generation(conn, second.id)
    assert active.status == "active"
    old = gens.get_generation(db.reader(), first.id)
    assert old is not None and old.status == "retired" and old.retired_at is not None
    assert [g.status for g in gens.list_generations(db.reader())] == ["retired", "active"]


def test_a_retired_generation_chosen_again_rebuilds(db: Database) -> None:
    first = register(db, "a")
    second = register(db, "b")
    with db.write() as conn:
        gens.activate_generation(conn, second.id)
    again = register(db, "a")
    assert (again.id, again.status, again.retired_at) == (first.id, "building", None)


def test_same_model_other_width_is_another_generation(db: Database) -> None:
    assert register(db, "m", 64).id != register(db, "m", 128).id


def test_vec_table_names_are_derived_and_checked(db: Database) -> None:
    assert gens.vec_table_name(12) == "vec_embeddings_g12"
    for bad in (0, -1):
        with pytest.raises(ValueError, match="bad generation id"):
            gens.vec_table_name(bad)
    generation = register(db, "a")
    evil = gens.Generation(**{**_fields(generation), "vec_table": "memories; DROP TABLE x"})
    with pytest.raises(ValueError, match="refusing"):
        gens.checked_table(evil)


def table_sql(db: Database, name: str) -> str | None:
    row = db.reader().execute("SELECT sql FROM sqlite_master WHERE name = :n", {"n": name})
    found = row.fetchone()
    return None if found is None else str(found[0])


def test_mirror_is_a_vec0_table_of_the_model_width_plus_binary_codes(db: Database) -> None:
    generation = register(db, "a", 64)
    with db.write() as conn:
        gens.create_vec_table(conn, generation)
        gens.create_vec_table(conn, generation)  # idempotent
        assert gens.vec_table_exists(conn, generation)
    sql = table_sql(db, generation.vec_table) or ""
    assert "vec0" in sql and "FLOAT[64]" in sql and "distance_metric=cosine" in sql
    assert "PARTITION KEY" in sql
    assert generation.bits_table == f"vec_bits_g{generation.id}"
    assert "WITHOUT ROWID" in (table_sql(db, generation.bits_table) or "")


def test_widths_not_divisible_by_eight_get_no_binary_codes(db: Database) -> None:
    generation = register(db, "odd", 30)
    assert not generation.has_bits
    with db.write() as conn:
        gens.create_vec_table(conn, generation)
    assert "FLOAT[30]" in (table_sql(db, generation.vec_table) or "")
    assert table_sql(db, generation.bits_table) is None


def test_drop_removes_the_mirror(db: Database) -> None:
    generation = register(db, "a")
    with db.write() as conn:
        gens.create_vec_table(conn, generation)
        gens.drop_vec_table(conn, generation)
        assert not gens.vec_table_exists(conn, generation)
    assert table_sql(db, generation.bits_table) is None


def _fields(generation: gens.Generation) -> dict[str, object]:
    return {name: getattr(generation, name) for name in generation.__slots__}  # type: ignore[attr-defined]
