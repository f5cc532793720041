"""kill -9 of one daemon under load (issue 31's fault list).

Two real `signet-desktop --headless` processes, A and B, share one PostgreSQL database;
hints are on, each daemon asking its own scripted LLM (A's answers in `A_LLM_S`, so a hint
job A leases is mid-run for seconds; B's in `B_LLM_S`). Writers spread over both remember
without pause and keep every content a 200 acknowledged. Just after A's LLM receives a
request (A holds a lease, its handler is running), A gets SIGKILL. Writers to A then fail
with connection errors (never counted as acknowledged); writers to B keep getting 200s.
A restarts on its workspace (its LLM now answers quickly) and serves again.

What is asserted, and why:
- every acknowledged content is in `memories` exactly once (a write A took but could not
  acknowledge may be there too: it is not counted either way);
- one `prospective_hints` job per memory, all completed once A is back;
- `attempts` (raised by each lease) is 1 for every job but the one A was running at the kill:
  that job's lease outlives A, expires after `worker.leaseTimeoutMs` (10 s, the key's floor)
  and another worker leases it again, so it shows 2, and its second lease starts no earlier
  than the first one's expiry. The design allows this one re-run and no other;
- every run is one LLM call, so the calls per memory (A's, B's, the restarted A's) equal its
  job's attempts: nothing ran that the queue did not lease;
- B's log has no ERROR line and B, like the restarted A, exits 0 on SIGTERM.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.team_daemons import errors_in, query_rows, until

from signet_desktop.service.hints.service import JOB_TYPE as HINT_JOB
from tests.e2e.launcher import DaemonProcess, Launcher, args_for
from tests.support.fake_llm import FakeLLM, reply, slow

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.timeout(900)]

DEADLINE_S = 120.0  # a bound against a hang at load 15-25, not a speed check
DRAIN_DEADLINE_S = 400.0  # every hint job done: waits out a lease expiry and a stale check
LEASE_MS = 10_000  # worker.leaseTimeoutMs: its floor, so A's orphaned lease expires soon
A_LLM_S, B_LLM_S = 3.0, 0.1  # how long each daemon's LLM takes per hint job
WRITERS_PER_DAEMON = 2
ACKED_BEFORE_KILL = 5  # per writer
ACKED_ON_B_AFTER_KILL = 20  # writes sent to B after the kill and acknowledged
SCRIPTED = 2000  # more answers than any LLM is asked for (an empty script answers 418)
HINTS = json.dumps({"hints": ["where is the runbook page", "who keeps the shared wiki"]})


def agent_yaml(storage_url: str, llm_url: str) -> str:
    return (
        f"storage:\n  url: '{storage_url}'\nembedding:\n  provider: none\n"
        "memory:\n  pipelineV2:\n"
        f"    worker:\n      pollMs: 200\n      leaseTimeoutMs: {LEASE_MS}\n"
        "    hints:\n      enabled: true\n      poll: 1000\n"
        "inference:\n  targets:\n    fake:\n      executor: openai-compatible\n"
        f"      endpoint: {llm_url}\n      models: {{m: {{}}}}\n"
        "  workloads:\n    memoryExtraction: {target: fake, model: m}\n"
    )


@dataclass
class Writer:
    """One HTTP client remembering on one daemon until told to stop."""

    name: str
    url: str
    acked: list[tuple[str, float]] = field(default_factory=list)  # (content, sent at)
    failed: list[tuple[str, float]] = field(default_factory=list)  # (error, sent at)
    refused: list[tuple[int, str]] = field(default_factory=list)  # any answer but 200

    def run(self, stop: threading.Event) -> None:
        with httpx.Client(base_url=self.url, timeout=60) as client:
            i = 0
            while not stop.is_set():
                content = (
                    f"{self.name} note {i}: the {self.name} team keeps runbook page {i} "
                    "in the shared wiki"
                )
                i += 1
                sent = time.monotonic()
                try:
                    answer = client.post("/api/memory/remember", json={"content": content})
                except httpx.TransportError as exc:  # refused, reset: not acknowledged
                    self.failed.append((type(exc).__name__, sent))
                    stop.wait(0.05)
                    continue
                if answer.status_code == 200:
                    self.acked.append((content, sent))
                else:
                    self.refused.append((answer.status_code, answer.text[:300]))

    def acked_after(self, moment: float) -> int:
        return sum(1 for _, sent in self.acked if sent > moment)


def prompt_of(request: Any) -> str:
    """The memory text a hint request asked about (its user message)."""
    return str(request.body["messages"][-1]["content"])


def moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def hint_jobs(url: str) -> list[tuple[Any, ...]]:
    """(memory id, content, job id, status, attempts, leased at) per memory; job columns are
    None for a memory without a hint job."""
    return query_rows(
        url,
        "SELECT m.id, m.content, j.id, j.status, j.attempts, j.leased_at FROM memories m "
        f"LEFT JOIN memory_jobs j ON j.memory_id = m.id AND j.job_type = '{HINT_JOB}' "
        "ORDER BY m.seq",
    )


def start(launcher: Launcher, workspace: Path) -> tuple[DaemonProcess, str]:
    daemon = launcher.start(*args_for(workspace, "--log-level", "info"))
    url = daemon.wait_listening()
    with httpx.Client(base_url=url, timeout=30) as client:
        until(
            lambda: client.get("/api/status").json()["eventRelay"],
            lambda relay: relay["listening"],
            DEADLINE_S,
        )
    return daemon, url


def test_kill_one_daemon_under_load(tmp_path: Path, pg_url: str) -> None:
    with FakeLLM() as llm_a, FakeLLM() as llm_b, FakeLLM() as llm_a2:
        llm_a.script(*[slow(A_LLM_S, reply(HINTS)) for _ in range(SCRIPTED)])
        for fast in (llm_b, llm_a2):
            fast.script(*[slow(B_LLM_S, reply(HINTS)) for _ in range(SCRIPTED)])
        scenario(tmp_path, pg_url, llm_a, llm_b, llm_a2)


def scenario(tmp_path: Path, pg_url: str, llm_a: FakeLLM, llm_b: FakeLLM, llm_a2: FakeLLM) -> None:
    launcher = Launcher(tmp_path)
    workspace_a, workspace_b = tmp_path / "a", tmp_path / "b"
    for workspace, llm in ((workspace_a, llm_a), (workspace_b, llm_b)):
        workspace.mkdir()
        workspace.joinpath("agent.yaml").write_text(agent_yaml(pg_url, llm.base_url))
    stop = threading.Event()
    threads: list[threading.Thread] = []
    try:
        daemon_a, url_a = start(launcher, workspace_a)
        daemon_b, url_b = start(launcher, workspace_b)
        writers = [
            Writer(f"{side}{n}", url)
            for n in range(WRITERS_PER_DAEMON)
            for side, url in (("alpha", url_a), ("beta", url_b))
        ]
        on_a, on_b = writers[0::2], writers[1::2]
        threads = [threading.Thread(target=w.run, args=(stop,), daemon=True) for w in writers]
        for thread in threads:
            thread.start()

        # Under load on both; then kill A the moment its LLM is asked (a job mid-run on A).
        until(
            lambda: min(len(w.acked) for w in writers), lambda n: n >= ACKED_BEFORE_KILL, DEADLINE_S
        )
        asked = len(llm_a.requests)
        until(lambda: len(llm_a.requests), lambda n: n > asked, DEADLINE_S)
        daemon_a.proc.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        assert daemon_a.wait() == -signal.SIGKILL
        calls_a = list(llm_a.requests)  # A is gone: these are all it ever asked
        held = query_rows(
            pg_url,
            "SELECT j.id, j.lease_expires_at, m.content FROM memory_jobs j "
            "JOIN memories m ON m.id = j.memory_id "
            f"WHERE j.job_type = '{HINT_JOB}' AND j.status = 'leased'",
        )

        # B keeps serving; writers to A only fail.
        until(
            lambda: (
                sum(w.acked_after(killed_at) for w in on_b),
                [len(w.failed) for w in on_a],
            ),
            lambda seen: seen[0] >= ACKED_ON_B_AFTER_KILL and min(seen[1]) >= 1,
            DEADLINE_S,
        )
        stop.set()
        for thread in threads:
            thread.join(DEADLINE_S)
        assert not any(t.is_alive() for t in threads)

        # A comes back (its LLM now quick) and serves; the queue drains.
        workspace_a.joinpath("agent.yaml").write_text(agent_yaml(pg_url, llm_a2.base_url))
        daemon_a2, url_a2 = start(launcher, workspace_a)
        with httpx.Client(base_url=url_a2, timeout=60) as client:
            again = client.post(
                "/api/memory/remember",
                json={"content": "after the restart daemon a takes writes for the team again"},
            )
            assert again.status_code == 200, again.text
            seen_on_b = on_b[0].acked[-1][0]
            recalled = client.post("/api/memory/recall", json={"query": seen_on_b}).json()
            assert any(hit["content"] == seen_on_b for hit in recalled["results"]), recalled

        def drained(found: list[tuple[Any, ...]]) -> bool:
            return all(status == "completed" for *_, status, _, _ in found)

        final = until(lambda: hint_jobs(pg_url), drained, DRAIN_DEADLINE_S)
        codes = [daemon_b.signal(), daemon_a2.signal()]
    finally:
        stop.set()
        launcher.cleanup()

    assert codes == [0, 0], [daemon_b.stderr(), daemon_a2.stderr()]
    log_b = (workspace_b / ".daemon" / "logs" / "daemon.log").read_text()
    assert errors_in(log_b) == [], log_b[-4000:]
    log_a = (workspace_a / ".daemon" / "logs" / "daemon.log").read_text()
    assert errors_in(log_a) == [], log_a[-4000:]  # the killed run's lines and the restart's

    # Writers: B answered 200 every time, before the kill and after it; A never after it.
    for writer in on_b:
        assert writer.refused == [] and writer.failed == [], (writer.refused, writer.failed)
    for writer in on_a:
        assert writer.refused == [], writer.refused
        assert writer.acked_after(killed_at) == 0 and writer.failed
        before = [error for error, sent in writer.failed if sent < killed_at]
        assert len(before) <= 1, writer.failed  # only the request in flight at the kill
    print(
        f"acknowledged: A {sum(len(w.acked) for w in on_a)}, B before the kill "
        f"{sum(len(w.acked) - w.acked_after(killed_at) for w in on_b)}, B after it "
        f"{sum(w.acked_after(killed_at) for w in on_b)}; "
        f"failed on A: {sum(len(w.failed) for w in on_a)}"
    )

    # 0 acknowledged writes lost: each in `memories` exactly once.
    stored = Counter(content for (content,) in query_rows(pg_url, "SELECT content FROM memories"))
    acked = [content for writer in writers for content, _ in writer.acked]
    assert len(acked) == len(set(acked))
    assert [c for c in acked if stored[c] != 1] == [], {c: stored[c] for c in acked}

    # One hint job per memory, completed, leased once -- but the job A was running.
    per_memory = Counter(memory_id for memory_id, *_ in final)
    assert [m for m, n in per_memory.items() if n != 1] == [], per_memory
    orphan = prompt_of(calls_a[-1])
    [(orphan_job, orphan_expiry, _)] = [row for row in held if row[2] == orphan]
    attempts = {content: n for _, content, _, _, n, _ in final}
    assert {c: n for c, n in attempts.items() if n != 1} == {orphan: 2}, attempts
    [(_, _, _, _, _, released_at)] = [row for row in final if row[2] == orphan_job]
    assert moment(released_at) >= moment(orphan_expiry), (released_at, orphan_expiry)

    # Every run was one LLM call: calls per memory equal its job's attempts.
    calls = Counter(prompt_of(r) for r in [*calls_a, *llm_b.requests, *llm_a2.requests])
    assert calls == Counter(attempts), calls - Counter(attempts) or Counter(attempts) - calls
    hinted = dict(
        query_rows(pg_url, "SELECT memory_id, COUNT(*) FROM memory_hints GROUP BY memory_id")
    )
    assert {m: hinted.get(m) for m in per_memory if hinted.get(m) != 2} == {}
