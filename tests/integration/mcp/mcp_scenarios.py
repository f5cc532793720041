"""The scenarios both transports must pass, over any way of opening a client session."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import httpx
from conftest import Daemon, ok, refused
from mcp.client.session import ClientSession
from support.relative_time import (
    EARLY,
    EARLY_AS_OF,
    LATE,
    LATE_AS_OF,
    QUESTION,
    first_content,
    remember_bodies,
    time_stage_raised,
)

from signet_desktop.api.mcp.tools import as_data
from signet_desktop.safety.defang import DATA_NOTE

Open = Callable[[str | None], AbstractAsyncContextManager[ClientSession]]

TOOL_NAMES = {
    "memory_search",
    "memory_store",
    "memory_get",
    "memory_list",
    "memory_modify",
    "memory_forget",
    "memory_feedback",
    "session_search",
    "session_bypass",
    "knowledge_list_entities",
    "knowledge_get_entity",
    "knowledge_expand",
    "secret_list",
}

# (tool, arguments, code, start of the message): each refused before anything is written.
BAD_CALLS: list[tuple[str, dict[str, Any], str, str]] = [
    ("memory_store", {}, "invalid_request", "invalid request: content: Field required"),
    ("memory_store", {"content": 5}, "invalid_request", "invalid request: content: Input should"),
    ("memory_store", {"content": "   "}, "content_empty", ""),
    ("memory_store", {"content": "x", "importance": "high"}, "invalid_request", "invalid request"),
    ("memory_store", {"content": "x", "importance": 7}, "invalid_request", "invalid request"),
    ("memory_store", {"content": "x", "tags": 5}, "invalid_request", "invalid request: tags"),
    ("memory_search", {}, "invalid_request", "invalid request: query: Field required"),
    ("memory_search", {"query": "x", "limit": "5"}, "invalid_request", "invalid request: limit"),
    ("memory_search", {"query": "x", "limit": 0}, "invalid_request", "invalid request: limit"),
    ("memory_search", {"query": "x", "since": "yesterday"}, "invalid_request", "invalid request"),
    ("memory_search", {"query": "x", "as_of": "last week"}, "bad_as_of", "as_of must be an ISO"),
    ("memory_search", {"query": "x", "as_of": "2025-02-30"}, "bad_as_of", "as_of must be an ISO"),
    ("memory_get", {}, "invalid_request", "invalid request: id: Field required"),
    ("memory_get", {"id": 5}, "invalid_request", "invalid request: id: Input should be a valid"),
    ("memory_get", {"id": ""}, "invalid_request", "invalid request: id: String should have"),
    ("memory_get", {"id": "a/history"}, "invalid_request", "invalid request: id: must not"),
    ("memory_list", {"limit": "5"}, "invalid_request", "invalid request: limit: Input should"),
    ("memory_list", {"limit": 0}, "invalid_request", "invalid request: limit"),
    ("memory_list", {"offset": True}, "invalid_request", "invalid request: offset"),
    ("memory_modify", {"reason": "r", "importance": 0.1}, "invalid_request", "invalid request: id"),
    ("memory_forget", {"reason": "r"}, "invalid_request", "invalid request: id: Field required"),
    ("memory_forget", {"id": "no-such-memory", "reason": "r"}, "not_found", "memory no-such"),
    ("session_search", {}, "query_required", "query is required"),
    ("session_search", {"query": "x", "limit": "5"}, "invalid_request", "invalid request: limit"),
    ("session_search", {"query": "x", "limit": 50}, "bad_limit", "limit must be 1..20"),
    ("memory_feedback", {"ratings": {"x": 1}}, "session_required", "sessionKey is required"),
    ("memory_feedback", {"session_key": "s", "ratings": {"x": 9}}, "ratings_invalid", "rating"),
    ("memory_feedback", {"session_key": "s", "ratings": {"x": 1}}, "not_found", "no such memory"),
    ("session_bypass", {"session_key": "s"}, "invalid_request", "invalid request: enabled"),
    ("knowledge_expand", {}, "entity_required", "entity is required"),
    ("knowledge_expand", {"entity_name": "x", "max_tokens": 0}, "invalid_request", "invalid"),
]


async def lists_the_tools(open_session: Open) -> None:
    async with open_session(None) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(tools) == TOOL_NAMES
    assert tools["memory_store"].input_schema["required"] == ["content"]
    assert tools["memory_search"].input_schema["required"] == ["query"]
    assert tools["memory_forget"].input_schema["required"] == ["id", "reason"]
    assert tools["memory_search"].annotations is not None
    assert tools["memory_search"].annotations.read_only_hint is True
    assert tools["memory_forget"].annotations is not None
    assert tools["memory_forget"].annotations.destructive_hint is True


async def round_trip(open_session: Open, daemon: Daemon, agent: str) -> None:
    """store, search finds it, get, list, modify, forget: each visible in the database."""
    async with open_session(agent) as session:
        stored = ok(
            await session.call_tool(
                "memory_store",
                {"content": f"The {agent} deploy key lives in the vault", "tags": ["ops"]},
            )
        )
        memory_id = stored["id"]
        assert stored["deduped"] is False and stored["tags"] == ["ops"]
        row = daemon.memory(memory_id)
        assert row is not None and row["agent_id"] == agent and row["tags"] == ["ops"]

        found = ok(await session.call_tool("memory_search", {"query": "deploy key vault"}))
        assert memory_id in [hit["id"] for hit in found["results"]]

        got = ok(await session.call_tool("memory_get", {"id": memory_id}))
        assert got["id"] == memory_id and got["content"] == row["content"]

        page = ok(await session.call_tool("memory_list", {"limit": 50}))
        assert memory_id in [memory["id"] for memory in page["memories"]]
        assert page["stats"]["total"] >= 1

        modified = ok(
            await session.call_tool(
                "memory_modify", {"id": memory_id, "reason": "more vital", "importance": 0.9}
            )
        )
        assert modified["status"] == "updated" and modified["newVersion"] == 2
        row = daemon.memory(memory_id)
        assert row is not None and row["importance"] == 0.9 and row["version"] == 2

        forgotten = ok(
            await session.call_tool("memory_forget", {"id": memory_id, "reason": "rotated"})
        )
        assert forgotten["status"] == "deleted"
        row = daemon.memory(memory_id)
        assert row is not None and row["is_deleted"] is True

        gone = refused(await session.call_tool("memory_get", {"id": memory_id}))
        assert gone["code"] == "not_found"
    events = daemon.history(memory_id)
    assert [event for event, _, _ in events] == ["created", "modified", "deleted"]
    assert {(who, kind) for _, who, kind in events} == {("mcp", "agent")}


async def bad_arguments_write_nothing(open_session: Open, daemon: Daemon) -> None:
    async with open_session(None) as session:
        before = daemon.counts()
        for tool, arguments, code, message in BAD_CALLS:
            body = refused(await session.call_tool(tool, arguments))
            assert body["code"] == code, (tool, arguments, body)
            assert body["error"].startswith(message), (tool, arguments, body)
        assert daemon.counts() == before
        # The server is still there after every refusal.
        assert ok(await session.call_tool("memory_list", {"limit": 1}))["memories"] is not None


async def modify_and_forget_refusals_write_nothing(open_session: Open, daemon: Daemon) -> None:
    async with open_session(None) as session:
        memory_id = ok(await session.call_tool("memory_store", {"content": "critical: keep me"}))[
            "id"
        ]
        before, row = daemon.counts(), daemon.memory(memory_id)
        cases = [
            ({"id": memory_id, "importance": 0.2}, "memory_modify", "reason_required"),
            ({"id": memory_id, "reason": "r"}, "memory_modify", "empty_patch"),
            ({"id": memory_id, "reason": "r", "importance": "x"}, "memory_modify", ""),
            ({"id": memory_id, "reason": "r", "type": "nonsense"}, "memory_modify", "bad_type"),
            ({"id": memory_id}, "memory_forget", "reason_required"),
            ({"id": memory_id, "reason": "r"}, "memory_forget", "pinned_requires_force"),
        ]
        codes = []
        for arguments, tool, code in cases:
            body = refused(await session.call_tool(tool, arguments))
            codes.append(body["code"])
            if code:
                assert body["code"] == code, (tool, arguments, body)
        assert "invalid_request" in codes
        assert daemon.counts() == before and daemon.memory(memory_id) == row


async def agents_are_isolated(open_session: Open, daemon: Daemon) -> None:
    """bob cannot read, find, list, change or forget alice's memory; agentId args are ignored."""
    async with open_session("alice") as alice:
        memory_id = ok(
            await alice.call_tool("memory_store", {"content": "alice's secret recipe uses saffron"})
        )["id"]
    row = daemon.memory(memory_id)
    assert row is not None and row["agent_id"] == "alice"
    async with open_session("bob") as bob:
        for tool, arguments in [
            ("memory_get", {"id": memory_id}),
            ("memory_modify", {"id": memory_id, "reason": "mine", "importance": 0.1}),
            ("memory_modify", {"id": memory_id, "reason": "mine", "content": "bob's now"}),
            ("memory_forget", {"id": memory_id, "reason": "mine"}),
        ]:
            assert refused(await bob.call_tool(tool, arguments))["code"] == "not_found"
        found = ok(await bob.call_tool("memory_search", {"query": "secret recipe saffron"}))
        assert memory_id not in [hit["id"] for hit in found["results"]]
        page = ok(await bob.call_tool("memory_list", {"limit": 1000}))
        assert memory_id not in [memory["id"] for memory in page["memories"]]
        smuggled = ok(
            await bob.call_tool(
                "memory_store", {"content": "bob tries alice's scope", "agentId": "alice"}
            )
        )
    assert daemon.memory(memory_id) == row
    smuggled_row = daemon.memory(smuggled["id"])
    assert smuggled_row is not None and smuggled_row["agent_id"] == "bob"
    async with open_session("alice") as alice:  # the owner edits its content (as in Signet)
        edit = {"id": memory_id, "reason": "fix", "content": "alice's recipe uses sumac"}
        assert ok(await alice.call_tool("memory_modify", edit))["contentChanged"] is True
    assert (daemon.memory(memory_id) or {})["content"] == "alice's recipe uses sumac"


async def as_of_answers_relative_questions(open_session: Open, daemon: Daemon, agent: str) -> None:
    """memory_search's `as_of` decides what "last week" means; its schema says how to give it."""
    with httpx.Client(base_url=daemon.url, timeout=10) as http:
        for body in remember_bodies():  # dated memories: memory_store takes no createdAt
            reply = http.post(
                "/api/memory/remember", json=body, headers={"x-signet-agent-id": agent}
            )
            assert reply.status_code == 200, reply.text
    async with open_session(agent) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        described = tools["memory_search"].input_schema["properties"]["as_of"]
        assert described["format"] == "date-time" and "last week" in described["description"]
        for as_of, expected in ((EARLY_AS_OF, EARLY[0]), (LATE_AS_OF, LATE[0])):
            found = ok(
                await session.call_tool("memory_search", {"query": QUESTION, "as_of": as_of})
            )
            assert first_content(found) == expected
            assert time_stage_raised(found["results"][0])
    async with open_session(None) as other:  # another agent's scope sees none of it
        found = ok(
            await other.call_tool("memory_search", {"query": QUESTION, "as_of": EARLY_AS_OF})
        )
        assert EARLY[0] not in [hit["content"] for hit in found["results"]]


async def errors_match_http(open_session: Open, daemon: Daemon) -> None:
    """The same bad input gets the same message and code from the HTTP route and the tool."""
    with httpx.Client(base_url=daemon.url, timeout=10) as http:
        memory_id = http.post("/api/memory/remember", json={"content": "parity"}).json()["id"]
        pairs = [
            (("POST", "/api/memory/remember", {"content": 5}), ("memory_store", {"content": 5})),
            (
                ("POST", "/api/memory/remember", {"content": "x", "importance": 2}),
                ("memory_store", {"content": "x", "importance": 2}),
            ),
            (
                ("POST", "/api/memory/recall", {"query": "x", "limit": 500}),
                ("memory_search", {"query": "x", "limit": 500}),
            ),
            (("POST", "/api/memory/recall", {"query": " "}), ("memory_search", {"query": " "})),
            (
                ("PATCH", f"/api/memory/{memory_id}", {"importance": 0.3}),
                ("memory_modify", {"id": memory_id, "importance": 0.3}),
            ),
            (
                ("DELETE", "/api/memory/missing-id", {"reason": "r"}),
                ("memory_forget", {"id": "missing-id", "reason": "r"}),
            ),
            (("GET", "/api/memories?limit=0", None), ("memory_list", {"limit": 0})),
        ]
        expected = []
        for (method, path, body), _ in pairs:
            answer = http.request(method, path, json=body)
            assert answer.status_code >= 400
            expected.append({"error": answer.json()["error"], "code": answer.json()["code"]})
    async with open_session(None) as session:
        for (_, (tool, arguments)), want in zip(pairs, expected, strict=True):
            assert refused(await session.call_tool(tool, arguments)) == want


def retain_session(daemon: Daemon, agent: str, session_key: str, text: str) -> None:
    """A Claude Code transcript under the daemon's HOME, retained by the session-end hook."""
    path = daemon.home / ".claude" / "projects" / "-work-mcp" / f"{session_key}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        {"type": "user", "uuid": "u1", "sessionId": session_key,
         "message": {"role": "user", "content": text}},
        {"type": "assistant", "uuid": "a1", "sessionId": session_key,
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Noted."}]}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    body = {"harness": "claude-code", "sessionKey": session_key, "transcriptPath": str(path)}
    with httpx.Client(base_url=daemon.url, timeout=10) as http:
        answer = http.post("/api/hooks/session-end", json={**body, "agentId": agent})
    assert answer.status_code == 200, answer.text


async def session_search_is_scoped_and_matches_http(
    open_session: Open, daemon: Daemon, agent: str
) -> None:
    retain_session(daemon, agent, f"{agent}-s1", "we moved the ledger to cockroachdb today")
    with httpx.Client(base_url=daemon.url, timeout=10) as http:
        expected = http.post(
            "/api/sessions/search", json={"query": "ledger cockroachdb", "agentId": agent}
        ).json()
    async with open_session(agent) as session:
        found = ok(await session.call_tool("session_search", {"query": "ledger cockroachdb"}))
    assert [hit["sessionKey"] for hit in found["hits"]] == [f"{agent}-s1"]
    # HTTP's body as data: the note added, recalled text defanged (api/mcp/tools.py).
    assert found["note"] == DATA_NOTE
    assert found == json.loads(as_data(json.dumps(expected)))
    async with open_session(f"{agent}-other") as other:
        assert ok(await other.call_tool("session_search", {"query": "ledger cockroachdb"})) == {
            "note": DATA_NOTE,
            "hits": [],
        }
