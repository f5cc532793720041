"""`signet secret list|put|set|has|delete`: an agent's secrets through `/api/secrets`.

Signet's commands and routes: names are listed, a value goes in and never comes back out.
`put` reads the value from a hidden prompt, or from stdin when it is piped (one trailing
newline dropped); a VALUE argument is accepted as Signet's CLI accepts one, with a warning
that it lands in the shell's history.
"""

from __future__ import annotations

import argparse
import getpass
from urllib.parse import quote

from signet_desktop.cli.context import (
    CliContext,
    CliUsageError,
    ExitCode,
    Subparsers,
    add_command,
    add_group,
    agent_option,
    json_option,
)

EXAMPLES = """\
  signet secret put OPENAI_API_KEY            # prompts for the value (hidden)
  printf %s "$KEY" | signet secret put OPENAI_API_KEY
  signet secret list
  signet secret has OPENAI_API_KEY
  signet secret delete OPENAI_API_KEY
"""
DESCRIPTION = """\
Secrets the daemon uses and never shows: `$secret:NAME` in agent.yaml (an inference account's
apiKey) resolves to the default agent's secret NAME. Values are stored owner-only under the
workspace's .secrets/ and no command or route prints one. Listing needs the read permission;
storing and deleting need admin (the local user has it)."""


def register(subparsers: Subparsers) -> None:
    """Add the `secret` group to the `signet` parser."""
    commands = add_group(
        subparsers,
        "secret",
        help="secrets for providers: list, put, has, delete (values are never shown)",
        description=DESCRIPTION,
        examples=EXAMPLES,
    )
    listing = add_command(commands, "list", help="the secret names", handler=run_list)
    json_option(listing)
    parsers = [listing]
    for name in ("put", "set"):  # `set` as the spelling; `put` is Signet's
        put = add_command(
            commands,
            name,
            help="store a secret (prompted, or read from piped stdin)",
            handler=run_put,
        )
        put.add_argument("name", help="e.g. OPENAI_API_KEY (letters, digits, _)")
        put.add_argument(
            "value", nargs="?", help="the value (avoid: it stays in your shell history)"
        )
        parsers.append(put)
    has = add_command(
        commands, "has", help="print true or false (exit 1 when absent)", handler=run_has
    )
    delete = add_command(commands, "delete", help="delete a secret", handler=run_delete)
    for parser in (has, delete):
        parser.add_argument("name")
    for parser in (*parsers, has, delete):
        agent_option(parser)


def _path(name: str) -> str:
    return f"/api/secrets/{quote(name, safe='')}"


def _names(args: argparse.Namespace, ctx: CliContext) -> list[str]:
    answer = ctx.request(args, "GET", "/api/secrets")
    return [str(name) for name in answer.get("secrets", [])]


def run_list(args: argparse.Namespace, ctx: CliContext) -> int:
    names = _names(args, ctx)
    return ctx.emit(
        args, {"secrets": names}, names or "No secrets stored (`signet secret put NAME`)."
    )


def read_value(args: argparse.Namespace, ctx: CliContext) -> str:
    """The value: the argument, piped stdin, or a hidden prompt."""
    if args.value is not None:
        ctx.warn("warning: a value given as an argument stays in your shell history")
        return str(args.value)
    if not ctx.stdin.isatty():
        text = ctx.stdin.read()
        return text[:-1] if text.endswith("\n") else text
    return getpass.getpass(f"Value for {args.name}: ", stream=ctx.err)


def run_put(args: argparse.Namespace, ctx: CliContext) -> int:
    value = read_value(args, ctx)
    if not value:
        raise CliUsageError("the value is empty; nothing was stored")
    answer = ctx.request(args, "POST", _path(args.name), body={"value": value})
    verb = "stored" if answer.get("created") else "replaced"
    ctx.print(f"Secret {answer['name']} {verb}.")
    return ExitCode.OK


def run_has(args: argparse.Namespace, ctx: CliContext) -> int:
    present = args.name in _names(args, ctx)
    ctx.print("true" if present else "false")
    return ExitCode.OK if present else ExitCode.FAILURE


def run_delete(args: argparse.Namespace, ctx: CliContext) -> int:
    answer = ctx.request(args, "DELETE", _path(args.name), body={})
    ctx.print(f"Secret {answer['name']} deleted.")
    return ExitCode.OK
