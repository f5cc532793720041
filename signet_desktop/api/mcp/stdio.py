"""`signet-mcp`: the MCP server over stdio, a thin client of the running daemon.

A harness starts it as a child process and talks MCP on its stdin/stdout; every tool call is
one HTTP request to the daemon (found as the `signet` CLI finds it). It opens no database and
imports no FastAPI or numpy: the SDK is imported only after the arguments are read, so
`--help` and a bad option answer at once.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any, cast

from signet_desktop import __version__
from signet_desktop.client.daemon import DEFAULT_TIMEOUT_S, DaemonUrlError, resolve_daemon_url

ACTOR_HEADERS = {"x-signet-actor": "mcp", "x-signet-actor-type": "agent"}
EXIT_USAGE = 2

DESCRIPTION = """\
Signet memory tools for MCP clients, over stdio.

Serves Signet's memory tools (memory_search, memory_store, memory_get, memory_list,
memory_modify, memory_forget, memory_feedback, session_search, session_bypass,
knowledge_list_entities, knowledge_get_entity, knowledge_expand), the memory:// resources and
two prompts. Each call goes to the running Signet Desktop daemon over HTTP; when the daemon is
down, calls answer with a tool error saying how to start it, and this server stays up."""

EPILOG = """\
connect a harness (it starts signet-mcp itself; `signet install <harness>` writes these with
this script's absolute path, since a harness does not run from a virtualenv's PATH):
  Claude Code   ~/.claude.json
                  "mcpServers": {"signet": {"type": "stdio", "command": "/path/to/signet-mcp",
                                            "args": ["--url", "http://127.0.0.1:3850"]}}
  Codex         ~/.codex/config.toml
                  [mcp_servers.signet]
                  command = "/path/to/signet-mcp"
                  args = ["--url", "http://127.0.0.1:3850"]
  OpenCode      ~/.config/opencode/opencode.json
                  "mcp": {"signet": {"type": "local", "command": ["/path/to/signet-mcp"],
                                     "enabled": true}}
  Or, without a process, Streamable HTTP at http://127.0.0.1:3850/mcp on the daemon.

environment:
  SIGNET_DAEMON_URL   daemon base URL (else http://$SIGNET_HOST:$SIGNET_PORT,
                      else http://127.0.0.1:3850); --url wins
  SIGNET_AGENT_ID     agent scope of every call (default: the daemon's `default`);
                      --agent wins
  SIGNET_TOKEN        bearer token, when the daemon requires auth.token

exit status:
  0 the client closed stdin   2 bad option or daemon address"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests)."""
    parser = argparse.ArgumentParser(
        prog="signet-mcp",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--url", metavar="URL", help="daemon base URL (see environment)")
    parser.add_argument(
        "--agent", metavar="ID", help="agent scope of every tool call (see SIGNET_AGENT_ID)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"HTTP timeout per call (default {DEFAULT_TIMEOUT_S:g})",
    )
    parser.add_argument("--version", action="version", version=f"signet-mcp {__version__}")
    return parser


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """Parse the options, then serve MCP on stdin/stdout until the client closes it."""
    environ = os.environ if env is None else env
    parser = build_parser()
    args = parser.parse_args(argv)
    if not 0 < args.timeout <= 600:
        parser.error("--timeout must be between 0 and 600 seconds")
    try:
        url = resolve_daemon_url(args.url, environ)
    except DaemonUrlError as exc:
        print(f"signet-mcp: {exc}", file=sys.stderr)
        return EXIT_USAGE
    agent = args.agent or environ.get("SIGNET_AGENT_ID") or None
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    with contextlib.suppress(KeyboardInterrupt):
        serve(url, agent=agent, token=environ.get("SIGNET_TOKEN") or None, timeout=args.timeout)
    return 0


def serve(url: str, *, agent: str | None, token: str | None, timeout: float) -> None:
    """Serve until stdin closes (imports the SDK: the slow part of starting)."""
    import anyio
    import mcp_types as types
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    from signet_desktop.api.mcp.daemon_backend import DaemonBackend
    from signet_desktop.api.mcp.server import build_server
    from signet_desktop.api.mcp.stdin_guard import GuardedStdin
    from signet_desktop.client.daemon import DaemonClient

    client = DaemonClient(
        url, agent_id=agent, token=token, timeout=timeout, user_agent="signet-mcp"
    )
    client.add_headers(ACTOR_HEADERS)
    backend = DaemonBackend(client)
    server = build_server(lambda ctx: backend, version=__version__)

    stdin = GuardedStdin(sys.stdin.buffer)

    async def run() -> None:
        # The guard reads stdin (no size or depth limit in the SDK's reader, and no answer to
        # a line it cannot parse); the SDK still owns stdout.
        async with stdio_server(stdin=cast(Any, stdin)) as (read_stream, write_stream):

            async def reply(error: types.JSONRPCError) -> None:
                with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                    await write_stream.send(SessionMessage(error))

            stdin.attach(reply)
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(run)
    finally:
        client.close()


if __name__ == "__main__":
    sys.exit(main())
