"""`signet doctor`: local checks over real files, daemon checks over /health and /api/status."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_fakes import FakeDaemon

from signet_desktop.api.views import embedding_status_json
from signet_desktop.cli import doctor
from signet_desktop.cli.doctor import Level
from signet_desktop.cli.main import main
from signet_desktop.cli.status_wire import embedding_from_wire, vector_from_wire
from signet_desktop.domain.vector_search import VecStatus
from signet_desktop.embedding.tracker import Coverage
from signet_desktop.service.embeddings.service import EmbeddingStatus

Capture = pytest.CaptureFixture[str]


def healthy(fake: FakeDaemon, workspace: Path) -> None:
    fake.reply(
        "GET", "/health", 200,
        {"status": "ok", "version": "0.1.0", "pid": 7, "uptime": 12, "agentsDir": str(workspace)},
    )  # fmt: skip
    fake.reply(
        "GET", "/api/status", 200,
        {"vector": {"available": True, "version": "v0.1.9"},
         "embedding": {"provider": "native", "model": "all-MiniLM-L6-v2", "available": True},
         "startup": {"embedding-model": {"state": "done", "error": None}}},
    )  # fmt: skip


def run_doctor(fake_url: str, workspace: Path) -> int:
    return main(["doctor", "--workspace", str(workspace)], env={"SIGNET_DAEMON_URL": fake_url})


def test_all_green(fake_daemon: FakeDaemon, tmp_path: Path, capsys: Capture) -> None:
    (tmp_path / "agent.yaml").write_text("search:\n  alpha: 0.6\n")
    healthy(fake_daemon, tmp_path)
    assert run_doctor(fake_daemon.url, tmp_path) == 0
    out = capsys.readouterr().out
    assert f"✓ workspace {tmp_path}" in out
    assert f"✓ config {tmp_path / 'agent.yaml'} parsed" in out
    assert "! database" in out and "not created yet" in out
    assert "✓ daemon ok at" in out
    assert "✓ sqlite-vec loaded (v0.1.9)" in out
    assert "✓ embedding native all-MiniLM-L6-v2" in out
    assert "✓ startup task embedding-model done" in out
    assert "✗" not in out


def test_retired_key_fails_with_its_message(
    fake_daemon: FakeDaemon, tmp_path: Path, capsys: Capture
) -> None:
    (tmp_path / "agent.yaml").write_text(
        "memory:\n  pipelineV2:\n    extraction:\n      provider: ollama\n"
    )
    healthy(fake_daemon, tmp_path)
    assert run_doctor(fake_daemon.url, tmp_path) == 1
    out = capsys.readouterr().out
    assert "✗ config:" in out
    assert "memory.pipelineV2.extraction.provider is retired" in out


def test_ignored_keys_listed_and_unknown_keys_warned(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text("git:\n  enabled: true\nsearch:\n  alpah: 0.5\n")
    checks = doctor.config_checks(tmp_path)
    assert checks[0].level is Level.OK
    assert "git" in checks[0].details[0]
    assert checks[1].level is Level.WARN
    assert "did you mean 'search.alpha'" in checks[1].text


def test_corrupt_yaml_fails_with_line(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text("search:\n  alpha: [1,\n")
    (check,) = doctor.config_checks(tmp_path)
    assert check.level is Level.FAIL
    assert "agent.yaml:" in check.text and "invalid YAML" in check.text


def test_database_header(tmp_path: Path) -> None:
    db = tmp_path / "memories.db"
    assert doctor.database_check(db).level is Level.WARN
    db.write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    assert doctor.database_check(db).level is Level.OK
    db.write_bytes(b"hello, not a database")
    check = doctor.database_check(db)
    assert check.level is Level.FAIL and "not a SQLite database" in check.text
    assert db.read_bytes() == b"hello, not a database"


def test_missing_workspace_and_daemon_down(
    closed_url: str, tmp_path: Path, capsys: Capture
) -> None:
    missing = tmp_path / "nope"
    assert run_doctor(closed_url, missing) == 1
    out = capsys.readouterr().out
    assert f"✗ workspace {missing} does not exist" in out
    assert f"✗ Signet daemon is not running at {closed_url}" in out
    assert "Traceback" not in out
    assert not missing.exists()


def test_daemon_on_other_workspace_warns(tmp_path: Path) -> None:
    checks = doctor.daemon_check("http://x", {"status": "ok", "agentsDir": "/elsewhere"}, tmp_path)
    assert [c.level for c in checks] == [Level.OK, Level.WARN]
    assert "/elsewhere" in checks[1].text


def test_daemon_auth_failure_is_a_failure(
    fake_daemon: FakeDaemon, tmp_path: Path, capsys: Capture
) -> None:
    fake_daemon.reply("GET", "/health", 401, {"error": "missing bearer token"})
    assert run_doctor(fake_daemon.url, tmp_path) == 1
    assert "missing bearer token (set SIGNET_TOKEN" in capsys.readouterr().out


def test_vector_embedding_startup_levels() -> None:
    assert doctor.vector_check(vector_from_wire({})).level is Level.WARN
    off = doctor.vector_check(vector_from_wire({"vector": {"available": False, "error": "x"}}))
    assert off.level is Level.WARN and "not loaded: x" in off.text
    assert embedding_from_wire({}) is None
    tasks = doctor.startup_checks(
        {"startup": {"a": {"state": "failed", "error": "boom"}, "b": {"state": "running"}}}
    )
    assert [t.level for t in tasks] == [Level.FAIL, Level.WARN]
    assert doctor.failed(tasks)
    assert doctor.render(tasks)[0] == "✗ startup task a failed: boom"


@pytest.mark.parametrize(
    "embedding",
    [
        EmbeddingStatus("none", None, None, None, "unavailable"),
        EmbeddingStatus("fastembed", "bge-small", 384, Coverage(3, "active", 400, 312), "complete"),
    ],
)
def test_doctor_judges_the_values_the_daemon_reported(embedding: EmbeddingStatus) -> None:
    """The wire read back gives the values it was written from, so doctor and the pane agree."""
    wire = {
        "vector": {"available": True, "version": "v0.1.6", "error": None},
        "embedding": embedding_status_json(embedding),
    }
    assert vector_from_wire(wire) == VecStatus(True, "v0.1.6", None)
    assert embedding_from_wire(wire) == embedding
    check = doctor.embedding_check(embedding)
    if embedding.coverage is not None:
        assert check.text == "embedding fastembed bge-small (384 dims, coverage 312/400)"


def test_doctor_says_rate_limits_do_not_apply_in_local_mode(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text(
        "auth:\n  mode: local\n  rateLimits:\n    forget:\n      windowMs: 60000\n      max: 5\n"
    )
    check = doctor.config_checks(tmp_path)[0]
    assert any(
        "auth.rateLimits (applied only in auth.mode team or hybrid)" in d for d in check.details
    )
