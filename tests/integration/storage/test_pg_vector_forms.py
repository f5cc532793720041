"""pgvector's two forms as the daemon uses them: the text it writes (`pg_vector_text`) and the
binary form recall reads back (`sent_vector_twin` + `stored_vector(sent=True)`), bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from signet_desktop.embedding.vectors import sent_vector_twin, stored_vector
from signet_desktop.storage.postgres.database import PgDatabase
from signet_desktop.storage.postgres.vector_text import pg_vector_text

pytestmark = pytest.mark.postgres

READ = "SELECT id, e.vector AS vector FROM vector_forms e ORDER BY id"


def test_a_vector_written_as_text_reads_back_bit_for_bit_in_both_forms(pg_url: str) -> None:
    rng = np.random.default_rng(3)
    vectors = [rng.standard_normal(384).astype(np.float32) for _ in range(20)]
    extremes = np.zeros(384, dtype=np.float32)
    extremes[:4] = [3.4028235e38, -1.1754944e-38, 0.1, -7.0e-9]  # largest, smallest normal
    vectors.append(extremes)
    db = PgDatabase(pg_url)
    try:
        with db.write() as conn:
            conn.execute("CREATE TABLE vector_forms (id integer PRIMARY KEY, vector vector(384))")
            for i, v in enumerate(vectors):
                conn.execute(
                    "INSERT INTO vector_forms VALUES (:id, CAST(:v AS vector))",
                    {"id": i, "v": pg_vector_text(v.tobytes())},
                )
        reader = db.reader()
        sent = reader.execute(sent_vector_twin(READ)).fetchall()
        text = reader.execute(READ).fetchall()
        for i, v in enumerate(vectors):
            assert stored_vector(sent[i]["vector"], sent=True).tobytes() == v.tobytes()
            assert stored_vector(text[i]["vector"]).tobytes() == v.tobytes()
    finally:
        with db.write() as conn:
            conn.execute("DROP TABLE IF EXISTS vector_forms")
        db.close()


def test_a_statement_without_the_vector_column_is_refused() -> None:
    with pytest.raises(ValueError, match=r"does not read e\.vector"):
        sent_vector_twin("SELECT id FROM embeddings")
