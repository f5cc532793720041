"""Smoke-test a built one-folder app: `--version`, then `--headless` answering `/health`.

Usage: python packaging/smoke.py dist/signet-desktop   (needs numpy; exit 0 when all pass)

Checks, in order: `signet-desktop --version` and `signet --version` (the symlink) print the
package version; `signet-desktop --headless --port 0 --workspace <tmp>` prints its listening
line, answers `/health`, applies the migrations, loads the embedding model (the start-up
warm-up reports done), embeds and recalls a memory through the frozen `signet` CLI, and stops
with exit 0 on SIGTERM; then the desktop (tray) mode starts under the offscreen Qt platform,
answers `/health` and stops with exit 0; last the map's UMAP worker runs as a child of the
frozen executable (`-m`) on a small matrix.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

LISTENING_PREFIX = "Signet Desktop listening on "
START_TIMEOUT = 60.0
WARM_UP_TIMEOUT = 120.0


def fail(message: str) -> None:
    print(f"FAIL {message}", flush=True)
    sys.exit(1)


def ok(message: str) -> None:
    print(f"ok   {message}", flush=True)


def check_version(program: Path) -> None:
    result = subprocess.run([str(program), "--version"], capture_output=True, text=True, timeout=60)
    text = (result.stdout + result.stderr).strip()
    if result.returncode != 0 or "unknown" in text or not any(c.isdigit() for c in text):
        fail(f"{program.name} --version: exit {result.returncode}: {text!r}")
    ok(f"{program.name} --version: {text}")


def get_json(url: str) -> dict[str, object]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return dict(json.load(response))


def wait_listening(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            fail(f"daemon exited {proc.wait()} before listening")
        if line.startswith(LISTENING_PREFIX):
            return line.removeprefix(LISTENING_PREFIX).split(" ")[0]
    fail(f"no listening line within {START_TIMEOUT:.0f}s")
    raise AssertionError  # unreachable


def wait_warm(url: str) -> dict[str, object]:
    deadline = time.monotonic() + WARM_UP_TIMEOUT
    while time.monotonic() < deadline:
        status = get_json(f"{url}/api/status")
        startup = status.get("startup")
        states = (
            {n: t.get("state") for n, t in startup.items()} if isinstance(startup, dict) else {}
        )
        if states and all(state in {"done", "failed"} for state in states.values()):
            failed = {n: startup[n] for n, s in states.items() if s == "failed"}  # type: ignore[index]
            if failed:
                fail(f"start-up tasks failed: {failed}")
            ok(f"start-up tasks done: {', '.join(states)}")
            return status
        time.sleep(0.5)
    fail(f"start-up tasks still running after {WARM_UP_TIMEOUT:.0f}s")
    raise AssertionError  # unreachable


MEMORIES = (
    "billing runs on Postgres 16 with logical replication",
    "the deploy pipeline uses GitHub Actions and Argo CD",
    "alice owns the on-call rotation for the payments team",
)


def wait_embedded(url: str, count: int) -> None:
    """The vectors follow the acknowledged remember: wait until the model embedded them."""
    deadline = time.monotonic() + WARM_UP_TIMEOUT
    coverage: object = None
    while time.monotonic() < deadline:
        embedding = get_json(f"{url}/api/status").get("embedding")
        coverage = embedding.get("coverage") if isinstance(embedding, dict) else None
        if isinstance(coverage, dict) and coverage.get("embedded", 0) >= count:
            ok(f"embedded by the bundled model: {coverage}")
            return
        time.sleep(0.5)
    fail(f"memories not embedded: coverage {coverage}")


def run_cli(cli: Path, url: str, *args: str) -> str:
    env = {**os.environ, "SIGNET_DAEMON_URL": url}
    result = subprocess.run([str(cli), *args], capture_output=True, text=True, env=env, timeout=60)
    if result.returncode != 0:
        fail(f"signet {' '.join(args)}: exit {result.returncode}: {result.stderr.strip()}")
    return result.stdout


def check_daemon(program: Path, cli: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="signet-smoke-") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SIGNET_", "QT_"))}
        env.update(HOME=tmp, PYTHONUNBUFFERED="1")
        started = time.monotonic()
        proc = subprocess.Popen(
            [str(program), "--headless", "--port", "0", "--workspace", f"{tmp}/ws"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        try:
            url = wait_listening(proc)
            health = get_json(f"{url}/health")
            if health.get("status") not in {"ok", "healthy"}:
                fail(f"/health: {health}")
            ok(f"/health at {url} in {time.monotonic() - started:.1f}s: {health.get('status')}")
            status = wait_warm(url)
            database = status.get("database")
            migrations = database.get("migrations") if isinstance(database, dict) else None
            if not migrations:
                fail(f"no migrations applied: {database}")
            ok(f"database migrated ({migrations} migrations)")
            for text in MEMORIES:
                run_cli(cli, url, "remember", text)
            wait_embedded(url, len(MEMORIES))
            answer = json.loads(
                run_cli(cli, url, "recall", "which database does billing use", "--json")
            )
            hits = answer.get("results") or []
            if not hits or "Postgres" not in str(hits[0].get("content")):
                fail(f"recall did not rank the billing memory first: {answer}")
            method = answer.get("method")
            ok(f"remember + recall through the frozen CLI ({method}, {len(hits)} hits)")
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            code = proc.wait(30)
        if code != 0:
            fail(f"daemon exit {code} after SIGTERM")
        ok("SIGTERM: clean stop (exit 0)")


def check_desktop(program: Path) -> None:
    """The tray app's path: Qt, its platform plugins and the shell load from the bundle."""
    with tempfile.TemporaryDirectory(prefix="signet-smoke-gui-") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SIGNET_", "QT_"))}
        env.update(HOME=tmp, PYTHONUNBUFFERED="1", QT_QPA_PLATFORM="offscreen")
        errors = Path(tmp) / "stderr.txt"
        with errors.open("w") as stderr:
            proc = subprocess.Popen(
                [str(program), "--port", "0", "--workspace", f"{tmp}/ws"],
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                env=env,
            )
            try:
                url = wait_listening(proc)
                health = get_json(f"{url}/health")
                if health.get("status") not in {"ok", "healthy"}:
                    fail(f"desktop /health: {health}")
                time.sleep(2)  # the window builds its first pane once the loop runs
            finally:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
                code = proc.wait(30)
        text = errors.read_text()
        if code != 0 or "Traceback" in text or "could not open" in text:
            fail(f"desktop mode: exit {code}: {text[-2000:]}")
        ok("desktop mode (offscreen Qt): window, /health, exit 0 on SIGTERM")


def check_umap_worker(program: Path) -> None:
    """The map's UMAP child process (`-m signet_desktop.projection.umap_worker`) runs frozen."""
    import numpy as np  # the smoke test runs under the project's environment

    with tempfile.TemporaryDirectory(prefix="signet-smoke-umap-") as tmp:
        source, target = Path(tmp) / "in.npy", Path(tmp) / "out.npz"
        np.save(source, np.random.default_rng(7).normal(size=(60, 16)).astype(np.float32))
        started = time.monotonic()
        result = subprocess.run(
            [str(program), "-m", "signet_desktop.projection.umap_worker", str(source), str(target)],
            capture_output=True,
            text=True,
            timeout=WARM_UP_TIMEOUT * 2,
        )
        if result.returncode != 0 or not target.exists():
            fail(
                f"UMAP worker: exit {result.returncode}: {(result.stdout + result.stderr)[-2000:]}"
            )
        coords = np.load(target)["coords"]
        if coords.shape != (60, 2):
            fail(f"UMAP worker wrote coordinates of shape {coords.shape}")
        ok(f"UMAP worker (-m, numba) on 60 points in {time.monotonic() - started:.1f}s")


def main() -> int:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "dist/signet-desktop")
    program, cli = folder / "signet-desktop", folder / "signet"
    for path in (program, cli):
        if not path.exists():
            fail(f"{path} missing (run packaging/build.sh)")
    check_version(program)
    check_version(cli)
    check_daemon(program, cli)
    check_desktop(program)
    check_umap_worker(program)
    print("smoke test passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
