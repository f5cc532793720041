"""`signet repair queue …` against the real app on a loopback socket: dry run first, --apply
changes exactly the listed jobs, an empty queue is a clean no-op, status shows the counts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.daemon import Capture, CliDaemon, run_daemon
from support.db import database_of
from support.queue_jobs import all_rows, fill_queue

from signet_desktop.cli.repair_commands import duration_ms
from signet_desktop.embedding.hashing import HashEmbedder


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[CliDaemon]:
    with run_daemon(tmp_path / "ws", HashEmbedder(16)) as served:
        yield served


def test_dry_run_by_default_then_apply_changes_exactly_those_jobs(
    daemon: CliDaemon, capsys: Capture
) -> None:
    db = database_of(daemon.service)
    made = fill_queue(db)
    before = all_rows(db)
    code, out, err = daemon.cli(capsys, "repair", "queue", "requeue")
    assert (code, err) == (0, "")
    assert out.startswith("dry run: 2 jobs would be requeued to pending; nothing changed")
    assert "dead -> pending" in out and "timeout after 10 s" in out
    assert "--apply" in out
    assert all_rows(db) == before

    code, out, _ = daemon.cli(capsys, "repair", "queue", "requeue", "--json")
    planned = json.loads(out)["ids"]
    code, out, err = daemon.cli(capsys, "repair", "queue", "requeue", "--apply", "--json")
    assert code == 0, err
    applied = json.loads(out)
    assert applied["dryRun"] is False and applied["ids"] == planned == list(made.dead)
    after = all_rows(db)
    assert {i for i in before if before[i] != after[i]} == set(planned)


def test_apply_on_an_empty_queue_is_a_clean_no_op(daemon: CliDaemon, capsys: Capture) -> None:
    for action in ("requeue", "release", "cancel", "prune"):
        code, out, err = daemon.cli(capsys, "repair", "queue", action, "--apply")
        assert (code, err) == (0, "")
        assert out.strip() == "nothing to do: no job matched; nothing changed"
    assert all_rows(database_of(daemon.service)) == {}


def test_filters_reach_the_daemon(daemon: CliDaemon, capsys: Capture) -> None:
    made = fill_queue(database_of(daemon.service))
    argv = ("repair", "queue", "requeue", "--type", "document_ingest", "--error", "TIMEOUT",
            "--older-than", "1h", "--max-batch", "5", "--json")  # fmt: skip
    code, out, _ = daemon.cli(capsys, *argv)
    assert code == 0 and json.loads(out)["ids"] == [made.dead[0]]
    code, out, _ = daemon.cli(
        capsys, "repair", "queue", "cancel", "--id", made.pending[1], "--json"
    )
    assert json.loads(out)["ids"] == [made.pending[1]]


def test_status_shows_counts_signals_and_the_oldest_dead(
    daemon: CliDaemon, capsys: Capture
) -> None:
    fill_queue(database_of(daemon.service))
    code, out, err = daemon.cli(capsys, "repair", "queue", "status")
    assert (code, err) == (0, "")
    assert "pending 2 · leased 1 · completed 2 · failed 0 · dead 2 · cancelled 0" in out
    assert "lease anomalies 1" in out and "oldest dead jobs:" in out
    assert "extract" not in out


def test_a_refused_apply_prints_the_daemon_reason(daemon: CliDaemon, capsys: Capture) -> None:
    made = fill_queue(database_of(daemon.service))
    assert daemon.cli(capsys, "repair", "queue", "requeue", "--id", made.dead[0], "--apply")[0] == 0
    code, _, err = daemon.cli(capsys, "repair", "queue", "requeue", "--apply")
    assert code != 0 and "cooldown" in err


def test_bad_arguments_send_nothing(daemon: CliDaemon, capsys: Capture) -> None:
    fill_queue(database_of(daemon.service))
    before = all_rows(database_of(daemon.service))
    for argv in (("vacuum",), ("prune", "--older-than", "soon"), ("prune", "--max-batch", "0")):
        code, _, err = daemon.cli(capsys, "repair", "queue", *argv)
        assert code == 2 and err
    assert all_rows(database_of(daemon.service)) == before


def test_durations() -> None:
    assert [duration_ms(t) for t in ("500", "500ms", "30s", "15m", "2h", "14d")] == [
        500, 500, 30_000, 900_000, 7_200_000, 1_209_600_000
    ]  # fmt: skip
