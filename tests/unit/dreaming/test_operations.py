"""dreaming/operations.py: the versioned schema; bad input is a rejection, never an exception."""

from __future__ import annotations

import math
from typing import Any

import pytest

from signet_desktop.dreaming.operations import (
    CONTENT_OPS,
    HYGIENE_OPS,
    OPERATIONS,
    ClaimValue,
    Operation,
    Rejection,
    attention_id_of,
    parse_operation,
)


def op(name: str, payload: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"operation": name, "payload": payload, "confidence": 0.8, **extra}


def test_every_named_operation_is_known() -> None:
    assert set(OPERATIONS) == {
        "create_entity", "create_aspect", "rename_aspect", "add_claim_value", "set_claim_value",
        "supersede_claim_value", "create_link", "update_link", "rename_entity",
        "archive_entity", "archive_aspect", "archive_claim_value", "archive_link",
        "merge_entities", "merge_aspects", "flag", "decline_attention",
    }  # fmt: skip
    assert "merge_entities" in HYGIENE_OPS and "create_entity" in CONTENT_OPS


def test_a_claim_value_parses_with_camel_case_keys() -> None:
    parsed = parse_operation(
        op(
            "set_claim_value",
            {"entityId": "e1", "aspectId": "a1", "claimKey": "city", "value": " Lisbon ",
             "timePrecision": "month"},
            evidence=[{"quote": "Lisbon", "source_ref": "memory:m1"}],
            reason="stated",
        ),
        3,
    )  # fmt: skip
    assert isinstance(parsed, Operation)
    assert parsed.index == 3 and parsed.kind == "content"
    assert isinstance(parsed.payload, ClaimValue) and parsed.payload.value == "Lisbon"
    assert parsed.payload_json()["timePrecision"] == "month"
    assert parsed.evidence_json() == [{"quote": "Lisbon", "source_ref": "memory:m1"}]


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("not an object", "operation_malformed"),
        (op("drop_table", {}), "unknown_operation"),
        ({"payload": {}, "confidence": 1}, "unknown_operation"),
        (op("create_entity", {"name": "X"}) | {"confidence": 1.5}, "confidence_invalid"),
        (op("create_entity", {"name": "X"}) | {"confidence": math.nan}, "confidence_invalid"),
        (op("create_entity", {"name": "X"}) | {"confidence": "high"}, "confidence_invalid"),
        (op("create_entity", {"name": "X"}) | {"confidence": True}, "confidence_invalid"),
        ({"operation": "create_entity", "payload": {"name": "X"}}, "confidence_invalid"),
        (op("create_entity", {"name": ""}), "payload_malformed"),
        (op("create_entity", {"name": "   "}), "payload_malformed"),
        (op("create_entity", {"nmae": "X"}), "payload_malformed"),
        (op("merge_entities", {"targets": ["a"], "survivor": "a"}), "payload_malformed"),
        (op("flag", {"details": "x"}), "payload_malformed"),
        (op("create_entity", "not a dict"), "operation_malformed"),
        (op("create_entity", {"name": "X"}, evidence=[{"quote": "q"}]), "operation_malformed"),
        (op("create_entity", {"name": "X"}, surprise=1), "operation_malformed"),
        (op("create_entity", {"name": "X"}, risk="extreme"), "operation_malformed"),
        (op("set_claim_value", {"entityId": "e", "aspectId": "a", "claimKey": "k", "value": "v",
                                "timePrecision": "hour"}), "payload_malformed"),
    ],
)  # fmt: skip
def test_bad_input_is_a_rejection(raw: object, code: str) -> None:
    parsed = parse_operation(raw, 7)
    assert isinstance(parsed, Rejection), parsed
    assert parsed.code == code and parsed.index == 7 and parsed.reason


def test_unknown_operation_names_the_known_ones() -> None:
    parsed = parse_operation(op("explode", {}))
    assert isinstance(parsed, Rejection) and "create_entity" in parsed.reason


def test_attention_provenance() -> None:
    assert attention_id_of("attention:abc") == "abc"
    assert attention_id_of(" attention: abc ") == "abc"
    for bad in (None, "", "attention:", "memory:abc", "abc"):
        assert attention_id_of(bad) is None
    parsed = parse_operation(
        op("archive_entity", {"target": "e1", "reason": "dupe"}, provenance="attention:x")
    )
    assert isinstance(parsed, Operation) and parsed.attention_id() == "x"
    assert parsed.kind == "hygiene"
