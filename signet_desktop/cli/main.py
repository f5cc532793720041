"""The `signet` command: parser assembly, dispatch, and the mapping of failures to exit codes.

Adding a command group = writing a module with `register(subparsers)` and listing it in
COMMAND_GROUPS. Handlers return an exit code; the failures they raise are mapped here:
bad input -> 2, daemon 4xx -> 2, daemon 5xx/429 -> 1, daemon unreachable -> 3. No traceback
reaches the user for any of them.
"""

from __future__ import annotations

import sys

if sys.argv[1:2] == ["hook"]:  # `signet hook` runs before the imports below: it stays light
    from signet_desktop.cli.hook import dispatch_early

    dispatch_early(sys.argv)

import argparse
import os
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata

from signet_desktop.cli import (
    dream_commands,
    embed_commands,
    hook,
    import_commands,
    ingest_commands,
    install_commands,
    knowledge_commands,
    memory_commands,
    memory_md_commands,
    ontology_commands,
    repair_commands,
    secret_commands,
    session_commands,
    source_commands,
    status_commands,
    storage_commands,
    token_commands,
)
from signet_desktop.cli.context import (
    CliContext,
    CliUsageError,
    ExitCode,
    Subparsers,
    connection_options,
)
from signet_desktop.client.daemon import DaemonResponseError, DaemonUnreachable, DaemonUrlError

COMMAND_GROUPS: tuple[Callable[[Subparsers], None], ...] = (
    memory_commands.register,
    session_commands.register,
    memory_md_commands.register,
    status_commands.register,
    embed_commands.register,
    repair_commands.register,
    hook.register,
    install_commands.register,
    import_commands.register,
    ingest_commands.register,
    source_commands.register,
    ontology_commands.register,
    knowledge_commands.register,
    dream_commands.register,
    token_commands.register,
    secret_commands.register,
    storage_commands.register,
)

# What a CLI user does about a daemon error code (the daemon speaks in HTTP field names).
CODE_HINTS = {
    "pinned_requires_force": "add --force to forget a pinned memory",
    "connector_exists": "that folder is already connected; see `signet source list`",
    "version_conflict": "the memory changed; see `signet memory get ID` for its current version",
    "embedder_unavailable": "memories stay saved; the daemon embeds them once the embedder is"
    " back (or run `signet embed backfill` again)",
    "no_embedder": "set embedding.provider in agent.yaml and restart the daemon",
    "vec_unavailable": "the daemon could not load sqlite-vec; see `signet doctor`",
    "memory_md_unwritable": "make the path writable (or free disk space) and run"
    " `signet memory-md rebuild` again; the previous MEMORY.md is unchanged",
}

DESCRIPTION = """\
Signet Desktop command line: a thin client of the running daemon
(`signet-desktop --headless` or the tray app) on http://127.0.0.1:3850."""

EPILOG = """\
examples:
  signet remember "The billing service uses Postgres 16"
  signet recall "billing database" --json
  signet memory history <id>
  signet status
  signet doctor
  signet embed audit
  signet repair resync-vec --dry-run
  signet repair queue requeue --apply
  signet import claude-code
  signet sources list
  signet token create --name ci --agent default --permission read
  signet storage migrate --to postgresql://localhost/signet

environment:
  SIGNET_DAEMON_URL   daemon base URL (overrides SIGNET_HOST/SIGNET_PORT)
  SIGNET_HOST         daemon host (default 127.0.0.1)
  SIGNET_PORT         daemon port (default 3850)
  SIGNET_TOKEN        bearer token, when the daemon requires one (auth.token or a scoped
                      token from `signet token create`)
  SIGNET_WORKSPACE    workspace directory for `signet doctor` (default ~/.agents)

exit status: 0 ok, 1 failure, 2 bad input (or refused by the daemon), 3 daemon not running"""


def version_text() -> str:
    """`signet <version>` from the installed distribution."""
    try:
        version = metadata.version("signet-desktop")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return f"signet {version} (signet-desktop)"


def build_parser() -> argparse.ArgumentParser:
    """The full `signet` parser with every registered command group."""
    parser = argparse.ArgumentParser(
        prog="signet",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[connection_options()],
    )
    parser.add_argument("--version", action="version", version=version_text())
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register in COMMAND_GROUPS:
        register(subparsers)
    return parser


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return ExitCode.OK
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return ExitCode.FAILURE


def run(args: argparse.Namespace, ctx: CliContext, parser: argparse.ArgumentParser) -> int:
    """Dispatch to the handler and translate failures into a message and an exit code."""
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(ctx.err)
        return ExitCode.USAGE
    try:
        return int(handler(args, ctx))
    except (CliUsageError, DaemonUrlError) as exc:
        ctx.warn(f"signet: {exc}")
        return ExitCode.USAGE
    except DaemonUnreachable as exc:
        ctx.warn(exc.user_message())
        return ExitCode.UNREACHABLE
    except DaemonResponseError as exc:
        ctx.warn(exc.user_message())
        if exc.code in CODE_HINTS:
            ctx.warn(f"hint: {CODE_HINTS[exc.code]}")
        return ExitCode.USAGE if exc.is_input_error else ExitCode.FAILURE
    except KeyboardInterrupt:
        ctx.warn("interrupted")
        return 130
    except BrokenPipeError:
        # `signet recall ... | head`: the reader left; not an error worth a traceback.
        _silence_stdout()
        return ExitCode.OK


def _silence_stdout() -> None:
    # Python flushes stdout at exit; point it at /dev/null so that flush cannot fail again.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """Entry point of the `signet` script; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors
        return _exit_code(exc)
    ctx = CliContext(env=os.environ if env is None else env)
    return run(args, ctx, parser)


if __name__ == "__main__":
    sys.exit(main())
