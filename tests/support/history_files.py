"""Realistic Claude Code and Codex history files for the importer tests and the bench.

Shapes follow ../shared/reference/harness-facts.md: Claude Code lines with type, uuid,
parentUuid, isSidechain, userType, cwd, sessionId, version, gitBranch, timestamp and a
message of text / thinking / tool_use / tool_result blocks, plus summary and bookkeeping
lines; Codex rollouts with session_meta, turn_context, response_item (messages, function
calls, encrypted reasoning) and event_msg lines.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from pathlib import Path
from typing import Any

BASE_TIME = "2026-11-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}.{ms:03d}Z"


def stamp(index: int, day: int = 3) -> str:
    seconds = index * 7
    return BASE_TIME.format(
        day=day,
        hour=9 + seconds // 3600 % 12,
        minute=seconds // 60 % 60,
        second=seconds % 60,
        ms=index % 1000,
    )


def claude_slug(cwd: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def claude_session_lines(
    session_id: str, exchanges: int, *, cwd: str = "/home/dev/proj", day: int = 3
) -> list[dict[str, Any]]:
    """A main-thread Claude Code session: `exchanges` user/assistant pairs (2 turns each),
    with a tool call + result, thinking, a sidechain line, a summary and bookkeeping."""
    lines: list[dict[str, Any]] = [
        {
            "type": "summary",
            "summary": f"Work in {cwd}",
            "leafUuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session_id}/leaf")),
        },
        {"type": "queue-operation", "operation": "enqueue", "timestamp": stamp(0, day)},
    ]
    parent = None
    common = {
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": session_id,
        "version": "2.0.31",
        "gitBranch": "main",
    }
    for i in range(exchanges):
        user_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session_id}/u{i}"))
        lines.append(
            {
                **common,
                "type": "user",
                "uuid": user_id,
                "parentUuid": parent,
                "timestamp": stamp(2 * i, day),
                "message": {"role": "user", "content": f"Question {i} about {session_id[:8]}?"},
            }
        )
        tool_id = f"toolu_{i:04d}"
        assistant_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session_id}/a{i}"))
        lines.append(
            {
                **common,
                "type": "assistant",
                "uuid": assistant_id,
                "parentUuid": user_id,
                "timestamp": stamp(2 * i + 1, day),
                "message": {
                    "id": f"msg_{i}",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "usage": {"input_tokens": 10, "output_tokens": 20},
                    "content": [
                        {"type": "thinking", "thinking": "let me look", "signature": "x"},
                        {"type": "text", "text": f"Answer {i}: use the parser."},
                        {"type": "tool_use", "id": tool_id, "name": "Read", "input": {"p": "a"}},
                    ],
                },
            }
        )
        if i == 0:
            lines.append(
                {
                    **common,
                    "type": "user",
                    "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session_id}/r{i}")),
                    "parentUuid": assistant_id,
                    "timestamp": stamp(2 * i + 1, day),
                    "message": {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}
                        ],
                    },
                    "toolUseResult": {"stdout": "ok"},
                }
            )
            lines.append(
                {
                    **common,
                    "isSidechain": True,
                    "type": "assistant",
                    "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session_id}/side")),
                    "parentUuid": None,
                    "timestamp": stamp(2 * i + 1, day),
                    "message": {"role": "assistant", "content": "sidechain chatter"},
                }
            )
        parent = assistant_id
    lines.append({"type": "system", "subtype": "compact_boundary", "timestamp": stamp(0, day)})
    return lines


def write_jsonl(
    path: Path, lines: list[dict[str, Any]], *, torn_tail: bool = False, age_s: float = 3600.0
) -> Path:
    """Write the lines; the file's mtime is set `age_s` back (0: now, a session still being
    written), as a harness's finished session files are."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(line) + "\n" for line in lines)
    if torn_tail:
        text += '{"type": "assistant", "uuid": "torn", "message": {"role": "assis'
    path.write_text(text, encoding="utf-8")
    if age_s:
        moment = time.time() - age_s
        os.utime(path, (moment, moment))
    return path


def write_claude_project(
    projects: Path,
    sessions: int,
    exchanges: int,
    *,
    cwd: str = "/home/dev/proj",
    torn_tail_on: int | None = None,
    warmup_agent: bool = False,
) -> list[str]:
    """`sessions` session files under `projects/<slug>/`; their session ids. `warmup_agent`
    adds Claude Code 2.0's warm-up subagent file beside them (a file, not a session)."""
    ids = []
    for n in range(sessions):
        session_id = str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{cwd}/{n}"))
        ids.append(session_id)
        write_jsonl(
            projects / claude_slug(cwd) / f"{session_id}.jsonl",
            claude_session_lines(session_id, exchanges, cwd=cwd, day=1 + n % 27),
            torn_tail=torn_tail_on == n,
        )
    # Claude Code 2.0 warmed each subagent type up with a "Warmup" prompt: a file, no session
    if sessions and warmup_agent:
        write_jsonl(
            projects / claude_slug(cwd) / f"agent-{ids[0][:8]}.jsonl",
            claude_subagent_lines(ids[0], ids[0][:8], ["Warmup"], cwd=cwd),
        )
    return ids


def claude_subagent_lines(
    parent: str, agent_id: str, prompts: list[str], *, cwd: str = "/home/dev/proj"
) -> list[dict[str, Any]]:
    """A subagent's transcript: sidechain lines carrying the parent's `sessionId` and the
    subagent's `agentId`, one prompt and one answer per item of `prompts`."""
    lines: list[dict[str, Any]] = []
    common = {
        "isSidechain": True,
        "userType": "external",
        "cwd": cwd,
        "sessionId": parent,
        "version": "2.1.39",
        "agentId": agent_id,
    }
    for i, prompt in enumerate(prompts):
        user = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{parent}/{agent_id}/u{i}"))
        lines.append(
            {**common, "type": "user", "uuid": user, "timestamp": stamp(2 * i),
             "message": {"role": "user", "content": prompt}}
        )  # fmt: skip
        lines.append(
            {**common, "type": "assistant", "timestamp": stamp(2 * i + 1),
             "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{parent}/{agent_id}/a{i}")),
             "message": {"role": "assistant", "model": "claude-haiku-4-5",
                         "content": [{"type": "text", "text": f"Subagent found {i}."}]}}
        )  # fmt: skip
    return lines


def codex_rollout_lines(session_id: str, exchanges: int, *, cwd: str = "/home/dev/cx") -> list:
    lines: list[dict[str, Any]] = [
        {
            "timestamp": stamp(0),
            "type": "session_meta",
            "payload": {
                "id": session_id,
                "timestamp": stamp(0),
                "cwd": cwd,
                "originator": "codex_cli_rs",
                "cli_version": "0.58.0",
                "instructions": None,
                "source": "cli",
                "git": {"branch": "main"},
            },
        },
        {
            "timestamp": stamp(0),
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "<environment_context>cwd</...>"}],
            },
        },
        {
            "timestamp": stamp(0),
            "type": "turn_context",
            "payload": {"cwd": cwd, "model": "gpt-5-codex", "approval_policy": "on-request"},
        },
    ]
    for i in range(exchanges):
        lines += [
            {
                "timestamp": stamp(2 * i),
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": f"Codex task {i}"}],
                },
            },
            {
                "timestamp": stamp(2 * i),
                "type": "event_msg",
                "payload": {"type": "user_message", "message": f"Codex task {i}"},
            },
            {
                "timestamp": stamp(2 * i + 1),
                "type": "response_item",
                "payload": {"type": "reasoning", "encrypted_content": "gAAAA"},
            },
            {
                "timestamp": stamp(2 * i + 1),
                "type": "response_item",
                "payload": {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": '{"command":["ls"]}',
                    "call_id": f"call_{i}",
                },
            },
            {
                "timestamp": stamp(2 * i + 1),
                "type": "response_item",
                "payload": {"type": "function_call_output", "call_id": f"call_{i}", "output": "a"},
            },
            {
                "timestamp": stamp(2 * i + 1),
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": f"Done with task {i}."}],
                },
            },
            {
                "timestamp": stamp(2 * i + 1),
                "type": "event_msg",
                "payload": {"type": "token_count", "info": None},
            },
        ]
    return lines


def write_codex_sessions(sessions_root: Path, sessions: int, exchanges: int) -> list[str]:
    ids = []
    for n in range(sessions):
        session_id = str(uuid.uuid5(uuid.NAMESPACE_OID, f"codex/{n}"))
        ids.append(session_id)
        day = 1 + n % 27
        write_jsonl(
            sessions_root
            / "2026"
            / "11"
            / f"{day:02d}"
            / f"rollout-2026-11-{day:02d}T10-00-{n % 60:02d}-{session_id}.jsonl",
            codex_rollout_lines(session_id, exchanges),
        )
    return ids
