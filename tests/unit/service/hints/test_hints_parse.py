"""The hints answer: strict JSON, validated item by item, never more than asked for."""

from __future__ import annotations

import json

import pytest

from signet_desktop.service.hints.service import HintsRejected, parse_hints

MEMORY = "The staging database runs on port 5433."


def test_a_list_or_an_object_with_hints_is_accepted() -> None:
    assert parse_hints('["which port does staging use?"]', MEMORY, 5) == [
        "which port does staging use?"
    ]
    assert parse_hints('{"hints": ["staging db port", "staging  postgres"]}', MEMORY, 5) == [
        "staging db port",
        "staging postgres",
    ]
    assert parse_hints('```json\n{"hints": ["staging db port"]}\n```', MEMORY, 5) == [
        "staging db port"
    ]


@pytest.mark.parametrize(
    "answer",
    [
        "not json at all",
        '{"hints": "one string"}',
        '{"questions": ["a question"]}',
        '{"hints": ["ok question"], "extra": 1}',
        '["fine question", 42]',
        "42",
        "",
    ],
)
def test_anything_else_is_rejected(answer: str) -> None:
    with pytest.raises(HintsRejected):
        parse_hints(answer, MEMORY, 5)


def test_items_are_bounded_deduped_and_never_the_memory_itself() -> None:
    answer = [
        "ab",  # too short
        "x" * 201,  # too long
        "Which port does staging use?",
        "which port does STAGING use?",  # duplicate
        MEMORY.upper(),  # the memory's own text
        "staging port",
        "third",
        "fourth",
    ]
    assert parse_hints(json.dumps(answer), MEMORY, 3) == [
        "Which port does staging use?",
        "staging port",
        "third",
    ]
    assert parse_hints("[]", MEMORY, 5) == []
