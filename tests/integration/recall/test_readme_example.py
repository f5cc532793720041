"""The README's own example over the real demo workspace (`scripts/demo_workspace.py`, native
MiniLM): "which database does billing use?" ranks "billing runs on Postgres 16" first, and
keeps it first once a document about billing's database and imported sessions about it are
added (issue 28, item 5). What ranks it: the `claims` stage (docs/RECALL.md, "Claims as
evidence"); without it the answer is fifth, behind memories sharing the word "database".
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.documents import drain, make_worker
from support.history_files import claude_session_lines, claude_slug, write_jsonl

from signet_desktop.domain.documents import DocumentRequest
from signet_desktop.domain.recall import RecallQuery
from signet_desktop.service.facade import SignetService

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
import demo_workspace

# Building ~300 memories with native vectors and recalling: ~15 s on 2 cores.
pytestmark = pytest.mark.slow

QUESTION = "which database does billing use?"
ANSWER = "billing runs on Postgres 16"
RUNBOOK = """# Billing database runbook

The billing database holds invoices, payments and customer balances. Its credentials are
rotated monthly through Vault; the billing database user is read-write, the reporting user is
read-only. Backups of the billing database run nightly and are kept for 35 days. To restore
the billing database, page the billing on-call and follow the restore checklist.
"""
# An imported Claude Code session about billing's database (what a user asks and is told).
SESSION = [
    ("user", "which database does billing use? the migration notes disagree"),
    ("assistant", "The billing database is the one behind the invoices service; let me check."),
    ("user", "what are the billing database credentials rotated with?"),
    ("assistant", "Vault rotates the billing database credentials every month."),
]


@pytest.fixture(scope="module")
def claude_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Claude Code's config dir (CLAUDE_CONFIG_DIR while the demo is built: a readable root)."""
    return tmp_path_factory.mktemp("claude")


@pytest.fixture(scope="module")
def demo(
    tmp_path_factory: pytest.TempPathFactory, claude_dir: Path
) -> Iterator[demo_workspace.Demo]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLAUDE_CONFIG_DIR", str(claude_dir))
        built = demo_workspace.build(tmp_path_factory.mktemp("demo") / "ws")
    yield built
    built.service.close()


def ranked(service: SignetService, **options: Any) -> list[str]:
    result = service.recall.search(RecallQuery(query=QUESTION, limit=10, **options))
    return [hit.memory.content for hit in result.hits]


def add_document(service: SignetService) -> None:
    ticket = service.documents.submit(
        "default", DocumentRequest(source_type="text", content=RUNBOOK, title="billing db")
    )
    drain(make_worker(service))
    assert service.documents.get("default", ticket.id).status == "done"


def import_session(service: SignetService, root: Path) -> None:
    lines = claude_session_lines("9c1d6a2e-0b7f-4f57-8f3e-5a1f2b3c4d5e", len(SESSION) // 2)
    said = iter(SESSION)
    for line in lines:
        message = line.get("message")
        if line.get("type") not in ("user", "assistant") or line.get("isSidechain"):
            continue
        if isinstance(message, dict) and message.get("role") == "user":
            if isinstance(message["content"], str):
                message["content"] = next(said)[1]
        elif isinstance(message, dict):
            for block in message["content"]:
                if block.get("type") == "text":
                    block["text"] = next(said)[1]
    projects = root / "projects"
    write_jsonl(projects / claude_slug("/home/dev/billing") / "session.jsonl", lines)
    service.imports.start("default", "claude-code", str(projects), wait=True)


def test_the_readme_answer_ranks_first(demo: demo_workspace.Demo) -> None:
    hits = ranked(demo.service)
    assert hits[0] == ANSWER, hits
    # Not by accident: without the claims stage, memories sharing "database" outrank it.
    assert ranked(demo.service, stages=("rerank", "time", "preference"))[0] != ANSWER


def test_it_stays_first_with_a_document_and_imported_sessions(
    demo: demo_workspace.Demo, claude_dir: Path
) -> None:
    add_document(demo.service)
    import_session(demo.service, claude_dir)
    sessions = demo.service.recall.search(RecallQuery(query=QUESTION, channels=("transcript",)))
    assert any("billing database" in turn.excerpt for turn in sessions.turns)  # imported
    result = demo.service.recall.search(RecallQuery(query=QUESTION, limit=10))
    contents = [hit.memory.content for hit in result.hits]
    assert any("billing database" in text for text in contents[1:]), contents  # it competes
    assert contents[0] == ANSWER, contents
    (claims,) = [a for a in result.hits[0].adjustments if a.stage == "claims"]
    assert "billing's database" in claims.reason and "Postgres 16" in claims.reason
