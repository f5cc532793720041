"""bench/dream_real_model.py: skips without a server, reports a scripted pass by reason code,
and its re-check catches an applied operation without a verbatim quote."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from signet_desktop.domain.memory import DEFAULT_AGENT_ID
from signet_desktop.dreaming import sources
from tests.support.fake_llm import FakeLLM, call, reply, tool_reply

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

import dream_real_model as bench


def sample() -> dict[str, Any]:
    turns = [
        {"speaker": "Ada", "dia_id": "D1:1", "text": "I moved to Lisbon in May."},
        {"speaker": "Bram", "dia_id": "D1:2", "text": "Lisbon suits you, Ada."},
    ]
    second = [{"speaker": "Ada", "dia_id": "D2:1", "text": "Back from Porto."}]
    return {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ada",
            "speaker_b": "Bram",
            "session_1": turns,
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_2": second,
            "session_2_date_time": "2:00 pm on 9 May, 2023",
        },
        "qa": [],
    }


def test_skips_without_a_server(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["dream_real_model.py"])
    assert bench.main() == 0
    assert "skipped: no --llm-url" in capsys.readouterr().out
    monkeypatch.setattr(sys, "argv", ["dream_real_model.py", "--llm-url", "http://127.0.0.1:9"])
    assert bench.main() == 0
    assert "skipped: no OpenAI-compatible server" in capsys.readouterr().out


def test_subset_keeps_the_first_sessions() -> None:
    kept = bench.subset(sample(), 1)["conversation"]
    assert "session_1" in kept and "session_2" not in kept and "session_2_date_time" not in kept
    assert bench.subset(sample(), 0) == sample()


def test_a_scripted_pass_is_reported_by_reason_code(
    fake_llm: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = "transcript:conv-x-session-1"
    operations = [
        {"operation": "create_entity", "payload": {"name": "Lisbon", "type": "place"},
         "confidence": 0.9, "evidence": [{"quote": "Ada: I moved to Lisbon", "source_ref": ref}]},
        {"operation": "create_entity", "payload": {"name": "Porto"}, "confidence": 0.9,
         "evidence": [{"quote": "Ada loves Porto", "source_ref": ref}]},
    ]  # fmt: skip
    fake_llm.script(
        tool_reply(call("apply_ontology_ops", {"operations": operations})),
        tool_reply(call("apply_ontology_ops", '{"operations": [')),
        reply("done"),
    )
    settings = bench.agent_settings(
        fake_llm.root_url, "m", max_input=8_000, timeout_s=60, max_turns=4
    )
    service = bench.open_workspace(tmp_path, settings)
    try:
        assert bench.capture_transcripts(service, sample()) == [
            "conv-x-session-1",
            "conv-x-session-2",
        ]
        report = bench.run_pass(service, "incremental", 60)
    finally:
        service.dreaming.close()
        service.close()
    assert report.status == "completed", report.error
    assert report.codes == {"applied -": 1, "skipped quote_not_found": 1}
    assert report.tool_status == {"apply_ontology_ops ok": 1, "apply_ontology_ops error": 1}
    assert [op["payload"]["name"] for op in report.rejected] == ["Porto"]
    assert report.seam_bugs == []
    bench.print_reports([report])
    assert "| incremental | skipped | quote_not_found | 1 |" in capsys.readouterr().out


def test_the_recheck_flags_an_applied_operation_without_a_verbatim_quote(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    settings = bench.agent_settings(fake_llm.root_url, "m", max_input=8_000, timeout_s=60,
                                    max_turns=4)  # fmt: skip
    service = bench.open_workspace(tmp_path, settings)
    try:
        bench.capture_transcripts(service, sample())
        reader = sources.SourceReader(service._db.reader(), DEFAULT_AGENT_ID)
        ref = "transcript:conv-x-session-1"
        good = {
            "operation": "create_entity",
            "evidence": [{"quote": "Lisbon suits", "source_ref": ref}],
        }
        bad = {
            "operation": "create_entity",
            "evidence": [{"quote": "Lisbon rocks", "source_ref": ref}],
        }
        elsewhere = {
            "operation": "create_link",
            "evidence": [{"quote": "x", "source_ref": "memory:nope"}],
        }
        flag = {"operation": "flag", "evidence": []}  # control operations cite nothing
        assert bench.recheck(reader, good) == []
        assert bench.recheck(reader, flag) == []
        assert "without a verbatim quote" in bench.recheck(reader, bad)[0]
        assert len(bench.recheck(reader, elsewhere)) == 2
    finally:
        service.close()
