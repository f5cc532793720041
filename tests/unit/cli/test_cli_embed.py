"""`signet embed audit|backfill` and `signet repair resync-vec` against a scripted fake daemon."""

from __future__ import annotations

import argparse
import json
from typing import Any

import pytest
from cli_fakes import FakeDaemon

from signet_desktop.cli import embed_output
from signet_desktop.cli.context import CliContext
from signet_desktop.cli.embed_commands import LONG_TIMEOUT_S, long_client
from signet_desktop.cli.main import main

Capture = pytest.CaptureFixture[str]
STATUS = "/api/embeddings/status"
BACKFILL = "/api/embeddings/backfill"
RESYNC = "/api/repair/resync-vec"


def call(fake: FakeDaemon, *argv: str) -> int:
    return main(list(argv), env={"SIGNET_DAEMON_URL": fake.url})


def generation(
    gid: int, status: str, vectors: int, model: str = "all-MiniLM-L6-v2"
) -> dict[str, Any]:
    return {
        "id": gid,
        "provider": "native",
        "model": model,
        "dimensions": 384,
        "vecTable": f"vec_embeddings_g{gid}",
        "status": status,
        "createdAt": "2025-01-01T00:00:00.000Z",
        "activatedAt": None,
        "retiredAt": None,
        "vectors": vectors,
    }


def audit_answer(**overrides: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "provider": "native",
        "model": "all-MiniLM-L6-v2",
        "dimensions": 384,
        "generation": {"id": 2, "status": "active"},
        "coverage": {
            "generation": 2, "status": "active", "total": 1000, "embedded": 999,
            "missing": 1, "ratio": 0.999,
        },
        "vectorSearch": "complete",
        "generations": [
            generation(1, "retired", 40, model="hash-384"),
            generation(2, "active", 1001),
        ],
        "mirror": {"enabled": True, "error": None, "missing": 2, "orphans": 1},
        "fallbackWindow": 10000,
        "jobs": {"pending": 3, "leased": 1, "completed": 9, "failed": 0, "dead": 2, "cancelled": 0},
        "worker": {"lastError": None, "lastStep": "scan"},
    }  # fmt: skip
    answer.update(overrides)
    return answer


def backfill_answer(
    embedded: int, missing_before: int, missing_after: int, total: int = 1000, **extra: Any
) -> dict[str, Any]:
    return {
        "dryRun": False,
        "generation": 2,
        "missingBefore": missing_before,
        "embedded": embedded,
        "skipped": 0,
        "failed": extra.pop("failed", 0),
        "error": extra.pop("error", None),
        "coverage": {
            "generation": 2, "status": "active", "total": total,
            "embedded": total - missing_after, "missing": missing_after,
            "ratio": round((total - missing_after) / total, 4),
        },
    }  # fmt: skip


# -- audit ------------------------------------------------------------------------------------


def test_audit_prints_summary_table_and_hints(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    fake_daemon.reply("GET", STATUS, 200, audit_answer())
    assert call(fake_daemon, "embed", "audit") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "embedder       native · all-MiniLM-L6-v2 · 384 dims"
    assert lines[1] == "vector search  complete (sqlite-vec KNN over every vector)"
    # 999/1000 is rounded down: a missing vector never shows as 100%.
    assert (
        lines[2] == "coverage       99.9% (999/1,000) live memories have a vector in generation 2"
    )
    assert lines[3] == "backfill jobs  4 queued (3 pending, 1 leased) · 2 dead"
    header = next(i for i, line in enumerate(lines) if line.startswith("ID  "))
    assert lines[header].split() == [
        "ID", "MODEL", "DIMS", "STATUS", "COVERAGE", "VECTORS", "MIRROR", "QUEUED",
    ]  # fmt: skip
    assert lines[header + 1].split() == ["1", "hash-384", "384", "retired", "-", "40", "-", "-"]
    assert lines[header + 2].split() == [
        "2", "all-MiniLM-L6-v2", "384", "active", "99.9%", "(999/1,000)", "1,001",
        "999/1,001", "+1", "orphan", "4",
    ]  # fmt: skip
    assert "hint: 1 live memory has no vector yet: `signet embed backfill --all`" in lines
    assert (
        "hint: the vec0 mirror is out of step (2 vectors missing, 1 orphan row): "
        "`signet repair resync-vec`"
    ) in lines
    (request,) = fake_daemon.requests
    assert (request.method, request.path) == ("GET", STATUS)


def test_audit_in_step_has_no_hints(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    answer = audit_answer(
        coverage={"generation": 2, "total": 3, "embedded": 3, "missing": 0},
        mirror={"enabled": True, "error": None, "missing": 0, "orphans": 0},
        generations=[generation(2, "active", 3)],
    )
    fake_daemon.reply("GET", STATUS, 200, answer)
    assert call(fake_daemon, "embed", "audit") == 0
    out = capsys.readouterr().out
    assert "hint:" not in out
    assert out.splitlines()[-1].split() == [
        "2", "all-MiniLM-L6-v2", "384", "active", "100.0%", "(3/3)", "3", "3/3", "4",
    ]  # fmt: skip


def test_audit_without_sqlite_vec_explains_the_fallback(
    fake_daemon: FakeDaemon, capsys: Capture
) -> None:
    answer = audit_answer(
        vectorSearch="recent-window", mirror={"enabled": False, "error": "no such module"}
    )
    fake_daemon.reply("GET", STATUS, 200, answer)
    assert call(fake_daemon, "embed", "audit") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == (
        "vector search  recent-window: sqlite-vec is not loaded (no such module); "
        "recall scans the newest 10,000 vectors"
    )
    assert " off " in next(line for line in lines if line.startswith("2 "))
    assert not any("resync-vec" in line for line in lines)


def test_audit_with_no_embedder(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    answer: dict[str, Any] = {
        "provider": "none", "model": None, "dimensions": None, "generation": None,
        "coverage": None, "vectorSearch": "unavailable", "generations": [],
        "mirror": {"enabled": True, "error": None}, "fallbackWindow": 10000,
        "jobs": {"pending": 0, "leased": 0, "dead": 0}, "worker": None,
    }  # fmt: skip
    fake_daemon.reply("GET", STATUS, 200, answer)
    assert call(fake_daemon, "embed", "audit") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "embedder       none (embedding.provider: none)"
    assert lines[1] == "vector search  off (no embedder configured; keyword recall only)"
    assert "No embedding generations yet." in lines


def test_audit_while_a_new_model_is_building(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    answer = audit_answer(
        vectorSearch="unavailable",
        generation={"id": 3, "status": "building"},
        worker={"lastError": "ollama: connection refused", "lastStep": "scan"},
    )
    fake_daemon.reply("GET", STATUS, 200, answer)
    assert call(fake_daemon, "embed", "audit") == 0
    out = capsys.readouterr().out
    assert "paused while generation 3 is building" in out
    assert "worker         last error: ollama: connection refused" in out


def test_audit_json_is_the_raw_answer(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    fake_daemon.reply("GET", STATUS, 200, audit_answer())
    assert call(fake_daemon, "embed", "audit", "--json") == 0
    assert json.loads(capsys.readouterr().out) == audit_answer()


def test_audit_daemon_down_exit_3(closed_url: str, capsys: Capture) -> None:
    assert main(["embed", "audit"], env={"SIGNET_DAEMON_URL": closed_url}) == 3
    assert capsys.readouterr().err.startswith("Signet daemon is not running")


# -- backfill ---------------------------------------------------------------------------------


def test_backfill_once_sends_limit_and_reports(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    fake_daemon.reply("POST", BACKFILL, 200, backfill_answer(500, 1200, 700))
    assert call(fake_daemon, "embed", "backfill") == 0
    assert capsys.readouterr().out.splitlines() == [
        "embedded 500/1,200; coverage 30.0% (300/1,000)",
        "700 still missing: run `signet embed backfill --all`",
    ]
    (request,) = fake_daemon.requests
    assert request.body == {"limit": 500, "dryRun": False}


def test_backfill_partial_error_is_a_warning(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    answer = backfill_answer(3, 5, 0, total=5, failed=2, error="one text was rejected")
    fake_daemon.reply("POST", BACKFILL, 200, answer)
    assert call(fake_daemon, "embed", "backfill", "-l", "7") == 0
    assert capsys.readouterr().out.splitlines() == [
        "embedded 3/5 (2 failed); coverage 100.0% (5/5)",
        "warning: one text was rejected",
    ]
    assert fake_daemon.requests[0].body == {"limit": 7, "dryRun": False}


def test_backfill_dry_run_counts_only(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    fake_daemon.reply("POST", BACKFILL, 200, {"dryRun": True, "generation": 2, "missing": 1})
    assert call(fake_daemon, "embed", "backfill", "--dry-run", "--all") == 0
    assert capsys.readouterr().out.splitlines() == [
        "dry run: 1 live memory lacks a vector in generation 2; nothing was embedded",
        "run `signet embed backfill --all` to embed them",
    ]
    (request,) = fake_daemon.requests
    assert request.body == {"limit": 100, "dryRun": True}


def test_backfill_all_loops_until_nothing_is_missing(
    fake_daemon: FakeDaemon, capsys: Capture
) -> None:
    fake_daemon.script(
        "POST", BACKFILL,
        (200, backfill_answer(64, 1200, 1136, total=1300)),
        (200, backfill_answer(64, 1136, 1073, total=1301)),  # one memory saved meanwhile
        (200, backfill_answer(1073, 1073, 0, total=1301)),
    )  # fmt: skip
    assert call(fake_daemon, "embed", "backfill", "--all", "--limit", "64") == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" · ")[:2] for line in lines[:3]] == [
        ["embedded 64/1,200 (5.3%)", "0 failed"],
        ["embedded 128/1,201 (10.6%)", "0 failed"],
        ["embedded 1,201/1,201 (100.0%)", "0 failed"],
    ]
    assert lines[3].startswith("done: embedded 1,201 memories in ")
    assert lines[3].endswith("; coverage 100.0% (1,301/1,301)")
    assert [r.body for r in fake_daemon.requests] == [{"limit": 64, "dryRun": False}] * 3


def test_backfill_all_with_nothing_missing(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    fake_daemon.reply("POST", BACKFILL, 200, backfill_answer(0, 0, 0, total=3))
    assert call(fake_daemon, "embed", "backfill", "--all") == 0
    assert capsys.readouterr().out == "nothing to embed: coverage 100.0% (3/3)\n"
    assert len(fake_daemon.requests) == 1


def test_backfill_all_stops_on_503_with_the_daemons_message(
    fake_daemon: FakeDaemon, capsys: Capture
) -> None:
    refusal = {"error": "embedder unavailable: connection refused", "code": "embedder_unavailable"}
    fake_daemon.script(
        "POST", BACKFILL, (200, backfill_answer(100, 150, 50, total=150)), (503, refusal)
    )
    assert call(fake_daemon, "embed", "backfill", "--all") == 1
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    assert out[0].startswith("embedded 100/150 (66.6%)")
    assert out[1] == "stopped after embedding 100/150"
    err = captured.err.splitlines()
    assert err[0] == "error: embedder unavailable: connection refused [embedder_unavailable]"
    assert err[1].startswith("hint: memories stay saved")
    assert len(fake_daemon.requests) == 2


def test_backfill_first_round_503(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    fake_daemon.reply("POST", BACKFILL, 503, {"error": "embedder unavailable: down"})
    assert call(fake_daemon, "embed", "backfill", "--all") == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "error: embedder unavailable: down\n"
    assert len(fake_daemon.requests) == 1


def test_backfill_all_gives_up_when_nothing_progresses(
    fake_daemon: FakeDaemon, capsys: Capture
) -> None:
    stuck = backfill_answer(0, 5, 5, total=5, failed=5, error="bad vector")
    fake_daemon.reply("POST", BACKFILL, 200, stuck)
    assert call(fake_daemon, "embed", "backfill", "--all") == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2] == (
        "stopped: 5 memories still have no vector (10 failed; last error: bad vector); "
        "coverage 0.0% (0/5)"
    )
    assert lines[-1] == "the daemon's worker keeps retrying; see `signet embed audit`"
    assert len(fake_daemon.requests) == 2


def test_backfill_all_json_collects_rounds(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    first, last = backfill_answer(5, 10, 5, total=10), backfill_answer(5, 5, 0, total=10)
    fake_daemon.script("POST", BACKFILL, (200, first), (200, last))
    assert call(fake_daemon, "embed", "backfill", "--all", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rounds"] == [first, last]
    assert (data["embedded"], data["missing"], data["coverage"]) == (10, 0, last["coverage"])


@pytest.mark.parametrize("limit", ["0", "-3", "10001", "many"])
def test_bad_limit_sends_nothing(fake_daemon: FakeDaemon, capsys: Capture, limit: str) -> None:
    assert call(fake_daemon, "embed", "backfill", "--limit", limit) == 2
    assert "--limit" in capsys.readouterr().err
    assert fake_daemon.requests == []


def test_backfill_daemon_refusal_is_exit_2(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    fake_daemon.reply("POST", BACKFILL, 422, {"error": "invalid request: limit: too big"})
    assert call(fake_daemon, "embed", "backfill") == 2
    assert capsys.readouterr().err == "error: invalid request: limit: too big\n"


def test_long_requests_get_a_long_timeout_unless_given() -> None:
    ctx = CliContext(env={"SIGNET_DAEMON_URL": "http://127.0.0.1:9"})
    with long_client(argparse.Namespace(), ctx) as client:
        assert client._http.timeout.read == LONG_TIMEOUT_S
    with long_client(argparse.Namespace(timeout=2.5), ctx) as client:
        assert client._http.timeout.read == 2.5


# -- repair resync-vec ------------------------------------------------------------------------


def resync_answer(**fields: Any) -> dict[str, Any]:
    base = {
        "generation": 1, "canonical": 3, "mirroredBefore": 1, "added": 2, "removed": 0,
        "rebuilt": False, "dryRun": False,
    }  # fmt: skip
    return {**base, **fields}


def test_resync_sends_options_and_reports(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    fake_daemon.reply("POST", RESYNC, 200, resync_answer())
    assert call(fake_daemon, "repair", "resync-vec") == 0
    assert capsys.readouterr().out == (
        "resynced the vec0 mirror of generation 1 (had 1/3 canonical vectors mirrored): "
        "added 2 vectors\n"
    )
    assert fake_daemon.requests[0].body == {"full": False, "dryRun": False}


def test_resync_full_dry_run_for_a_generation(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    answer = resync_answer(generation=2, added=3, rebuilt=True, dryRun=True)
    fake_daemon.reply("POST", RESYNC, 200, answer)
    code = call(fake_daemon, "repair", "resync-vec", "--generation", "2", "--full", "--dry-run")
    assert code == 0
    assert capsys.readouterr().out == (
        "dry run: generation 2 has 1/3 canonical vectors mirrored; resync would rebuild the "
        "table and copy 3 vectors (nothing changed)\n"
    )
    assert fake_daemon.requests[0].body == {"full": True, "dryRun": True, "generation": 2}


@pytest.mark.parametrize(
    ("answer", "line"),
    [
        (
            resync_answer(mirroredBefore=3, added=0),
            "the vec0 mirror of generation 1 is in step (3/3 canonical vectors mirrored)",
        ),
        (
            resync_answer(mirroredBefore=3, added=0, dryRun=True),
            "dry run: the vec0 mirror of generation 1 is in step (3/3 canonical vectors mirrored)",
        ),
        (
            resync_answer(added=1, removed=2),
            "resynced the vec0 mirror of generation 1 (had 1/3 canonical vectors mirrored): "
            "added 1 vector and removed 2 orphan rows",
        ),
        (
            resync_answer(added=3, rebuilt=True),
            "resynced the vec0 mirror of generation 1 (had 1/3 canonical vectors mirrored): "
            "rebuilt it with 3 vectors",
        ),
    ],
)
def test_resync_lines(answer: dict[str, Any], line: str) -> None:
    assert embed_output.resync_lines(answer) == [line]


def test_resync_without_sqlite_vec_exit_1(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    refusal = {"error": "sqlite-vec is not loaded (disabled)", "code": "vec_unavailable"}
    fake_daemon.reply("POST", RESYNC, 503, refusal)
    assert call(fake_daemon, "repair", "resync-vec") == 1
    assert capsys.readouterr().err.splitlines() == [
        "error: sqlite-vec is not loaded (disabled) [vec_unavailable]",
        "hint: the daemon could not load sqlite-vec; see `signet doctor`",
    ]


def test_resync_unknown_generation_exit_2(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    fake_daemon.reply("POST", RESYNC, 404, {"error": "no 42", "code": "generation_not_found"})
    assert call(fake_daemon, "repair", "resync-vec", "--generation", "42") == 2
    assert capsys.readouterr().err == "error: no 42 [generation_not_found]\n"


@pytest.mark.parametrize(
    "argv", [["embed"], ["repair"], ["repair", "resync-vec", "--generation", "0"]]
)
def test_incomplete_commands_are_usage_errors(
    fake_daemon: FakeDaemon, capsys: Capture, argv: list[str]
) -> None:
    assert call(fake_daemon, *argv) == 2
    assert "usage: signet" in capsys.readouterr().err
    assert fake_daemon.requests == []


@pytest.mark.parametrize(
    "argv", [["embed", "audit"], ["embed", "backfill"], ["repair", "resync-vec"]]
)
def test_help_has_examples(capsys: Capture, argv: list[str]) -> None:
    assert main([*argv, "--help"], env={}) == 0
    out = capsys.readouterr().out
    assert f"usage: signet {' '.join(argv)}" in out and "examples:\n  signet " in out


def test_percent_rounds_down() -> None:
    assert embed_output.percent(999, 1000) == "99.9%"
    assert embed_output.percent(1, 3) == "33.3%"
    assert embed_output.percent(0, 0) == "100.0%"
    assert embed_output.percent(None, 3) == "-"
