"""The OpenCode plugin run by Node against a served daemon, with a stand-in OpenCode host.

OpenCode itself is not installed here (it needs a model provider to produce chat events), so
a small driver plays the host: it imports `resources/harness/opencode/signet.mjs` as OpenCode
does, calls its `chat.message` hook with a user message, then its `event` hook with
`session.idle`, answering `client.session.messages` with the session's messages. The test
checks what the plugin added to the message and what the daemon retained.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.daemon import closed_loopback_url, serve_app

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.memory import Actor
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest

PLUGIN = Path(__file__).resolve().parents[2] / "resources" / "harness" / "opencode" / "signet.mjs"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed")
CONFIG = SignetConfig.model_validate({"hooks": {"userPromptSubmit": {"minScore": 0.05}}})

DRIVER = """
const { SignetPlugin } = await import(process.argv[2]);
const messages = [
  { info: { role: "user" }, parts: [{ type: "text", text: "where does billing keep invoices?" }] },
  { info: { role: "assistant" }, parts: [{ type: "text", text: "In Postgres 16." }] },
];
const client = { session: { messages: async () => ({ data: messages }) } };
const hooks = await SignetPlugin({ client, directory: "/work/billing" });
const output = { parts: [{ id: "p1", sessionID: "oc-1", messageID: "m1", type: "text",
                           text: "where does billing keep invoices?" }] };
await hooks["chat.message"]({ sessionID: "oc-1", messageID: "m1" }, output);
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "oc-1" } } });
console.log(JSON.stringify(output));
"""


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SignetService]:
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    svc = build_service(WorkspacePaths.for_root(tmp_path / "ws"), CONFIG, options)
    yield svc
    svc.close()


def run_driver(tmp_path: Path, url: str) -> tuple[dict[str, object], str]:
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER)
    assert NODE is not None
    done = subprocess.run(
        [NODE, str(driver), PLUGIN.as_uri()],
        env={"SIGNET_DAEMON_URL": url, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    output: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return output, done.stderr


def test_the_plugin_injects_context_and_hands_the_session_over(
    service: SignetService, tmp_path: Path
) -> None:
    service.memories.remember(
        RememberRequest(content="billing keeps invoices in Postgres 16", project="/work/billing"),
        Actor(changed_by="test"),
    )
    with serve_app(service) as url:
        output, _ = run_driver(tmp_path, url)
    parts = output["parts"]
    assert isinstance(parts, list) and len(parts) == 2
    added = parts[1]
    assert added["synthetic"] is True and added["id"] == "p1-signet"
    assert "billing keeps invoices in Postgres 16" in added["text"]
    session = service.transcripts.get("default", "oc-1")
    assert session.harness == "opencode" and session.completed_at is not None
    assert [t.role for t in service.transcripts.turns("default", "oc-1")] == [
        "user",
        "assistant",
    ]


def test_a_daemon_that_is_down_leaves_the_message_untouched(tmp_path: Path) -> None:
    output, stderr = run_driver(tmp_path, closed_loopback_url())
    parts = output["parts"]
    assert isinstance(parts, list) and len(parts) == 1  # nothing added, nothing thrown
    assert stderr == ""
