"""The real harness files in tests/fixtures/real (see its README), and what each holds.

`EXPECTED` is the hand-checked content of every file: the session key it imports under, its
user and assistant turns, the message records kept out by reason, the parent of a subagent,
and why a whole file is no session of its own. `text_messages` counts a file's user/assistant
messages with text straight from its JSON lines, apart from the readers under test.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
CLAUDE_ROOT = REAL / "claude-code"
CODEX_ROOT = REAL / "codex"

S258 = "258c7280-ae70-4798-800f-63464d01a85d"
S4C2 = "4c2ddfdc-b619-4525-8d03-1950fb1b0257"
SE9F = "e9fb405b-169f-40eb-9396-7e75076f045d"
SFCF = "fcf3fc43-049e-43d5-9a37-a02864fabbc2"
LOCAL = "local-2.1.197/-tmp-h26-gen-claude-work-ledger-app"
WARMUP = "warm-up agent (Claude Code's cache warm-up, no task)"
COMPACTION = "compaction agent (a summary of its parent session's own turns)"


@dataclass(frozen=True)
class Expected:
    session: str | None
    users: int
    assistants: int
    kept: dict[str, int] = field(default_factory=dict)
    parent: str | None = None
    skip: str | None = None

    @property
    def turns(self) -> int:
        return self.users + self.assistants


EXPECTED: dict[str, Expected] = {
    f"claude-code/codemie-code-2.0.64/-tmp-private/{S4C2}.jsonl": Expected(S4C2, 3, 4),
    "claude-code/codemie-code-2.0.64/-tmp-private/agent-36541525.jsonl": Expected(
        f"{S4C2}/agent-36541525", 1, 1, parent=S4C2, skip=WARMUP
    ),
    "claude-code/codemie-code-2.0.64/-tmp-private/agent-50243ee8.jsonl": Expected(
        f"{S4C2}/agent-50243ee8", 1, 1, parent=S4C2, skip=WARMUP
    ),
    "claude-code/codemie-code-2.1.4/session-9eda1058.jsonl": Expected(
        "9eda1058-9706-484a-b992-d03f9cfa2546", 3, 5, {"interrupted": 1}
    ),
    "claude-code/codemie-code-2.1.7/turn-2.jsonl": Expected(SE9F, 1, 5),
    "claude-code/codemie-code-2.1.7/turn-2/subagents/agent-a485154.jsonl": Expected(
        f"{SE9F}/agent-a485154", 1, 3, parent=SE9F
    ),
    f"claude-code/{LOCAL}/{SFCF}.jsonl": Expected(SFCF, 2, 3),
    f"claude-code/{LOCAL}/{SFCF}/subagents/agent-a1fbf9b4baa58c8e2.jsonl": Expected(
        f"{SFCF}/agent-a1fbf9b4baa58c8e2", 1, 1, parent=SFCF
    ),
    "claude-code/spotter-2.1.38/short.jsonl": Expected(
        "55604662-cf2a-4331-851a-ec234028f8ca", 1, 1, {"interrupted": 1}
    ),
    "claude-code/spotter-2.1.38/tool_heavy.jsonl": Expected(
        "d6e0bada-1959-4eec-a9d2-0bfade768d8f",
        3,
        1,
        {"command-output": 1, "interrupted": 2, "meta": 1},
    ),
    f"claude-code/spotter-2.1.39/{S258}.jsonl": Expected(S258, 1, 9),
    f"claude-code/spotter-2.1.39/{S258}/subagents/agent-a881341.jsonl": Expected(
        f"{S258}/agent-a881341", 1, 3, parent=S258
    ),
    f"claude-code/spotter-2.1.39/{S258}/subagents/agent-acompact-fffbd0.jsonl": Expected(
        f"{S258}/agent-acompact-fffbd0", 1, 1, {"meta": 2}, parent=S258, skip=COMPACTION
    ),
    "codex/codemie-code-0.125.0/"
    "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl": Expected(
        "019e1625-789d-76c0-80ab-3724b5ddb799",
        2,
        4,
        {"developer": 1, "event-copy": 6, "instructions": 1},
    ),
    "codex/codemie-code-0.128.0/"
    "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl": Expected(
        "019e1695-0522-7c83-8b39-0dd379793f80", 3, 2
    ),
    "codex/local-0.171.0/"
    "rollout-2026-12-06T03-14-06-01a24958-30f4-74b2-ad8c-73408f7970f9.jsonl": Expected(
        "01a24958-30f4-74b2-ad8c-73408f7970f9", 1, 1, {"developer": 1, "instructions": 1}
    ),
    "codex/local-0.29.0/"
    "rollout-2026-12-06T03-14-04-a139ab22-8493-45e6-8067-d664d384e5a8.jsonl": Expected(
        "a139ab22-8493-45e6-8067-d664d384e5a8",
        1,
        1,
        {"environment-context": 1, "instructions": 1},
    ),
}


def _text(content: Any, kinds: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    return "".join(
        str(block.get("text", "")).strip()
        for block in content
        if isinstance(block, dict) and block.get("type") in kinds
    )


def text_messages(path: Path) -> int:
    """User/assistant messages with text in a harness file, counted from its raw lines."""
    codex = path.is_relative_to(CODEX_ROOT)
    count = 0
    for line in path.read_bytes().splitlines():
        record = json.loads(line)
        if codex:
            body = record["payload"] if isinstance(record.get("payload"), dict) else record
            message = body.get("type") == "message"
            count += message and bool(_text(body.get("content"), ("input_text", "output_text")))
            event = body.get("type") in ("user_message", "agent_message")
            count += event and bool(str(body.get("message") or "").strip())
        elif record.get("type") in ("user", "assistant") and isinstance(
            record.get("message"), dict
        ):
            count += bool(_text(record["message"].get("content"), ("text",)))
    return count


def copy_history(source: Path, target: Path, *, age_s: float = 3600.0) -> Path:
    """A copy of a fixture root with every file's mtime `age_s` back (a finished history)."""
    shutil.copytree(source, target)
    moment = time.time() - age_s
    for path in target.rglob("*"):
        if path.is_file():
            os.utime(path, (moment, moment))
    return target
