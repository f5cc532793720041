"""dreaming/tools.py: every input scope-checked, bounded results, mistakes as error results."""

from __future__ import annotations

import json
from typing import Any

import pytest

from signet_desktop.dreaming.evidence import build_window
from signet_desktop.dreaming.runbook import build_runbook
from signet_desktop.dreaming.sources import SourceReader
from signet_desktop.dreaming.tools import SPECS, TOOL_NAMES, PassTools
from signet_desktop.inference.types import ToolCall
from signet_desktop.storage import transcripts
from signet_desktop.storage.database import Database
from tests.unit.dreaming.dream_fakes import RecordingSeam, add_memory


def toolbox(db: Database, agent: str = "a", **kwargs: Any) -> PassTools:
    reader = SourceReader(db.reader(), agent)
    window = build_window(db.reader(), reader, max_input_tokens=128_000)
    return PassTools(
        agent_id=agent,
        pass_id="p1",
        reader=lambda: SourceReader(db.reader(), agent),
        window=window,
        runbook=build_runbook("incremental", "content", per_request=100, per_pass=500),
        seam=kwargs.pop("seam", RecordingSeam(good="Lisbon")),
        attention=lambda status, limit: [{"id": "at1", "status": status}],
        **kwargs,
    )


def run(tools: PassTools, name: str, args: Any) -> Any:
    raw = args if isinstance(args, str) else json.dumps(args)
    return tools.call(ToolCall("c1", name, raw))


def test_every_tool_has_a_schema() -> None:
    assert {spec.name for spec in SPECS} == set(TOOL_NAMES)
    for spec in SPECS:
        assert spec.parameters["type"] == "object" and spec.description


def test_another_agents_scope_is_refused(db: Database) -> None:
    add_memory(db, "b", "theirs", "Bob's plans.")
    tools = toolbox(db)
    for name, args in (
        ("get_evidence", {"sourceRef": "memory:theirs"}),
        ("search_evidence", {"sourceRef": "memory:theirs"}),
        ("apply_ontology_ops", {"agentId": "b", "operations": [{"operation": "flag"}]}),
        ("attention_list", {"agentId": "b"}),
    ):
        outcome = run(tools, name, args)
        assert outcome.status == "refused", name
        assert "Bob" not in json.dumps(outcome.output)


def test_in_progress_transcripts_are_refused(db: Database) -> None:
    with db.write() as conn:
        transcripts.save_transcript(
            conn, agent_id="a", session_key="open", harness="claude-code", project=None,
            content="User: typing", turn_count=1, content_hash="h", complete=False,
        )  # fmt: skip
    outcome = run(toolbox(db), "get_evidence", {"sourceRef": "transcript:open"})
    assert outcome.status == "refused" and "in progress" in (outcome.error or "")


def test_excerpts_are_bounded(db: Database) -> None:
    for n in range(12):
        add_memory(db, "a", f"m{n}", f"Lisbon note {n} " + "z" * 5_000)
    tools = toolbox(db)
    found = run(tools, "search_evidence", {"query": "lisbon"}).output
    assert all(len(r["excerpt"]) <= 2_000 for r in found["results"])
    assert sum(len(r["excerpt"]) for r in found["results"]) <= 16_000 and found["truncated"]
    chunk = run(tools, "search_evidence", {"sourceRef": "memory:m0", "chunkSize": 500}).output
    assert len(chunk["results"][0]["excerpt"]) == 500 and chunk["next_offset"] == 500
    whole = run(tools, "get_evidence", {"sourceRef": "memory:m0", "length": 50_000})
    assert whole.status == "error" and "between" in (whole.error or "")
    assert run(tools, "search_evidence", {"chunkSize": 5_000}).status == "error"


def test_malformed_and_unknown_calls_are_error_results(db: Database) -> None:
    tools = toolbox(db)
    bad = run(tools, "get_evidence", "{not json")
    assert bad.status == "error" and bad.arguments == "{not json"
    assert run(tools, "get_evidence", "[1, 2]").status == "error"
    assert run(tools, "drop_tables", {}).status == "error"
    assert run(tools, "get_evidence", {"sourceRef": 7}).status == "error"
    assert run(tools, "get_entity", {"entityId": "nope"}).status == "error"


def test_write_caps_per_request_and_per_pass(db: Database) -> None:
    seam = RecordingSeam(good="Lisbon")
    tools = toolbox(db, seam=seam, max_ops_per_pass=150)
    ops = [{"operation": "create_entity", "payload": {"name": f"E{n} Lisbon"}} for n in range(101)]
    too_many = run(tools, "apply_ontology_ops", {"operations": ops})
    assert too_many.status == "error" and "at most 100" in (too_many.error or "")
    assert seam.applied == []  # nothing reached the seam
    assert run(tools, "apply_ontology_ops", {"operations": ops[:100]}).status == "ok"
    over = run(tools, "apply_ontology_ops", {"operations": ops[:51]})
    assert over.status == "refused" and "50 left" in (over.error or "")
    assert len(seam.applied) == 100 and tools.mutations.applied == 100


def test_attention_create_is_a_flag_through_the_seam(db: Database) -> None:
    seam = RecordingSeam(good="entity:e1")
    tools = toolbox(db, seam=seam)
    done = run(tools, "attention_create", {"subjectRef": "entity:e1", "details": {"why": "dup"}})
    assert done.status == "ok"
    (flag,) = seam.applied
    assert flag["operation"] == "flag" and flag["payload"]["subjectRef"] == "entity:e1"
    assert json.loads(flag["payload"]["details"]) == {"why": "dup"}


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ({"summary": "x" * 2_001}, "2000"),
        ({"openQuestions": ["q"] * 21}, "20"),
        ({"openQuestions": "not a list"}, "list"),
    ],
)
def test_runbook_write_limits(db: Database, args: dict[str, Any], words: str) -> None:
    tools = toolbox(db)
    outcome = run(tools, "runbook_write", args)
    assert outcome.status == "error" and words in (outcome.error or "")
    assert tools.runbook.summary == "" and tools.runbook.open_questions == []


def test_runbook_round_trip(db: Database) -> None:
    stored: list[dict[str, Any]] = []
    tools = toolbox(db, on_runbook=stored.append)
    assert run(tools, "runbook_write", {"summary": "s", "openQuestions": ["q1"]}).status == "ok"
    read = run(tools, "runbook_read", {}).output
    assert read["summary"] == "s" and read["openQuestions"] == ["q1"]
    assert stored[-1]["summary"] == "s"


def test_search_reaches_beyond_the_window_in_scope_only(db: Database) -> None:
    from signet_desktop.storage import dreaming_evidence

    tools = toolbox(db)  # the window is built before these exist
    add_memory(db, "a", "later", "Carol joined the Lisbon office.")
    add_memory(db, "b", "theirs", "Carol from agent b, Lisbon too.")
    with db.write() as conn:
        transcripts.save_transcript(
            conn, agent_id="a", session_key="open", harness="claude-code", project=None,
            content="User: Carol Lisbon draft", turn_count=1, content_hash="h", complete=False,
        )  # fmt: skip
    tools.search = lambda terms, limit, kind: dreaming_evidence.search_sources(
        db.reader(), "a", terms, limit, kind
    )
    found = run(tools, "search_evidence", {"query": "carol lisbon"}).output
    assert [r["source_ref"] for r in found["results"]] == ["memory:later"]
    assert (
        run(tools, "search_evidence", {"query": "carol", "kind": "transcript"}).output["results"]
        == []
    )
