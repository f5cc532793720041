"""A hand-written sanity set through the real facade and the real native embedder.

Thirty developer facts (infrastructure, owners, decisions); each question's answer must rank
first, and queries about nothing in the workspace must return nothing at the default
`min_score`: calibrated scores mean the same thing for every query (docs/RECALL.md).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallQuery
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories import RememberRequest

# Loading the model, embedding 30 facts and 36 recalls: ~8 s on the shared 2-core machine.
pytestmark = pytest.mark.slow

FACTS = (
    "billing runs on Postgres 16",
    "Use idempotency keys on every POST to the billing API",
    "Redis 7 caches user sessions for the web app",
    "The search service is written in Rust",
    "Maria owns the payments team and approves refunds over 500 EUR",
    "Deploys go out through GitHub Actions to Kubernetes on GKE",
    "We chose Kafka over RabbitMQ for the event bus because of replay",
    "The staging database is reset every Sunday night",
    "Ali is the on-call lead for the mobile app this quarter",
    "Logs are shipped to Loki and dashboards live in Grafana",
    "The iOS app is built with SwiftUI, the Android app with Jetpack Compose",
    "Feature flags are managed in LaunchDarkly",
    "API rate limit is 100 requests per minute per token",
    "Secrets are stored in HashiCorp Vault, never in environment files",
    "The monorepo uses pnpm workspaces and Turborepo",
    "Backups of the production database run hourly to S3 with 30 days retention",
    "Decision: we dropped GraphQL in favour of REST in March",
    "The frontend is a Next.js app styled with Tailwind",
    "Sara owns the data warehouse on BigQuery",
    "Error tracking uses Sentry with a 10 percent sample rate",
    "Python services are formatted with ruff and type-checked with mypy",
    "The CDN in front of the website is Cloudflare",
    "Emails are sent through Postmark; SMS through Twilio",
    "Tom maintains the Terraform modules for AWS networking",
    "Integration tests run against a real Postgres in Docker, never mocks",
    "The auth service issues JWTs that expire after 15 minutes",
    "Release trains leave every second Tuesday",
    "Decision: all new services are written in Go unless there is ML work",
    "The machine learning models are trained on two A100 GPUs in our own rack",
    "Customer support uses Zendesk and escalates to the #support-eng channel",
)

# (question, the fact that must rank first)
QUESTIONS: tuple[object, ...] = (
    ("which database does billing use?", "billing runs on Postgres 16"),
    ("what caches sessions?", "Redis 7 caches user sessions for the web app"),
    ("who approves refunds?", "Maria owns the payments team and approves refunds over 500 EUR"),
    ("how do we deploy?", "Deploys go out through GitHub Actions to Kubernetes on GKE"),
    ("why Kafka?", "We chose Kafka over RabbitMQ for the event bus because of replay"),
    ("who is on call for mobile?", "Ali is the on-call lead for the mobile app this quarter"),
    ("where do logs go?", "Logs are shipped to Loki and dashboards live in Grafana"),
    ("what language is the search service in?", "The search service is written in Rust"),
    ("where are secrets kept?",
     "Secrets are stored in HashiCorp Vault, never in environment files"),
    ("how often are production backups taken?",
     "Backups of the production database run hourly to S3 with 30 days retention"),
    ("did we keep GraphQL?", "Decision: we dropped GraphQL in favour of REST in March"),
    ("who owns the data warehouse?", "Sara owns the data warehouse on BigQuery"),
    ("what is the API rate limit?", "API rate limit is 100 requests per minute per token"),
    ("which tool do we use for feature flags?", "Feature flags are managed in LaunchDarkly"),
    ("who maintains the Terraform code?",
     "Tom maintains the Terraform modules for AWS networking"),
    ("how long are auth tokens valid?",
     "The auth service issues JWTs that expire after 15 minutes"),
    ("what language should a new service use?",
     "Decision: all new services are written in Go unless there is ML work"),
    pytest.param(
        "how do we send text messages to customers?",
        "Emails are sent through Postmark; SMS through Twilio",
        # Only the vectors know "text messages" = SMS, and "customers" matches the Zendesk
        # fact's "Customer": at alpha 0.5 lexical wins (it passed at 0.7, which LoCoMo refused).
        marks=pytest.mark.xfail(strict=True, reason="a purely semantic answer loses at alpha 0.5"),
    ),
    ("when is the next release?", "Release trains leave every second Tuesday"),
    ("what do integration tests run against?",
     "Integration tests run against a real Postgres in Docker, never mocks"),
)  # fmt: skip

NONSENSE = (
    "purple elephant quantum banana",
    "asdf qwer zxcv",
    "recipe for sourdough bread",
    "what is the capital of Mongolia?",
    "lorem ipsum dolor sit amet",
    "tell me a joke about penguins",
    "who won the 1998 world cup?",
)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SignetService]:
    root: Path = tmp_path_factory.mktemp("sanity")
    built = build_service(WorkspacePaths.for_root(root), SignetConfig(), BuildOptions())
    for fact in FACTS:
        outcome = built.memories.remember(RememberRequest(content=fact), Actor())
        assert outcome.memory.id
    _wait_for_vectors(built, len(FACTS))
    yield built
    built.close()


def _wait_for_vectors(service: SignetService, count: int, timeout_s: float = 30.0) -> None:
    """Vectors may follow the acknowledged remember: wait until every fact has one."""
    deadline = time.monotonic() + timeout_s
    query = RecallQuery(query="facts", limit=100, channels=("semantic",), min_score=0.0)
    while len(service.recall.search(query).hits) < count:
        assert time.monotonic() < deadline, "the facts were not embedded in time"
        time.sleep(0.05)


def test_the_facts_are_embedded_by_the_native_model(service: SignetService) -> None:
    result = service.recall.search(RecallQuery(query="billing database"))
    assert result.method == "hybrid" and result.vector_completeness == "complete"


@pytest.mark.parametrize(("question", "answer"), QUESTIONS)
def test_the_answer_ranks_first(service: SignetService, question: str, answer: str) -> None:
    result = service.recall.search(RecallQuery(query=question, limit=5))
    assert result.hits, f"nothing for {question!r}"
    assert result.hits[0].memory.content == answer


@pytest.mark.parametrize("query", NONSENSE)
def test_a_query_about_nothing_here_returns_nothing(service: SignetService, query: str) -> None:
    result = service.recall.search(RecallQuery(query=query))
    assert [(h.memory.content, round(h.score, 3)) for h in result.hits] == []


def test_channel_evidence_is_the_calibrated_score_with_the_raw_value_beside_it(
    service: SignetService,
) -> None:
    [hit] = service.recall.search(RecallQuery(query="billing Postgres", limit=1)).hits
    lexical, semantic = hit.channels["lexical"], hit.channels["semantic"]
    assert 0 < lexical.score <= 1 and lexical.raw < 0  # raw: FTS5's bm25 (lower is better)
    assert 0 < semantic.score < semantic.raw <= 1  # raw: the cosine, above the noise floor
