"""storage/sources.py: one running run per source, bounded tombstones, scoped reads."""

from __future__ import annotations

import json

import pytest
import sqlean

from signet_desktop.domain.sources import ImportCounts
from signet_desktop.storage import sources as rows
from signet_desktop.storage.database import Database


def test_a_second_running_run_is_refused_by_the_index(db: Database) -> None:
    with db.write() as conn:
        source = rows.insert_source(
            conn, agent_id="default", kind="codex", name="codex", root_path="/r"
        )
        first = rows.insert_run(conn, "default", source.id, "manual")
    with pytest.raises(sqlean.IntegrityError), db.write() as conn:
        rows.insert_run(conn, "default", source.id, "manual")
    with db.write() as conn:
        rows.add_run_counts(conn, first, ImportCounts(files_seen=2, turns_imported=5))
        rows.add_run_counts(conn, first, ImportCounts(files_seen=1))
        rows.finish_run(conn, first, "completed")
        second = rows.insert_run(conn, "default", source.id, "manual")  # allowed now
    run = rows.get_run(db.reader(), "default", first)
    assert run is not None and run.status == "completed"
    assert (run.counts.files_seen, run.counts.turns_imported) == (3, 5)
    assert rows.get_run(db.reader(), "other", second) is None  # scoped


def test_one_live_source_per_root_and_kind(db: Database) -> None:
    with db.write() as conn:
        rows.insert_source(conn, agent_id="a", kind="codex", name="n", root_path="/r")
        rows.insert_source(conn, agent_id="b", kind="codex", name="n", root_path="/r")
    with pytest.raises(sqlean.IntegrityError), db.write() as conn:
        rows.insert_source(conn, agent_id="a", kind="codex", name="n", root_path="/r")


def test_tombstone_counts_are_bounded(db: Database) -> None:
    with db.write() as conn:
        source = rows.insert_source(conn, agent_id="a", kind="codex", name="n", root_path="/r")
        purged = {f"table_{i:04d}_{'x' * 40}": i for i in range(400)}
        rows.insert_tombstone(conn, source, purged=purged, reason="r" * 900, removed_by="me")
    (tomb,) = rows.tombstones_at(db.reader(), "a", "codex", "/r")
    assert tomb.purged["truncated"] == 1
    assert len(json.dumps(dict(tomb.purged), separators=(",", ":"))) <= rows.MAX_PURGED_JSON
    assert tomb.reason is not None and len(tomb.reason) == 500
    assert rows.tombstones_at(db.reader(), "b", "codex", "/r") == []
