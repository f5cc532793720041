"""`signet dream` against the real app on a loopback socket, the model a scripted server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.daemon import Capture, CliDaemon, run_daemon

from signet_desktop.embedding.hashing import HashEmbedder
from tests.support.fake_llm import FakeLLM, call, reply, tool_reply


def inference(base_url: str) -> dict[str, object]:
    return {
        "inference": {
            "targets": {
                "fake": {"executor": "openai-compatible", "endpoint": base_url, "models": {"m": {}}}
            },
            "workloads": {"memoryExtraction": {"target": "fake", "model": "m"}},
        }
    }


@pytest.fixture
def daemon(tmp_path: Path, fake_llm: FakeLLM) -> Iterator[CliDaemon]:
    with run_daemon(tmp_path / "ws", HashEmbedder(), config=inference(fake_llm.base_url)) as d:
        yield d


def test_trigger_show_passes_and_status(
    daemon: CliDaemon, capsys: Capture, fake_llm: FakeLLM
) -> None:
    memory_id = daemon.remember(capsys, "Alice moved to Lisbon in May.")
    op = {
        "operation": "create_entity",
        "payload": {"name": "Alice", "type": "person"},
        "evidence": [{"quote": "Alice moved to Lisbon", "source_ref": f"memory:{memory_id}"}],
        "confidence": 0.9,
    }
    fake_llm.script(tool_reply(call("apply_ontology_ops", {"operations": [op]})), reply("done"))
    code, out, err = daemon.cli(capsys, "dream", "trigger", "--json")
    assert code == 0, err
    pass_id = json.loads(out)["passId"]
    assert daemon.service.dreaming.wait(pass_id, 20)
    code, out, err = daemon.cli(capsys, "dream", "show", pass_id)
    assert code == 0, err
    assert "completed" in out and "apply_ontology_ops ok" in out and "create_entity applied" in out
    code, out, _ = daemon.cli(capsys, "dream", "passes")
    assert code == 0 and pass_id in out and "1 applied" in out
    code, out, _ = daemon.cli(capsys, "dream", "status")
    assert code == 0 and "Idle (disabled)" in out and pass_id in out
    code, out, _ = daemon.cli(capsys, "dream", "passes", "--agent", "someone-else")
    assert code == 0 and out.strip() == "No passes."


def test_show_of_another_agents_pass_is_an_error(
    daemon: CliDaemon, capsys: Capture, fake_llm: FakeLLM
) -> None:
    code, out, _ = daemon.cli(capsys, "dream", "trigger", "--json")
    pass_id = json.loads(out)["passId"]
    assert daemon.service.dreaming.wait(pass_id, 20)
    code, out, err = daemon.cli(capsys, "dream", "show", pass_id, "--agent", "other")
    assert code != 0 and out == "" and "no Dreaming pass" in err
    assert fake_llm.requests == []  # nothing to consolidate: the provider was not called


def test_trigger_without_inference_says_which_key(tmp_path: Path, capsys: Capture) -> None:
    with run_daemon(tmp_path / "ws", HashEmbedder()) as daemon:
        code, out, err = daemon.cli(capsys, "dream", "trigger")
    assert code != 0 and out == ""
    assert "inference.workloads.memoryExtraction" in err


def test_revert_dry_run_then_revert(daemon: CliDaemon, capsys: Capture, fake_llm: FakeLLM) -> None:
    memory_id = daemon.remember(capsys, "Alice moved to Lisbon in May.")
    op = {
        "operation": "create_entity",
        "payload": {"name": "Alice", "type": "person"},
        "evidence": [{"quote": "Alice moved to Lisbon", "source_ref": f"memory:{memory_id}"}],
        "confidence": 0.9,
    }
    fake_llm.script(tool_reply(call("apply_ontology_ops", {"operations": [op]})), reply("done"))
    pass_id = json.loads(daemon.cli(capsys, "dream", "trigger", "--json")[1])["passId"]
    assert daemon.service.dreaming.wait(pass_id, 20)
    code, out, err = daemon.cli(capsys, "dream", "revert", pass_id, "--dry-run")
    assert code == 0, err
    assert out.startswith(f"Would revert pass {pass_id}: ") and "entities" in out
    code, out, err = daemon.cli(capsys, "dream", "revert", pass_id)
    assert code == 0, err
    assert out.startswith(f"Reverted pass {pass_id}: ")
    code, out, _ = daemon.cli(capsys, "dream", "revert", pass_id)
    assert code == 0 and "already reverted" in out
