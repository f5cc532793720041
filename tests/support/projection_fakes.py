"""Fast reducers behind the UMAP worker's interface, and a service whose map runs them.

The worker process imports the reducers by name (`support.fake_reducers:fast_reduce`, a
module that loads numpy only), so the whole machinery (temp files, the child process,
progress lines, cancel, the cache write) is real; only UMAP itself, whose first run compiles
for tens of seconds, is replaced.
"""

from __future__ import annotations

from pathlib import Path

from signet_desktop.domain.memory import Actor
from signet_desktop.projection.runner import RunnerConfig
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.service.projection import ProjectionService
from support.db import database_of

TESTS_DIR = str(Path(__file__).resolve().parents[1])
FAST = "support.fake_reducers:fast_reduce"
SLOW = "support.fake_reducers:slow_reduce"
FAILING = "support.fake_reducers:failing_reduce"
WRONG_SHAPE = "support.fake_reducers:wrong_shape_reduce"
ACTOR = Actor(changed_by="tester")

TOPICS = {
    "billing": "billing invoices postgres ledger payments refunds stripe",
    "deploy": "deploy kubernetes helm rollout canary cluster pods",
    "frontend": "frontend react css layout components storybook design",
}


def config(reducer: str = FAST) -> RunnerConfig:
    """A runner that imports the fakes in its child process."""
    return RunnerConfig(reducer=reducer, extra_path=(TESTS_DIR,))


def use_reducer(service: SignetService, reducer: str = FAST) -> ProjectionService:
    """Give the facade a projection capability whose runs use `reducer` (same db and bus)."""
    service.projection.close()
    service.projection = ProjectionService(
        database_of(service), service.events, runner=config(reducer)
    )
    return service.projection


def remember_topics(service: SignetService, per_topic: int, agent_id: str = "default") -> list[str]:
    """`per_topic` memories on each topic (types and who vary); returns their ids."""
    ids = []
    types = ("fact", "decision", "preference")
    for topic, words in TOPICS.items():
        for i in range(per_topic):
            request = RememberRequest(
                content=f"{words} note {i} about {topic} item{i}",
                agent_id=agent_id,
                type=types[i % len(types)],
                tags=(topic,),
                who=("alice", "bob")[i % 2],
            )
            ids.append(service.memories.remember(request, ACTOR).memory.id)
    return ids
