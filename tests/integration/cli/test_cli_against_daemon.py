"""The `signet` CLI against the real FastAPI app served by uvicorn on a loopback socket."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.daemon import Capture, CliDaemon, closed_loopback_url, run_daemon

from signet_desktop.cli.main import main
from signet_desktop.embedding.hashing import HashEmbedder


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[CliDaemon]:
    """build_service + create_app over a temp workspace, served by uvicorn in a thread."""
    with run_daemon(tmp_path / "ws", HashEmbedder()) as served:
        yield served


# Calibrated lexical scores weigh terms by IDF, which says nothing in a one- or two-memory
# workspace (a term in half the memories weighs 0); with the hash embedder standing in for
# vectors, recall tests need a workspace with some other memories in it.
BACKGROUND = [
    "Deploys go out on Tuesdays after the review", "The on-call rotation changes every Monday",
    "Logs are shipped to the central collector", "Feature flags live in the settings service",
    "The mobile app is built with Kotlin", "Design reviews happen in the studio room",
    "Backups run every night at two", "The staging cluster has four nodes",
    "Invoices are emailed as PDF files", "Alerts page the on-call engineer",
]  # fmt: skip


def remember_background(daemon: CliDaemon, capsys: Capture) -> None:
    for text in BACKGROUND:
        code, _, err = daemon.cli(capsys, "remember", text)
        assert code == 0, err


def saved_id(out: str) -> str:
    assert out.startswith("Saved "), out
    return out.split()[1]


def test_remember_then_recall_finds_it(daemon: CliDaemon, capsys: Capture) -> None:
    remember_background(daemon, capsys)
    code, out, err = daemon.cli(capsys, "remember", "The billing service uses PostgreSQL 16")
    assert (code, err) == (0, "")
    memory_id = saved_id(out)
    daemon.cli(capsys, "remember", "The frontend is written in Svelte")
    code, out, _ = daemon.cli(capsys, "recall", "which database does billing use")
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith(" 1. ")
    assert "The billing service uses PostgreSQL 16" in first and f"[{memory_id}]" in first
    assert out.splitlines()[-1].startswith("-- ")


def test_second_remember_is_deduped(daemon: CliDaemon, capsys: Capture) -> None:
    _, out, _ = daemon.cli(capsys, "remember", "We deploy on Fridays")
    memory_id = saved_id(out)
    code, out, _ = daemon.cli(capsys, "remember", "we deploy on fridays")
    assert code == 0
    assert out.strip() == f"Already stored {memory_id} (deduped)"
    assert daemon.count_rows() == 1


def test_recall_json_parses_with_signet_fields(daemon: CliDaemon, capsys: Capture) -> None:
    daemon.cli(capsys, "remember", "-t", "infra,db", "Redis caches sessions")
    code, out, _ = daemon.cli(capsys, "recall", "redis sessions", "--json", "-l", "3")
    assert code == 0
    data = json.loads(out)
    (hit,) = data["results"]
    assert hit["content"] == "Redis caches sessions"
    assert hit["tags"] == ["infra", "db"]
    assert {"id", "score", "type", "created_at", "source"} <= hit.keys()
    assert "meta" in data and "method" in data


def test_recall_no_match(daemon: CliDaemon, capsys: Capture) -> None:
    assert daemon.cli(capsys, "recall", "zebra") == (0, "No memories matched.\n", "")


def test_fts_syntax_in_query_is_harmless(daemon: CliDaemon, capsys: Capture) -> None:
    remember_background(daemon, capsys)
    daemon.cli(capsys, "remember", "billing uses postgres")
    code, out, err = daemon.cli(capsys, "recall", '"billing" NEAR( AND OR * postgres')
    assert code == 0, err
    assert "billing uses postgres" in out


def test_get_history_forget_recover_flow(daemon: CliDaemon, capsys: Capture) -> None:
    _, out, _ = daemon.cli(capsys, "remember", "critical: never force-push main")
    memory_id = saved_id(out)

    code, out, _ = daemon.cli(capsys, "memory", "get", memory_id)
    assert code == 0
    assert out.splitlines()[0].split() == ["id", memory_id]
    assert any(line.split() == ["pinned", "yes"] for line in out.splitlines())
    assert out.rstrip().endswith("never force-push main")

    code, _, err = daemon.cli(capsys, "memory", "forget", memory_id, "--reason", "test")
    assert code == 2
    assert err.splitlines() == [
        "error: memory is pinned; pass force to forget it [pinned_requires_force]",
        "hint: add --force to forget a pinned memory",
    ]
    assert daemon.cli(capsys, "memory", "get", memory_id)[0] == 0

    code, out, err = daemon.cli(
        capsys, "memory", "forget", memory_id, "--reason", "obsolete", "--force"
    )
    assert (code, err) == (0, "")
    assert out.startswith(f"Forgot {memory_id}")
    code, _, err = daemon.cli(capsys, "memory", "get", memory_id)
    # A forgotten memory says so, and how to bring it back, instead of a bare "not found".
    assert code == 2 and "was deleted on" in err and "[not_found]" in err
    assert f"signet memory recover {memory_id}" in err
    assert daemon.cli(capsys, "recall", "force-push main")[1] == "No memories matched.\n"

    code, out, _ = daemon.cli(capsys, "memory", "recover", memory_id, "--reason", "oops")
    assert (code, out) == (0, f"Recovered {memory_id}\n")
    assert daemon.cli(capsys, "memory", "get", memory_id)[0] == 0

    code, out, _ = daemon.cli(capsys, "memory", "history", memory_id)
    assert code == 0
    events = [line.split()[1] for line in out.splitlines()[1:]]
    assert events == ["created", "deleted", "recovered"]
    assert "obsolete" in out and "oops" in out

    code, out, _ = daemon.cli(capsys, "memory", "history", memory_id, "--json")
    assert [e["event"] for e in json.loads(out)["history"]] == ["created", "deleted", "recovered"]


def test_if_version_conflict(daemon: CliDaemon, capsys: Capture) -> None:
    _, out, _ = daemon.cli(capsys, "remember", "temporary note")
    memory_id = saved_id(out)
    code, _, err = daemon.cli(
        capsys, "memory", "forget", memory_id, "--reason", "x", "--if-version", "99"
    )
    assert code == 2 and "version_conflict" in err
    assert daemon.cli(capsys, "memory", "get", memory_id)[0] == 0


def test_unknown_id_and_recover_of_live_memory(daemon: CliDaemon, capsys: Capture) -> None:
    code, out, err = daemon.cli(capsys, "memory", "get", "no-such-id")
    assert (code, out) == (2, "") and err.startswith("error: ")
    code, _, err = daemon.cli(capsys, "memory", "recover", "no-such-id")
    assert code == 2 and "Traceback" not in err


def test_agent_scoping(daemon: CliDaemon, capsys: Capture) -> None:
    _, out, _ = daemon.cli(capsys, "remember", "--agent", "alpha", "alpha secret plan")
    alpha_id = saved_id(out)
    assert daemon.cli(capsys, "recall", "secret plan")[1] == "No memories matched.\n"
    assert daemon.cli(capsys, "recall", "secret plan", "--agent", "beta")[1] == (
        "No memories matched.\n"
    )
    assert alpha_id in daemon.cli(capsys, "recall", "secret plan", "--agent", "alpha")[1]
    assert daemon.cli(capsys, "memory", "get", alpha_id)[0] == 2
    assert daemon.cli(capsys, "memory", "get", alpha_id, "--agent", "beta")[0] == 2
    assert daemon.cli(capsys, "memory", "forget", alpha_id, "--reason", "x")[0] == 2
    assert daemon.cli(capsys, "memory", "get", alpha_id, "--agent", "alpha")[0] == 0
    code, out, _ = daemon.cli(capsys, "memory", "list", "--agent", "alpha")
    assert code == 0 and alpha_id in out
    assert alpha_id not in daemon.cli(capsys, "memory", "list")[1]


def test_empty_content_writes_nothing(daemon: CliDaemon, capsys: Capture) -> None:
    assert daemon.cli(capsys, "remember", "   ")[0] == 2
    code, _, err = daemon.cli(capsys, "remember", "critical:")  # empty after the prefix
    assert code == 2 and err.startswith("error: ")
    assert daemon.count_rows() == 0


def test_bad_agent_id_is_the_daemons_4xx(daemon: CliDaemon, capsys: Capture) -> None:
    code, _, err = daemon.cli(capsys, "remember", "--agent", "../etc", "x")
    assert code == 2 and err.startswith("error: ")
    assert daemon.count_rows() == 0


def test_status_and_doctor(daemon: CliDaemon, capsys: Capture) -> None:
    daemon.cli(capsys, "remember", "one memory")
    code, out, _ = daemon.cli(capsys, "status")
    assert code == 0
    assert f"daemon      {daemon.url}" in out
    assert out.splitlines()[1].startswith("health      healthy (version ")
    assert "memories    1" in out
    assert "sqlite-vec  loaded" in out
    code, out, _ = daemon.cli(capsys, "status", "--json")
    assert json.loads(out)["status"]["vector"]["available"] is True

    code, out, _ = daemon.cli(capsys, "doctor", "--workspace", str(daemon.workspace))
    assert code == 0, out
    assert f"✓ workspace {daemon.workspace}" in out
    assert "is SQLite" in out and "✓ daemon healthy at" in out and "✓ sqlite-vec loaded" in out


def test_daemon_down_exit_3(capsys: Capture) -> None:
    url = closed_loopback_url()
    for argv in (["remember", "x"], ["recall", "x"], ["status"], ["memory", "get", "m"]):
        capsys.readouterr()
        assert main(argv, env={"SIGNET_DAEMON_URL": url}) == 3
        err = capsys.readouterr().err
        assert err.startswith(f"Signet daemon is not running at {url}")
        assert "Traceback" not in err
