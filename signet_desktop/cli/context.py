"""What every command handler receives, exit codes, and the helpers that declare commands.

A command group is one module with a `register(subparsers)` function; a group is declared with
`add_group(...)`, each leaf command with `add_command(...)` and `handler=` a function
`(args, ctx) -> int`. A typical handler is one `ctx.request(...)` and one `ctx.emit(...)`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, TextIO

from signet_desktop.cli import output
from signet_desktop.client.daemon import DEFAULT_TIMEOUT_S, DaemonClient, resolve_daemon_url


class ExitCode(IntEnum):
    """The `signet` command's exit statuses."""

    OK = 0
    FAILURE = 1  # the daemon refused or failed, or a doctor check failed
    USAGE = 2  # bad arguments or input; nothing was sent (or the daemon said 4xx)
    UNREACHABLE = 3  # no daemon at the resolved URL


class CliUsageError(Exception):
    """Bad input caught before anything is sent; printed as one line, exit 2."""


Text = str | Sequence[str]
Rendering = Text | Callable[[Any], Text]


@dataclass(slots=True)
class CliContext:
    """Environment and streams for one invocation; tests pass their own."""

    env: Mapping[str, str]
    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    stdin: TextIO = field(default_factory=lambda: sys.stdin)

    def daemon_url(self, args: argparse.Namespace) -> str:
        """The daemon base URL for this invocation."""
        return resolve_daemon_url(getattr(args, "url", None), self.env)

    def client(self, args: argparse.Namespace) -> DaemonClient:
        """A DaemonClient with the agent header (from `--agent`) and SIGNET_TOKEN, if any."""
        timeout = getattr(args, "timeout", None) or DEFAULT_TIMEOUT_S
        return DaemonClient(
            self.daemon_url(args),
            agent_id=getattr(args, "agent", None) or None,
            token=self.env.get("SIGNET_TOKEN") or None,
            timeout=timeout,
        )

    def request(
        self,
        args: argparse.Namespace,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> Any:
        """One call to the daemon on a client of its own; the decoded JSON answer."""
        with self.client(args) as client:
            return client.request(method, path, params=params, body=body)

    def emit(self, args: argparse.Namespace, answer: Any, render: Rendering) -> int:
        """Print `answer` as JSON with `--json`, else its rendering; returns ExitCode.OK.

        `render` is text, lines, or a function of the answer giving either (called only
        without `--json`, so a reply the text cannot show still prints as JSON)."""
        if args.json:
            self.print(output.to_json_text(answer))
            return ExitCode.OK
        text = render(answer) if callable(render) else render
        self.print(text if isinstance(text, str) else "\n".join(text))
        return ExitCode.OK

    def print(self, text: str = "") -> None:
        """A line to stdout."""
        print(text, file=self.out)

    def warn(self, text: str) -> None:
        """A line to stderr."""
        print(text, file=self.err)


Handler = Callable[[argparse.Namespace, CliContext], int]
Subparsers = Any  # argparse._SubParsersAction has no public name


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= 600:
        raise argparse.ArgumentTypeError("must be between 0 and 600 seconds")
    return value


def connection_options() -> argparse.ArgumentParser:
    """`--url` and `--timeout`, accepted both before and after the subcommand name.

    Defaults are SUPPRESS so a subcommand's parser never overwrites a value the top-level
    parser already set (argparse copies subparser defaults over the namespace).
    """
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("daemon connection")
    group.add_argument(
        "--url",
        default=argparse.SUPPRESS,
        metavar="URL",
        help="daemon base URL (default: $SIGNET_DAEMON_URL, else "
        "http://$SIGNET_HOST:$SIGNET_PORT, else http://127.0.0.1:3850)",
    )
    group.add_argument(
        "--timeout",
        type=_positive_seconds,
        default=argparse.SUPPRESS,
        metavar="SECONDS",
        help=f"HTTP timeout (default {DEFAULT_TIMEOUT_S:g})",
    )
    return parent


def agent_option(parser: argparse.ArgumentParser) -> None:
    """`--agent ID`: the agent scope a command reads and writes."""
    parser.add_argument(
        "--agent", metavar="ID", help="agent scope (default: the daemon's `default` agent)"
    )


def json_option(parser: argparse.ArgumentParser) -> None:
    """`--json`: print the daemon's answer as it came."""
    parser.add_argument("--json", action="store_true", help="print the daemon's raw JSON answer")


def agent_and_json_options(parser: argparse.ArgumentParser) -> None:
    """`--agent` and `--json`: the options of every command over an agent's data."""
    agent_option(parser)
    json_option(parser)


def add_command(
    subparsers: Subparsers,
    name: str,
    *,
    help: str,
    description: str | None = None,
    examples: str | None = None,
    handler: Handler | None = None,
    connects: bool = True,
) -> argparse.ArgumentParser:
    """Declare one subcommand with the house help format (description, examples, options)."""
    epilog = f"examples:\n{examples.rstrip()}" if examples else None
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help=help,
        description=description or help,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[connection_options()] if connects else [],
    )
    if handler is not None:
        parser.set_defaults(handler=handler)
    return parser


def add_group(
    subparsers: Subparsers,
    name: str,
    *,
    help: str,
    description: str | None = None,
    examples: str | None = None,
    dest: str | None = None,
    metavar: str = "COMMAND",
) -> Subparsers:
    """Declare `signet NAME COMMAND ...` and return the subparsers its commands go in.

    The chosen command lands in `dest` (default `<name>_command`)."""
    group = add_command(
        subparsers, name, help=help, description=description, examples=examples, connects=False
    )
    return group.add_subparsers(
        dest=dest or f"{name.replace('-', '_')}_command", metavar=metavar, required=True
    )
