"""Hook routes over HTTP: Signet's shapes, Claude Code's native payloads, sessions, scope."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from http_helpers import make_client, row_counts

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio

# Injection thresholds low enough for the hash embedder's scores.
CONFIG = SignetConfig.model_validate({"hooks": {"userPromptSubmit": {"minScore": 0.05}}})


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SignetService]:
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    svc = build_service(WorkspacePaths.for_root(tmp_path), CONFIG, options)
    yield svc
    svc.close()


@pytest.fixture
def app(service: SignetService, tmp_path: Path) -> FastAPI:
    return create_app(service, HttpSettings(agents_dir=str(tmp_path)))


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with make_client(app) as c:
        yield c


async def remember(client: httpx.AsyncClient, content: str, **extra: object) -> str:
    reply = await client.post("/api/memory/remember", json={"content": content, **extra})
    assert reply.status_code == 200, reply.text
    return str(reply.json()["id"])


def claude_transcript(root: Path, session: str) -> Path:
    path = root / "claude" / "projects" / "-work-billing" / f"{session}.jsonl"
    path.parent.mkdir(parents=True)
    lines = [
        {"type": "user", "uuid": "u1", "sessionId": session,
         "message": {"role": "user", "content": "move billing to postgres 16"}},
        {"type": "assistant", "uuid": "a1", "sessionId": session,
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


async def test_session_start_injects_scoped_memories_once_per_session(
    client: httpx.AsyncClient,
) -> None:
    mine = await remember(client, "billing runs on postgres 16", project="/work/billing")
    await remember(client, "global rule: never force-push main")
    other_project = await remember(client, "frontend uses svelte", project="/work/web")
    other_agent = await remember(client, "agent b secret", agentId="b")
    body = {"harness": "claude-code", "sessionKey": "s1", "project": "/work/billing"}
    reply = await client.post("/api/hooks/session-start", json=body)
    assert reply.status_code == 200, reply.text
    answer = reply.json()
    assert set(answer) >= {"identity", "memories", "recentContext", "inject"}
    ids = {m["id"] for m in answer["memories"]}
    assert mine in ids and other_project not in ids and other_agent not in ids
    assert "postgres 16" in answer["inject"] and "svelte" not in answer["inject"]
    assert len(answer["inject"]) <= 10_000
    again = (await client.post("/api/hooks/session-start", json=body)).json()
    assert again["memories"] == [] and "loaded at its start" in again["inject"]


async def test_prompt_submit_recalls_and_never_repeats_within_the_epoch(
    client: httpx.AsyncClient,
) -> None:
    memory_id = await remember(client, "billing database is postgres 16")
    body = {"harness": "codex", "sessionKey": "s2", "userMessage": "which database for billing?"}
    first = (await client.post("/api/hooks/user-prompt-submit", json=body)).json()
    assert first["memoryCount"] == 1 and "postgres 16" in first["inject"]
    assert "billing" in first["queryTerms"] and first["engine"] in ("hybrid", "keyword")
    second = (await client.post("/api/hooks/user-prompt-submit", json=body)).json()
    assert second["memoryCount"] == 0 and second["inject"] == ""
    done = await client.post(
        "/api/hooks/compaction-complete",
        json={"harness": "codex", "sessionKey": "s2", "summary": "we chose postgres"},
    )
    assert done.status_code == 200, done.text
    assert done.json()["contextEpoch"] == 1 and done.json()["success"] is True
    third = (await client.post("/api/hooks/user-prompt-submit", json=body)).json()
    assert memory_id in third["inject"] or "postgres 16" in third["inject"]


async def test_prompt_submit_respects_max_inject_chars(
    client: httpx.AsyncClient,
) -> None:
    for i in range(20):
        await remember(client, f"billing fact number {i}: " + "detail " * 30)
    body = {"harness": "codex", "sessionKey": "s3", "userMessage": "billing fact"}
    answer = (await client.post("/api/hooks/user-prompt-submit", json=body)).json()
    assert 0 < len(answer["inject"]) <= 500  # hooks.userPromptSubmit.maxInjectChars default


async def test_session_end_retains_the_transcript_and_lists_the_session(
    client: httpx.AsyncClient, tmp_path: Path
) -> None:
    path = claude_transcript(tmp_path, "cc-1")
    body = {"harness": "claude-code", "sessionKey": "cc-1", "transcriptPath": str(path)}
    answer = (await client.post("/api/hooks/session-end", json=body)).json()
    assert answer["memoriesSaved"] == 0 and answer["transcript"]["turns"] == 2
    canonical = tmp_path / "memory" / "claude-code" / "transcripts" / "transcript.jsonl"
    assert len(canonical.read_text().splitlines()) == 2
    listed = (await client.get("/api/sessions")).json()
    assert [s["sessionKey"] for s in listed["sessions"]] == ["cc-1"]
    assert listed["sessions"][0]["status"] == "completed"
    turns = (await client.get("/api/sessions/cc-1/transcript")).json()["turns"]
    assert [t["role"] for t in turns] == ["user", "assistant"]
    hits = (await client.post("/api/sessions/search", json={"query": "postgres"})).json()["hits"]
    assert [h["sessionKey"] for h in hits] == ["cc-1"]
    again = (await client.post("/api/hooks/session-end", json=body)).json()
    assert again["transcript"]["appended"] == 0  # a retried session-end writes nothing twice
    assert len(canonical.read_text().splitlines()) == 2


async def test_another_agent_sees_none_of_the_sessions(
    client: httpx.AsyncClient, tmp_path: Path
) -> None:
    path = claude_transcript(tmp_path, "cc-2")
    body = {"harness": "claude-code", "sessionKey": "cc-2", "transcriptPath": str(path)}
    await client.post("/api/hooks/session-end", json={**body, "agentId": "a"})
    headers = {"x-signet-agent-id": "b"}
    assert (await client.get("/api/sessions", headers=headers)).json()["total"] == 0
    assert (await client.get("/api/sessions/cc-2", headers=headers)).status_code == 404
    assert (await client.get("/api/sessions/cc-2/transcript", headers=headers)).status_code == 404
    search = await client.post("/api/sessions/search", json={"query": "postgres"}, headers=headers)
    assert search.json()["hits"] == []
    assert (await client.get("/api/sessions/cc-2", params={"agentId": "a"})).status_code == 200


async def test_a_session_claimed_by_one_runtime_path_refuses_the_other(
    client: httpx.AsyncClient,
) -> None:
    body = {"harness": "opencode", "sessionKey": "oc-1", "runtimePath": "plugin"}
    assert (await client.post("/api/hooks/session-start", json=body)).status_code == 200
    clash = await client.post(
        "/api/hooks/user-prompt-submit",
        json={**body, "userMessage": "hello there"},
        headers={"x-signet-runtime-path": "legacy"} | {},
    )
    assert clash.status_code == 200  # the body's runtimePath (plugin) wins over the header
    legacy = {**body, "runtimePath": "legacy", "userMessage": "hello there"}
    refused = await client.post("/api/hooks/user-prompt-submit", json=legacy)
    assert refused.status_code == 409
    assert refused.json()["code"] == "runtime_path_conflict"


async def test_bypassed_sessions_and_no_hooks_header_get_empty_answers(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    await remember(client, "billing database is postgres 16")
    bypass = await client.post(
        "/api/sessions/s9/bypass", json={"harness": "claude-code", "enabled": True}
    )
    assert bypass.json()["bypassed"] is True
    body = {"harness": "claude-code", "sessionKey": "s9", "userMessage": "billing database"}
    answer = (await client.post("/api/hooks/user-prompt-submit", json=body)).json()
    assert answer["bypassed"] is True and answer["inject"] == ""
    before = row_counts(service)
    quiet = await client.post(
        "/api/hooks/session-start",
        json={"harness": "claude-code", "sessionKey": "s10"},
        headers={"x-signet-no-hooks": "1"},
    )
    assert quiet.json()["inject"] == "" and row_counts(service) == before


@pytest.mark.parametrize(
    ("path", "body", "code"),
    [
        ("/api/hooks/session-start", {"sessionKey": "x"}, "harness_required"),
        ("/api/hooks/session-start", {"harness": "not a harness!"}, "harness_invalid"),
        ("/api/hooks/user-prompt-submit", {"harness": "codex", "userMessage": 5}, None),
        ("/api/hooks/session-end",
         {"harness": "codex", "sessionKey": "s", "transcriptPath": "/etc/passwd"},
         "path_not_allowed"),
    ],
)  # fmt: skip
async def test_bad_hook_input_is_refused_and_writes_nothing(
    client: httpx.AsyncClient,
    service: SignetService,
    path: str,
    body: dict[str, object],
    code: str | None,
) -> None:
    before = row_counts(service)
    reply = await client.post(path, json=body)
    assert reply.status_code in (400, 403, 422), reply.text  # 403: a path outside the roots
    if code is not None:
        assert reply.json()["code"] == code
    assert row_counts(service) == before


@pytest.mark.parametrize(
    ("path", "body", "reason"),
    [
        # Signet's OpenCode plugin ends sessions without a key
        ("/api/hooks/session-end", {"harness": "opencode"}, "no session key"),
        ("/api/hooks/compaction-complete", {"harness": "codex", "sessionKey": "s"},
         "no summary"),
    ],
)  # fmt: skip
async def test_nothing_to_do_is_a_2xx_with_the_reason_and_writes_nothing(
    client: httpx.AsyncClient,
    service: SignetService,
    path: str,
    body: dict[str, object],
    reason: str,
) -> None:
    """A harness prints every non-2xx hook answer to its user as a failure."""
    before = row_counts(service)
    reply = await client.post(path, json=body)
    assert reply.status_code == 200, reply.text
    assert reply.json()["skipped"].startswith(reason)
    assert row_counts(service) == before


async def test_session_end_without_a_transcript_file_closes_the_session_with_a_reason(
    client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """`claude mcp list` ends a session whose transcript file was never written."""
    missing = Path.home() / ".claude" / "projects" / "-tmp-x" / "never-written-0001.jsonl"
    body = {"harness": "claude-code", "sessionKey": "mcp-list-1", "transcriptPath": str(missing)}
    reply = await client.post("/api/hooks/session-end", json=body)
    assert reply.status_code == 200, reply.text
    assert reply.json()["skipped"].startswith("no transcript file")
    assert reply.json()["transcript"] is None
    native = {"session_id": "mcp-list-2", "transcript_path": str(missing), "cwd": "/tmp/x",
              "hook_event_name": "SessionEnd", "reason": "other"}  # fmt: skip
    reply = await client.post("/api/hooks/claude-code/session-end", json=native)
    assert reply.status_code == 200, reply.text


async def test_malformed_json_is_a_clear_400(client: httpx.AsyncClient) -> None:
    reply = await client.post(
        "/api/hooks/session-start", content=b"{not json", headers={"content-type": "text/plain"}
    )
    assert reply.status_code in (400, 422)


async def test_claude_code_native_hooks_answer_in_its_output_format(
    client: httpx.AsyncClient, tmp_path: Path
) -> None:
    await remember(client, "billing database is postgres 16", project="/work/billing")
    payload = {
        "session_id": "cc-9",
        "transcript_path": str(claude_transcript(tmp_path, "cc-9")),
        "cwd": "/work/billing",
        "hook_event_name": "SessionStart",
        "permission_mode": "default",
        "source": "startup",
        "model": "claude-sonnet",  # unknown fields are ignored
    }
    start = (await client.post("/api/hooks/claude-code/session-start", json=payload)).json()
    output = start["hookSpecificOutput"]
    assert (
        output["hookEventName"] == "SessionStart" and "postgres 16" in output["additionalContext"]
    )
    prompt = {**payload, "hook_event_name": "UserPromptSubmit", "prompt": "which billing database"}
    answer = (await client.post("/api/hooks/claude-code/user-prompt-submit", json=prompt)).json()
    assert answer == {}  # already injected at session start: nothing is repeated
    end = {**payload, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}
    assert (await client.post("/api/hooks/claude-code/session-end", json=end)).json() == {}
    session = (await client.get("/api/sessions/cc-9")).json()
    assert session["status"] == "completed" and session["harness"] == "claude-code"
