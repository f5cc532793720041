"""Events on the wire: the envelope keys are never shadowed by an event's own fields."""

from __future__ import annotations

import dataclasses

from signet_desktop.api.views import event_json
from signet_desktop.domain.events import Event, JobFailed, known_kinds


def all_event_classes() -> list[type[Event]]:
    found, stack = [], [Event]
    while stack:
        cls = stack.pop()
        # slots=True replaces each class; the replaced original may linger among subclasses.
        stack.extend(c for c in cls.__subclasses__() if "__slots__" in c.__dict__)
        found.append(cls)
    return found[1:]


def test_no_event_field_collides_with_the_envelope() -> None:
    for cls in all_event_classes():
        names = {field.name for field in dataclasses.fields(cls)}
        assert not names & {"type", "seq"}, cls


def test_every_kind_is_unique_and_dotted() -> None:
    kinds = [cls.kind for cls in all_event_classes()]
    assert len(kinds) == len(set(kinds)) == len(known_kinds())
    assert all("." in kind for kind in kinds)


def test_event_json_is_camel_case_with_type_and_seq() -> None:
    event = JobFailed(
        agent_id="a", job_id="j", job_type="embedding_backfill", worker="embedding",
        attempt=2, error="boom", retry_at=None,
    )  # fmt: skip
    body = event_json(event, seq=7)
    assert body["type"] == "job.failed" and body["seq"] == 7
    assert body["jobType"] == "embedding_backfill" and body["retryAt"] is None
    assert body["agentId"] == "a" and body["at"].endswith("Z")
