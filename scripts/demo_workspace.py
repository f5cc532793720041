"""Build a realistic demo workspace through the facade (for screenshots, demos and manual tests).

    uv run python scripts/demo_workspace.py /tmp/signet-demo            # native vectors
    uv run python scripts/demo_workspace.py /tmp/signet-demo --embedder hash --count 300

A few hundred memories a team of developers' agents would have stored over two months:
infrastructure facts, who owns what, decisions, incidents, conventions and preferences, each
with who / project / tags / importance / type / source, then a history on top (tag and
importance edits by the user, pins, a forget and a forget-then-recover) and the transcripts of
the busiest harness sessions the memories came from. Vectors come from
the real native embedder (all-MiniLM-L6-v2 on onnxruntime, a few seconds for 300 memories)
unless `--embedder hash|none` is asked for.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from signet_desktop.config import SignetConfig, WorkspacePaths
from signet_desktop.domain.memory import Actor, MemoryPatch
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest

AGENT = "default"
SEED = 20261201
NOW = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
DAYS = 60
SESSION_DAYS = 4
USER = Actor(changed_by="you", actor_type="user")
HARNESSES = (
    Actor(changed_by="claude-code", actor_type="hook"),
    Actor(changed_by="codex", actor_type="hook"),
    Actor(changed_by="opencode", actor_type="hook"),
)

PEOPLE = ("alice", "bob", "carol", "dmitri", "erin", "farah", "gus")
SERVICES = {
    # service: (project, language, datastore, owner)
    "billing": ("billing", "Go", "Postgres 16", "alice"),
    "ledger": ("billing", "Rust", "Postgres 16", "dmitri"),
    "search": ("search", "Python", "OpenSearch 2.13", "bob"),
    "auth": ("platform", "Go", "Redis 7 and Postgres 15", "carol"),
    "notifications": ("platform", "TypeScript", "SQS and DynamoDB", "erin"),
    "web": ("frontend", "TypeScript (SvelteKit)", "the BFF's Redis cache", "farah"),
    "ingest": ("data", "Python", "Kafka and S3", "gus"),
    "analytics": ("data", "SQL (dbt)", "ClickHouse", "gus"),
}


@dataclass(frozen=True, slots=True)
class Draft:
    content: str
    type: str
    tags: tuple[str, ...]
    who: str | None
    project: str | None
    importance: float


def infrastructure() -> Iterator[Draft]:
    for name, (project, language, store, owner) in SERVICES.items():
        yield Draft(f"{name} runs on {store}", "fact", ("infra", "db"), owner, project, 0.8)
        yield Draft(f"{name} is written in {language}", "fact", ("infra",), owner, project, 0.5)
        yield Draft(
            f"{name} deploys through Argo CD from the main branch; staging syncs on every merge",
            "fact",
            ("infra", "deploy"),
            owner,
            project,
            0.6,
        )
        yield Draft(
            f"{name}'s dashboards live in Grafana under the '{project}' folder",
            "fact",
            ("observability",),
            None,
            project,
            0.3,
        )
        yield Draft(
            f"{name} runs 3 replicas in eu-west-1 and 2 in us-east-1 behind the shared ALB",
            "fact",
            ("infra", "k8s"),
            owner,
            project,
            0.5,
        )


def owners() -> Iterator[Draft]:
    for name, (project, _, _, owner) in SERVICES.items():
        yield Draft(
            f"{owner} owns {name}; ask them before changing its schema",
            "fact",
            ("owners",),
            owner,
            project,
            0.7,
        )
        backup = PEOPLE[(PEOPLE.index(owner) + 2) % len(PEOPLE)]
        yield Draft(
            f"{backup} is the backup on-call for {name} this quarter",
            "fact",
            ("owners", "oncall"),
            backup,
            project,
            0.4,
        )


DECISIONS = (
    ("Use idempotency keys on every payment write; retries must never double-charge", "billing"),
    ("Money is stored as integer minor units, never floats", "billing"),
    ("The ledger is append-only: corrections are new entries, not updates", "billing"),
    ("All new services log JSON to stdout; no log files inside containers", "platform"),
    ("Feature flags go through Unleash, not environment variables", "platform"),
    ("Session tokens expire after 12 hours; refresh tokens after 30 days", "platform"),
    ("Search reindexes nightly at 02:00 UTC; partial reindex on product updates", "search"),
    ("We rank search with BM25 plus a vector rerank of the top 100", "search"),
    ("The frontend talks only to the BFF, never to services directly", "frontend"),
    ("Dark mode follows the system setting; no in-app toggle for now", "frontend"),
    ("dbt models are reviewed by the data team before they reach production", "data"),
    ("Kafka topics keep 7 days of retention; S3 keeps the raw events forever", "data"),
    ("Migrations must be backwards compatible for one release (expand, then contract)", None),
    ("Every PR needs one approval and green CI; no force pushes to main", None),
    ("Postgres major upgrades happen in the first week of a quarter", None),
    ("We pin Python dependencies with uv.lock and update them every two weeks", None),
)

INCIDENTS = (
    ("2026-10-14: billing webhooks timed out for 40 minutes; cause: a missing index on "
     "invoices.customer_id; fixed by adding it concurrently", "billing", ("incident", "db")),
    ("2026-10-22: search returned stale prices after a failed nightly reindex; the alert "
     "now fires when the reindex job exits non-zero", "search", ("incident", "search")),
    ("2026-11-03: auth refused logins for 6 minutes after a Redis failover; clients now "
     "retry token validation once", "platform", ("incident", "auth")),
    ("2026-11-09: notifications sent duplicate emails; SQS visibility timeout was shorter "
     "than the handler's p99", "platform", ("incident",)),
    ("2026-11-18: ledger replication lag reached 9 minutes during the month-end batch; the "
     "batch now runs on the replica", "billing", ("incident", "db")),
    ("2026-11-25: the web app's CDN cached a logged-in page; Cache-Control: private is now "
     "set by the BFF", "frontend", ("incident", "security")),
)  # fmt: skip

CONVENTIONS = (
    ("Run `make check` before pushing; it runs lint, types and the fast tests", None),
    ("Branch names are <ticket>-<short-description>", None),
    ("alice prefers small PRs with a screenshot for UI changes", "frontend"),
    ("bob wants benchmarks attached to any change in the ranking code", "search"),
    ("The staging database is refreshed from an anonymised snapshot every Monday", None),
    ("Secrets live in Vault under kv/<team>/<service>; never in .env files", "platform"),
    ("Use structured errors with a stable `code` field in every HTTP API", "platform"),
    ("Timestamps are stored in UTC and rendered in the user's zone", None),
)

QUESTIONS = (
    "how to rotate the billing database credentials",
    "where the search synonyms file lives",
    "who approves changes to the auth token lifetime",
    "why the ledger uses Rust",
    "how to replay a Kafka topic into staging",
    "what the SLO for checkout latency is",
    "how to run the analytics models locally",
    "which queue the notification retries use",
)


def answers() -> Iterator[Draft]:
    replies = (
        "rotate the billing database credentials with `vault write db/rotate-root/billing`, "
        "then restart the pods",
        "the search synonyms file lives in search/config/synonyms.txt and ships with the image",
        "carol approves changes to the auth token lifetime",
        "the ledger uses Rust for its exact decimal handling and predictable latency",
        "replay a Kafka topic into staging with `kcat -C ... | kcat -P` from the bastion",
        "the checkout latency SLO is p95 under 300 ms, measured at the ALB",
        "run the analytics models locally with `dbt build --target dev` against the sample data",
        "notification retries use the notifications-retry SQS queue with a DLQ after 5 tries",
    )
    for question, reply in zip(QUESTIONS, replies, strict=True):
        yield Draft(reply, "fact", ("howto",), None, None, 0.5)
        yield Draft(f"asked {question}", "episodic", ("question",), None, None, 0.2)


def decisions() -> Iterator[Draft]:
    for text, project in DECISIONS:
        yield Draft(text, "decision", ("decision",), None, project, 0.8)
    for text, project, tags in INCIDENTS:
        yield Draft(text, "fact", tags, None, project, 0.7)
    for text, project in CONVENTIONS:
        yield Draft(text, "preference", ("convention",), None, project, 0.5)


def sessions(rng: random.Random, count: int) -> Iterator[Draft]:
    """Episodic notes of agent sessions: what was worked on, with whom, in which service."""
    verbs = (
        "fixed a flaky test in",
        "profiled the slow endpoint of",
        "reviewed the schema change for",
        "bumped dependencies of",
        "paired on the retry logic of",
        "wrote a runbook for",
        "added tracing spans to",
        "cleaned up dead feature flags in",
    )
    for _ in range(count):
        name = rng.choice(tuple(SERVICES))
        project, _, _, owner = SERVICES[name]
        who = rng.choice((owner, *PEOPLE))
        verb = rng.choice(verbs)
        text = f"{who} {verb} {name} (PR #{rng.randrange(1200, 4800)})"
        yield Draft(text, "episodic", ("session", name), who, project, 0.2)


def drafts(count: int, rng: random.Random) -> list[Draft]:
    fixed = [*infrastructure(), *owners(), *decisions(), *answers()]
    extra = max(0, count - len(fixed))
    return fixed + list(sessions(rng, extra))


def session_day(stamp: datetime) -> datetime:
    """Sessions run a few days each, so a session holds a handful of memories."""
    return stamp - timedelta(days=stamp.toordinal() % SESSION_DAYS)


def requests(items: list[Draft], rng: random.Random) -> list[RememberRequest]:
    """Spread over the last DAYS days, oldest first, from a few harness sessions."""
    stamps = sorted(NOW - timedelta(minutes=rng.randrange(DAYS * 24 * 60)) for _ in items)
    order = list(range(len(items)))
    rng.shuffle(order)
    out = []
    for stamp, index in zip(stamps, order, strict=True):
        item = items[index]
        harness = rng.choice(("claude-code", "claude-code", "codex", "opencode"))
        out.append(
            RememberRequest(
                content=item.content,
                agent_id=AGENT,
                type=item.type,
                tags=item.tags,
                importance=item.importance,
                who=item.who,
                project=item.project,
                source_type=harness,
                session_id=f"{harness}-{session_day(stamp):%Y%m%d}",
                created_at=stamp.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            )
        )
    return out


def history(service: SignetService, ids: dict[str, str], rng: random.Random) -> dict[str, int]:
    """Edits, pins, a forget and a forget-then-recover, as a person would make them."""
    done = {"edited": 0, "pinned": 0, "forgotten": 0, "recovered": 0}
    memories = service.memories

    def patch(text: str, change: MemoryPatch, reason: str) -> None:
        memories.modify(AGENT, ids[text], change, reason=reason, if_version=None, actor=USER)

    pins = (
        "billing runs on Postgres 16",
        "Money is stored as integer minor units, never floats",
        "Use idempotency keys on every payment write; retries must never double-charge",
        "alice owns billing; ask them before changing its schema",
    )
    for text in pins:
        patch(text, MemoryPatch(pinned=True), "keep this in every session")
        done["pinned"] += 1
    patch("billing runs on Postgres 16", MemoryPatch(tags=("infra", "db", "postgres")), "tagging")
    patch("ledger runs on Postgres 16", MemoryPatch(importance=0.9), "ledger is critical")
    patch("search runs on OpenSearch 2.13", MemoryPatch(tags=("infra", "search")), "tagging")
    done["edited"] += 3
    facts = [t for t in ids if t.endswith("deploys through Argo CD from the main branch; "
                                           "staging syncs on every merge")]  # fmt: skip
    for text in rng.sample(facts, 3):
        patch(text, MemoryPatch(importance=0.7, tags=("infra", "deploy", "argo")), "retagged")
        done["edited"] += 1
    for text in [t for t in ids if "incident" in t or t.startswith("2026-")][:4]:
        patch(text, MemoryPatch(importance=0.9), "incidents matter in reviews")
        done["edited"] += 1
    forget = "Dark mode follows the system setting; no in-app toggle for now"
    memories.forget(AGENT, ids[forget], reason="we ship a toggle in 2.4", actor=USER)
    done["forgotten"] += 1
    mistaken = "Kafka topics keep 7 days of retention; S3 keeps the raw events forever"
    memories.forget(AGENT, ids[mistaken], reason="cleaning up old data notes", actor=USER)
    memories.recover(AGENT, ids[mistaken], reason="still true", if_version=None, actor=USER)
    done["forgotten"] += 1
    done["recovered"] += 1
    return done


@dataclass(frozen=True, slots=True)
class Demo:
    """The open service over the demo workspace (close it) and the ids by content."""

    service: SignetService
    ids: dict[str, str]
    root: Path
    sessions: tuple[str, ...] = ()  # retained transcripts, busiest first per harness


SESSIONS_PER_HARNESS = 3
REPLIES = (
    "Got it. I'll keep that in mind for {project}.",
    "Noted. That matches what I see in the repository.",
    "Thanks, I've saved that as a memory so the next session knows it too.",
    "Understood. I'll check this before touching {project} again.",
)


def transcripts(service: SignetService, batch: list[RememberRequest]) -> tuple[str, ...]:
    """The harness sessions the memories came from, as retained transcripts (if supported)."""
    capture = getattr(getattr(service, "transcripts", None), "capture", None)
    if capture is None:  # a build without the transcripts capability
        return ()
    from signet_desktop.domain.sessions import Turn

    by_session: dict[str, list[RememberRequest]] = {}
    for request in batch:
        if request.session_id:
            by_session.setdefault(request.session_id, []).append(request)
    ranked = sorted(by_session.items(), key=lambda item: -len(item[1]))
    busiest = [
        item
        for harness in ("claude-code", "codex", "opencode")
        for item in [i for i in ranked if i[0].startswith(harness)][:SESSIONS_PER_HARNESS]
    ]
    for session, requests_of in busiest:
        turns = []
        for n, request in enumerate(requests_of):
            reply = REPLIES[n % len(REPLIES)].format(project=request.project or "the project")
            stamp = request.created_at
            turns.append(Turn(f"{session}-u{n}", "user", request.content, stamp))
            turns.append(Turn(f"{session}-a{n}", "assistant", reply, stamp))
        harness = requests_of[0].source_type or "claude-code"
        project = next((r.project for r in requests_of if r.project), None)
        capture(AGENT, session, harness, turns, project=project, complete=True)
    return tuple(session for session, _ in busiest)


def build(root: Path, *, count: int = 300, embedder: str = "native") -> Demo:
    """Create the workspace at `root` and fill it through the facade."""
    paths = WorkspacePaths.for_root(root)
    if paths.db_path.exists():
        raise SystemExit(f"{paths.db_path} exists: pick an empty directory")
    paths.ensure()
    options = {
        "native": BuildOptions(),
        "hash": BuildOptions(embedder=HashEmbedder(384)),
        "none": BuildOptions(no_embedder=True),
    }[embedder]
    service = build_service(paths, SignetConfig(), options)
    rng = random.Random(SEED)
    batch = requests(drafts(count, rng), rng)
    ids: dict[str, str] = {}
    for harness in HARNESSES:
        mine = [r for r in batch if r.source_type == harness.changed_by]
        for request, outcome in zip(
            mine, service.memories.remember_many(mine, harness), strict=True
        ):
            ids[request.content] = outcome.memory.id
    history(service, ids, rng)
    sessions = transcripts(service, batch)
    if getattr(service, "knowledge", None) is not None and hasattr(service, "dreaming"):
        from demo_graph import add_graph_and_pass  # entities, one Dreaming pass, a proposal

        ids.update(add_graph_and_pass(service).memory_ids)
    return Demo(service, ids, root, sessions)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workspace", type=Path, help="an empty directory to create it in")
    parser.add_argument("--count", type=int, default=300, help="about how many memories")
    parser.add_argument("--embedder", choices=("native", "hash", "none"), default="native")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    service = build(args.workspace, count=args.count, embedder=args.embedder).service
    try:
        coverage = service.embeddings.status().coverage
        vectors = f", {coverage.embedded} vectors" if coverage else ", no vectors"
        print(
            f"{args.workspace}: {service.memories.count(AGENT)} memories{vectors} "
            f"({args.embedder}) in {time.perf_counter() - started:.1f}s"
        )
    finally:
        service.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
