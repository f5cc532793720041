"""The runner with the real OpenAI-compatible provider and the real apply seam, over fake_llm:
a provider timeout mid-pass and a stream where JSON was expected fail the pass with the reason,
and what was applied before stays, attributed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from signet_desktop.config.models import DreamingConfig
from signet_desktop.dreaming.apply import PassSeam
from signet_desktop.dreaming.runner import PassLimits, PassRunner
from signet_desktop.inference.openai_compat import OpenAICompatProvider
from signet_desktop.inference.retry import RetryPolicy
from signet_desktop.storage import dreaming_operations
from signet_desktop.storage.database import Database
from tests.support.fake_llm import FakeLLM, Step, call, slow, sse_stream, tool_reply
from tests.unit.dreaming.dream_fakes import add_memory


@pytest.fixture
def provider(fake_llm: FakeLLM) -> Iterator[OpenAICompatProvider]:
    chat = OpenAICompatProvider(
        base_url=fake_llm.base_url, model="m", retry=RetryPolicy(attempts=1, base_s=0)
    )
    yield chat
    chat.close()


@pytest.mark.parametrize(
    ("fault", "words"), [(slow(3.0, "late"), "did not answer"), (sse_stream(), "")]
)
def test_a_fault_after_an_apply_fails_the_pass_and_keeps_the_apply(
    db: Database, fake_llm: FakeLLM, provider: OpenAICompatProvider, fault: Step, words: str
) -> None:
    add_memory(db, "a", "m1", "Alice moved to Lisbon in May.")
    op = {
        "operation": "create_entity",
        "payload": {"name": "Alice", "type": "person"},
        "evidence": [{"quote": "Alice moved to Lisbon", "source_ref": "memory:m1"}],
        "confidence": 0.9,
    }
    fake_llm.script(tool_reply(call("apply_ontology_ops", {"operations": [op]})), fault)
    run = PassRunner(
        db,
        config=DreamingConfig(enabled=True),
        seam=lambda agent, pass_id: PassSeam(db, agent, pass_id),
        limits=PassLimits(timeout_s=1.5),
    )
    pass_id = run.begin("a", "incremental", "manual", provider)
    done = run.run("a", pass_id, provider)
    assert done.status == "failed" and done.error and words in done.error
    assert done.mutations.applied == 1
    (record,) = dreaming_operations.for_pass(db.reader(), "a", pass_id)
    assert record.status == "applied" and record.actor == f"dreaming:{pass_id}"
    assert len(fake_llm.requests) == 2
