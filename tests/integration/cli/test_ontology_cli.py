"""`signet ontology proposals|apply|reject|contradictions|stream-apply` against the real app."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.daemon import Capture, CliDaemon, run_daemon

from signet_desktop.embedding.hashing import HashEmbedder

FACT = "Alice moved to Lisbon in May and now works at Acme."


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[CliDaemon]:
    with run_daemon(tmp_path / "ws", HashEmbedder()) as served:
        yield served


def op(name: str, payload: dict[str, Any], mid: str, quote: str, **extra: Any) -> dict[str, Any]:
    evidence = [{"quote": quote, "source_ref": f"memory:{mid}"}]
    return {"operation": name, "payload": payload, "confidence": 0.9, "evidence": evidence, **extra}


def write_ops(path: Path, lines: list[Any]) -> Path:
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return path


def test_stream_apply_dry_run_then_apply(
    daemon: CliDaemon, capsys: Capture, tmp_path: Path
) -> None:
    mid = daemon.remember(capsys, FACT)
    ops = write_ops(
        tmp_path / "ops.jsonl",
        [
            op("create_entity", {"name": "Alice", "type": "person"}, mid, "Alice moved"),
            op("create_entity", {"name": "Paris"}, mid, "Paris is lovely"),
        ],
    )
    code, out, err = daemon.cli(capsys, "ontology", "stream-apply", str(ops), "--dry-run")
    assert code == 1, err
    assert "line 1: valid create_entity" in out
    assert f"line 2: skipped create_entity — quote not found in memory:{mid}" in out
    assert out.strip().endswith("dry run: 1 skipped, 1 valid")
    assert daemon.scalar("SELECT COUNT(*) FROM entities") == 0
    code, out, _ = daemon.cli(capsys, "ontology", "stream-apply", str(ops))
    assert code == 1 and "line 1: applied create_entity" in out
    assert daemon.scalar("SELECT COUNT(*) FROM entities") == 1
    bad = write_ops(tmp_path / "bad.jsonl", ["{not json"])
    code, _, err = daemon.cli(capsys, "ontology", "stream-apply", str(bad))
    assert code != 0 and "bad.jsonl:1: not JSON" in err


def test_proposals_apply_reject_and_scope(
    daemon: CliDaemon, capsys: Capture, tmp_path: Path
) -> None:
    mid = daemon.remember(capsys, FACT)
    ops = write_ops(
        tmp_path / "risky.jsonl",
        [
            op("create_entity", {"name": "Acme"}, mid, "works at Acme", risk="high"),
            op("create_entity", {"name": "Lisbon"}, mid, "Lisbon", risk="high"),
        ],
    )
    code, out, _ = daemon.cli(capsys, "ontology", "stream-apply", str(ops))
    assert code == 0 and "2 proposed" in out
    code, out, _ = daemon.cli(capsys, "ontology", "proposals", "--json")
    proposals = json.loads(out)["proposals"]
    assert len(proposals) == 2
    code, out, _ = daemon.cli(capsys, "ontology", "proposals")
    assert '"works at Acme"' in out and "pending  create_entity" in out
    code, out, _ = daemon.cli(capsys, "ontology", "proposals", "--agent", "someone-else")
    assert out.strip() == "no pending proposals"
    acme = next(p["id"] for p in proposals if p["payload"]["name"] == "Acme")
    lisbon = next(p["id"] for p in proposals if p["payload"]["name"] == "Lisbon")
    code, _, err = daemon.cli(capsys, "ontology", "apply", acme, "--agent", "someone-else")
    assert code != 0 and "proposal" in err.lower()
    code, out, err = daemon.cli(capsys, "ontology", "apply", acme)
    assert code == 0 and out.startswith(f"applied {acme}"), err
    code, out, _ = daemon.cli(capsys, "ontology", "reject", lisbon, "--reason", "a place")
    assert code == 0 and out.strip() == f"rejected {lisbon}"
    code, out, _ = daemon.cli(capsys, "ontology", "proposals", "--status", "rejected")
    assert lisbon in out and "note: a place" in out
    assert daemon.scalar("SELECT COUNT(*) FROM entities WHERE name = 'Acme'") == 1
    assert daemon.scalar("SELECT COUNT(*) FROM entities WHERE name = 'Lisbon'") == 0


def test_contradictions(daemon: CliDaemon, capsys: Capture, tmp_path: Path) -> None:
    code, out, _ = daemon.cli(capsys, "ontology", "contradictions")
    assert code == 0 and out.strip() == "no contradictions"
