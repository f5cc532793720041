"""bench/locomo.py builds the graph from the conversation alone, never from its annotations."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

import locomo


def sample() -> dict[str, Any]:
    """A fabricated two-session conversation; its questions name people nobody mentions."""
    turns_1 = [
        {"speaker": "Ada", "dia_id": "D1:1", "text": "Hey Bram! I visited Zorblax Gardens today."},
        {
            "speaker": "Bram",
            "dia_id": "D1:2",
            "text": "Wow, was Zorblax Gardens as green as Quill said?",
        },
        {
            "speaker": "Ada",
            "dia_id": "D1:3",
            "text": "Yes. Quill was right, hey, about the hedges.",
        },
    ]
    turns_2 = [
        {
            "speaker": "Bram",
            "dia_id": "D2:1",
            "text": "Hey Ada, thanks for the photos of the hedges.",
        },
        {"speaker": "Ada", "dia_id": "D2:2", "text": "Thanks! Next time we bring Quill along."},
    ]
    return {
        "sample_id": "fab-1",
        "conversation": {
            "speaker_a": "Ada",
            "speaker_b": "Bram",
            "session_1": turns_1,
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_2": turns_2,
            "session_2_date_time": "3:10 pm on 9 May, 2023",
        },
        "qa": [
            {
                "question": "Where did Ada meet Mortimer Vex?",
                "answer": "Vexhall",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "Who is Quill?",
                "answer": "Wilhelmina Quill",
                "evidence": ["D1:3"],
                "category": 1,
            },
        ],
        "event_summary": {"Mortimer Vex": "met at Vexhall"},
    }


def test_entities_are_the_speakers_and_the_recurring_proper_nouns() -> None:
    names = locomo.conversation_entities(sample()["conversation"])
    assert names[:2] == [("Ada", "person"), ("Bram", "person")]
    others = {name for name, kind in names[2:]}
    assert {"Zorblax Gardens", "Quill"} <= others  # twice each, once mid-sentence
    assert "Hey" not in others and "Wow" not in others and "Thanks" not in others
    assert not others & {"Mortimer Vex", "Vexhall", "Wilhelmina Quill", "Mortimer"}


def test_annotations_change_nothing() -> None:
    plain = sample()
    changed = copy.deepcopy(plain)
    changed["qa"] = [{"question": "Zed?", "answer": "Yonder", "evidence": ["D2:2"], "category": 2}]
    changed["observation"] = {"Yonder": "a place"}
    assert locomo.conversation_entities(changed["conversation"]) == locomo.conversation_entities(
        plain["conversation"]
    )
    with pytest.raises(TypeError):
        locomo.conversation_entities()  # type: ignore[call-arg]  # takes the conversation only


def test_seeded_entities_are_linked_when_the_turns_are_remembered(tmp_path: Path) -> None:
    options = BuildOptions(embedder=HashEmbedder(64))
    service = build_service(WorkspacePaths.for_root(tmp_path), SignetConfig(), options)
    try:
        data = sample()
        created = locomo.seed_entities(service, locomo.conversation_entities(data["conversation"]))
        dia_of = locomo.ingest(service, data)
        assert created >= 4 and len(dia_of) == 5
        rows = service._db.reader().execute(
            "SELECT e.name, COUNT(*) AS n FROM memory_entity_mentions m"
            " JOIN entities e ON e.id = m.entity_id GROUP BY e.name"
        )
        linked = {str(r["name"]): int(r["n"]) for r in rows}
    finally:
        service.close()
    assert linked["Ada"] >= 3 and linked["Zorblax Gardens"] == 2 and linked["Quill"] == 3
