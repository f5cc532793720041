"""`signet knowledge list|show|stats|add-entity|add-claim|link|archive` against the real app."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.daemon import Capture, CliDaemon, run_daemon

from signet_desktop.embedding.hashing import HashEmbedder


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[CliDaemon]:
    with run_daemon(tmp_path / "ws", HashEmbedder()) as served:
        yield served


def entity_id(daemon: CliDaemon, capsys: Capture, *argv: str) -> str:
    code, out, err = daemon.cli(capsys, "knowledge", "add-entity", *argv, "--json")
    assert code == 0, err
    return str(json.loads(out)["entity"]["id"])


def test_add_show_list_link_archive(daemon: CliDaemon, capsys: Capture) -> None:
    pg = entity_id(daemon, capsys, "Postgres 16", "--type", "system", "--alias", "PG16")
    ana = entity_id(daemon, capsys, "Ana", "--type", "person")
    code, out, err = daemon.cli(
        capsys, "knowledge", "add-entity", "postgres 16", "--type", "system"
    )
    assert code == 0 and out.startswith(f"exists {pg}"), err
    for value in ("5432", "5433"):
        code, out, err = daemon.cli(
            capsys, "knowledge", "add-claim", pg, "deployment", value, "--key", "port"
        )
        assert code == 0, err
    assert "v2: 5433" in out
    code, out, err = daemon.cli(capsys, "knowledge", "link", ana, pg, "maintains")
    assert code == 0 and out.strip() == "linked Ana -[maintains]-> Postgres 16", err
    code, out, _ = daemon.cli(capsys, "knowledge", "show", pg)
    assert "Postgres 16  (system, active)" in out and "aliases: PG16" in out
    assert "port = 5433" in out and "port = 5432  (superseded, v1)" in out
    assert "<- maintains Ana" in out
    code, out, _ = daemon.cli(capsys, "knowledge", "list", "--query", "pg16")
    assert code == 0 and pg in out and "Ana" not in out
    code, out, _ = daemon.cli(capsys, "knowledge", "stats")
    assert "entities: 2 (2 active)" in out and "claims: 2 (1 active, 1 superseded)" in out
    code, out, _ = daemon.cli(capsys, "knowledge", "archive", ana, "--reason", "left")
    assert code == 0 and out.startswith(f"archived {ana}")
    code, out, _ = daemon.cli(capsys, "knowledge", "list", "--json")
    assert [e["id"] for e in json.loads(out)["items"]] == [pg]


def test_refusals_and_agent_scope(daemon: CliDaemon, capsys: Capture) -> None:
    code, _, err = daemon.cli(capsys, "knowledge", "add-entity", "X", "--type", "spaceship")
    assert code != 0 and "spaceship" in err and "person" in err
    assert daemon.scalar("SELECT COUNT(*) FROM entities") == 0
    secret = entity_id(daemon, capsys, "Secret", "--agent", "agent-a")
    code, _, err = daemon.cli(capsys, "knowledge", "show", secret, "--agent", "agent-b")
    assert code != 0 and "not found" in err
    code, _, err = daemon.cli(capsys, "knowledge", "archive", secret, "--agent", "agent-b")
    assert code != 0
    code, out, _ = daemon.cli(capsys, "knowledge", "list", "--agent", "agent-b")
    assert out.strip() == "no entities"
    assert daemon.scalar("SELECT COUNT(*) FROM entities WHERE status = 'active'") == 1
