"""The two tokenisations over LoCoMo dev's turns: FTS5's 'porter unicode61 remove_diacritics 2'
(migrations/0006) and PostgreSQL's `signet_porter` (migrations/postgres/0006), compared.

Run: uv run python bench/locomo_tokens.py [--data PATH]  (or bench/locomo_postgres.py --tokens)

Every turn ("<speaker>: <text>") is inserted through storage/memories.py into a migrated
SQLite file and a migrated PostgreSQL database (the embedded server the tests use). Then,
what BM25 reads on each side:
- row lengths: FTS5's docsize record against the tsvector's positions;
- terms: the stems only one side indexes, and those both index in a different number of rows
  (fts5vocab against ts_stat);
- the questions' query tokens (`sanitize.query_tokens`) whose document count differs.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from locomo import DEFAULT_DATA, questions, turn_content, turns

from signet_desktop.domain.memory import NewMemory
from signet_desktop.recall.sanitize import query_tokens
from signet_desktop.recall.term_counts import count_documents
from signet_desktop.storage import memories
from signet_desktop.storage.connect import Connection, connect
from signet_desktop.storage.fts_records import leading_varint
from signet_desktop.storage.migrate import apply_migrations
from signet_desktop.storage.postgres.connect import connect_postgres
from signet_desktop.storage.postgres.migrate import apply_postgres_migrations

CAP = 1_000_000
EXAMPLES = 8
FTS_LENGTHS = "SELECT id, sz FROM memories_fts_docsize"
PG_LENGTHS = (
    "SELECT seq, (SELECT SUM(cardinality(u.positions)) FROM unnest(content_tsv) AS u) FROM memories"
)
FTS_VOCAB = "CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, 'memories_fts', 'row')"
PG_VOCAB = "SELECT word, ndoc FROM ts_stat('SELECT content_tsv FROM memories')"


def fill(conn: Connection, begin: str, texts: list[str]) -> None:
    conn.execute(begin)
    for text in texts:
        new = NewMemory("default", text)
        memories.insert_memory(conn, str(uuid.uuid4()), new, actor="bench", embedding_model=None)
    conn.execute("COMMIT")


@contextmanager
def both(texts: list[str]) -> Iterator[tuple[Connection, Connection]]:
    from support.postgres_server import start_postgres

    server = start_postgres()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            lite, _ = connect(Path(tmp) / "tokens.db")
            apply_migrations(lite)
            admin = connect_postgres(server.url())
            admin.execute("CREATE DATABASE tokens")
            admin.close()
            pg = connect_postgres(server.url("tokens"))
            apply_postgres_migrations(pg)
            fill(lite, "BEGIN IMMEDIATE", texts)
            fill(pg, "BEGIN", texts)
            try:
                yield lite, pg
            finally:
                lite.close()
                pg.close()
    finally:
        server.stop()


def print_tokenisation(samples: list[dict[str, Any]]) -> None:
    texts = [turn_content(t, False) for s in samples for _, _, t in turns(s["conversation"])]
    asked = [q.text for s in samples for q in questions(s)]
    with both(texts) as (lite, pg):
        lengths = {
            int(r[0]): leading_varint(bytes(r[1])) for r in lite.execute(FTS_LENGTHS).fetchall()
        }
        pg_lengths = {int(r[0]): int(r[1] or 0) for r in pg.execute(PG_LENGTHS).fetchall()}
        lite.execute(FTS_VOCAB)
        vocab = {str(r[0]): int(r[1]) for r in lite.execute("SELECT term, doc FROM vocab")}
        pg_vocab = {str(r[0]): int(r[1]) for r in pg.execute(PG_VOCAB).fetchall()}
        tokens = sorted({t for text in asked for t in query_tokens(text)})
        counts = {t: (count_documents(lite, t, CAP), count_documents(pg, t, CAP)) for t in tokens}
    longer = [seq for seq in lengths if lengths[seq] != pg_lengths.get(seq)]
    only_fts, only_pg = sorted(set(vocab) - set(pg_vocab)), sorted(set(pg_vocab) - set(vocab))
    common = sorted(t for t in set(vocab) & set(pg_vocab) if vocab[t] != pg_vocab[t])
    differ = [t for t, (a, b) in counts.items() if a != b]
    print(f"\nTokenisation over {len(texts)} turns and {len(asked)} questions:\n")
    total, pg_total = sum(lengths.values()), sum(pg_lengths.values())
    print(f"- rows: {len(lengths)} / {len(pg_lengths)} (FTS5 / PostgreSQL); tokens {total} / "
          f"{pg_total}; lengths differ in {len(longer)} rows")  # fmt: skip
    for seq in longer[:EXAMPLES]:
        print(f"  - row {seq}: {lengths[seq]} / {pg_lengths.get(seq)}")
    print(f"- terms: {len(vocab)} / {len(pg_vocab)}; only FTS5: {len(only_fts)} "
          f"{only_fts[:EXAMPLES]}")  # fmt: skip
    print(f"- only PostgreSQL: {len(only_pg)} {only_pg[:EXAMPLES]}")
    print(f"- terms in both, in a different number of rows: {len(common)} "
          f"{[(t, vocab[t], pg_vocab[t]) for t in common[:EXAMPLES]]}")  # fmt: skip
    print(f"- query tokens: {len(tokens)}; document count differs for {len(differ)} "
          f"{[(t, *counts[t]) for t in differ[:EXAMPLES]]}")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    if not args.data.exists():
        print(f"skipped: {args.data} not found (LoCoMo data is not shipped with the project)")
        return 0
    print_tokenisation(json.loads(args.data.read_text(encoding="utf-8")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
