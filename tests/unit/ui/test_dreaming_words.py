"""Dreaming's operations and tool calls read as plain words, entities by name, never ids."""

from __future__ import annotations

from signet_desktop.dreaming.operations import PAYLOADS
from signet_desktop.dreaming.tools import TOOL_NAMES
from signet_desktop.ui.dreaming_words import OPERATIONS, TOOLS, operation_words, tool_call_words

NAMES = {"e-ledger-svc": "ledger-svc", "e-ledger": "ledger", "e-billing": "billing"}


def test_every_operation_and_tool_the_pass_can_use_has_words() -> None:
    assert set(PAYLOADS) <= set(OPERATIONS)
    assert set(TOOL_NAMES) <= set(TOOLS)


def test_operations_read_as_sentences_with_entity_names() -> None:
    merge = {"targets": ["e-ledger-svc", "e-ledger"], "survivor": "e-ledger"}
    assert operation_words("merge_entities", merge, NAMES) == "Merge ledger-svc into ledger"
    claim = {"entityId": "e-billing", "aspectId": "a1", "claimKey": "database",
             "value": "Postgres 16"}  # fmt: skip
    assert operation_words("set_claim_value", claim, NAMES) == (
        "Set billing’s database to “Postgres 16”"
    )
    assert operation_words("create_entity", {"name": "Postgres", "type": "tool"}) == (
        "Create entity “Postgres” (tool)"
    )
    link = {"fromEntityId": "e-billing", "toEntityId": "e-unknown-9f3c", "linkType": "uses"}
    assert operation_words("create_link", link, NAMES) == "Link billing to another entity (uses)"
    assert operation_words("archive_entity", {"target": "e-ledger-svc", "reason": "dup"},
                           NAMES) == "Archive ledger-svc"  # fmt: skip


def test_no_id_and_no_snake_case_in_any_operation_or_tool_sentence() -> None:
    ids = {"entityId": "e-0f9e8d7c", "aspectId": "a-1b2c3d", "target": "t-4e5f6a",
           "targets": ["e-0f9e8d7c", "e-aa11bb22"], "survivor": "e-aa11bb22",
           "fromEntityId": "e-0f9e8d7c", "toEntityId": "e-aa11bb22", "linkId": "l-9",
           "attentionId": "att-77", "sources": ["a-1b2c3d"], "sourceRef": "memory:m-5e6f",
           "operations": [{}]}  # fmt: skip
    for name in (*OPERATIONS, *TOOLS):
        words = (operation_words if name in OPERATIONS else tool_call_words)(name, ids)
        assert "_" not in words and words[:1].isupper(), (name, words)
        assert not any(value in words for value in ("0f9e8d7c", "aa11bb22", "1b2c3d", "m-5e6f")), (
            name,
            words,
        )


def test_tool_calls_read_as_what_the_pass_did() -> None:
    assert tool_call_words("search_evidence", {"query": "billing db"}) == (
        "Search the evidence for “billing db”"
    )
    assert tool_call_words("get_evidence", {"sourceRef": "transcript:8c35aa"}) == (
        "Read a transcript"
    )
    assert tool_call_words("get_entity", {"entityId": "e-billing"}, NAMES) == "Read billing"
    assert tool_call_words("apply_ontology_ops", {"operations": [{}, {}]}) == "Apply 2 operations"
    assert tool_call_words("some_new_tool", "not json") == "Some new tool"
