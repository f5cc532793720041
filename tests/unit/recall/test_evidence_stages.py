"""The time and preference stages: stored cues as evidence, recorded, scoped to the agent."""

from __future__ import annotations

import uuid
from types import MappingProxyType

from signet_desktop.domain.memory import NewMemory
from signet_desktop.domain.recall import ChannelEvidence, RecallFilters
from signet_desktop.recall.channels import ChannelRequest, StageClock
from signet_desktop.recall.fusion import FusedHit
from signet_desktop.recall.preference_evidence import PreferenceEvidence
from signet_desktop.recall.time_evidence import TimeEvidence, asks_when, question_window
from signet_desktop.storage.database import Database
from signet_desktop.storage.memories import insert_memory

SAID = "2023-05-08T13:56:00.000Z"


def add(db: Database, text: str, agent: str = "default", at: str = SAID) -> str:
    memory_id = str(uuid.uuid4())
    with db.write() as conn:
        insert_memory(
            conn, memory_id, NewMemory(agent, text, created_at=at), actor="t", embedding_model=None
        )
    return memory_id


def hit(memory_id: str, score: float) -> FusedHit:
    evidence = {"lexical": ChannelEvidence(score, 1, score)}
    return FusedHit(memory_id, score, "keyword", MappingProxyType(evidence))


def request(text: str, agent: str = "default", as_of: str | None = None) -> ChannelRequest:
    return ChannelRequest(text, text, agent, RecallFilters(), 50, as_of)


def test_question_windows_and_when_questions() -> None:
    [window] = question_window("what did I do last week?", "2023-05-10T09:00:00Z")
    assert window.label() == "2023-05-01..2023-05-09"
    assert asks_when("When did Caroline go to the support group?")
    assert asks_when("How many days ago did I watch the Super Bowl?")
    assert not asks_when("What does Caroline paint?")


def test_a_resolved_time_inside_the_question_window_ranks_first(db: Database) -> None:
    plain = add(db, "Joanna: I watched a movie with my family.")
    dated = add(db, "Joanna: Yesterday I watched Lord of the Rings!", at="2022-05-02T10:00:00Z")
    hits = [hit(plain, 0.6), hit(dated, 0.5)]
    out = TimeEvidence().apply(
        db.reader(), request("What movie did Joanna watch on 1 May, 2022?"), hits, StageClock()
    )
    assert [h.memory_id for h in out] == [dated, plain]
    [why] = out[0].adjustments
    assert why.stage == "time" and "'Yesterday' (2022-05-01)" in why.reason
    assert out[1].adjustments == ()


def test_a_when_question_favours_memories_that_say_when(db: Database) -> None:
    vague = add(db, "Caroline: the support group was so powerful")
    timed = add(db, "Caroline: I went to the support group yesterday")
    out = TimeEvidence().apply(
        db.reader(),
        request("When did Caroline go to the support group?"),
        [hit(vague, 0.55), hit(timed, 0.52)],
        StageClock(),
    )
    assert out[0].memory_id == timed and "2023-05-07" in out[0].adjustments[0].reason


def test_questions_without_time_change_nothing(db: Database) -> None:
    timed = add(db, "I went there yesterday")
    hits = [hit(timed, 0.5)]
    assert TimeEvidence().apply(db.reader(), request("what is there?"), hits, StageClock()) == hits


def test_the_askers_own_words_and_preferences_rank_first(db: Database) -> None:
    reply = add(db, "assistant: evenings are a good time for you to read; your routine helps")
    said = add(db, "user: my evenings are busy with the kids")
    liked = add(db, "user: I prefer winding down by 9:30 pm with a book")
    hits = [hit(reply, 0.6), hit(said, 0.45), hit(liked, 0.44)]
    out = PreferenceEvidence().apply(
        db.reader(), request("Can you suggest activities for my evening?"), hits, StageClock()
    )
    assert [h.memory_id for h in out] == [liked, said, reply]
    assert "I prefer" in out[0].adjustments[0].reason
    assert "first person" in out[1].adjustments[0].reason and out[2].adjustments == ()


def test_questions_about_others_or_what_they_said_change_nothing(db: Database) -> None:
    liked = add(db, "Caroline: I love painting sunsets")
    hits = [hit(liked, 0.5)]
    for text in ("What does Caroline like to paint?", "What did you recommend to me?"):
        assert PreferenceEvidence().apply(db.reader(), request(text), hits, StageClock()) == hits


def test_another_agents_memory_lends_no_cues(db: Database) -> None:
    theirs = add(db, "I prefer tea, yesterday and always", agent="other")
    hits = [hit(theirs, 0.5)]
    for stage in (TimeEvidence(), PreferenceEvidence()):
        out = stage.apply(db.reader(), request("When? any tips for me?"), hits, StageClock())
        assert out[0].adjustments == ()
