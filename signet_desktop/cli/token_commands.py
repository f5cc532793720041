"""`signet token create|list|revoke`: scoped API tokens, through the daemon's admin routes."""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from signet_desktop.cli import output
from signet_desktop.cli.context import CliContext, Subparsers, add_command, add_group, json_option

PERMISSIONS = ("read", "write", "admin")
_DURATION = re.compile(r"(\d+)([smhd]?)")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86_400}
EXAMPLES = """\
  signet token create --name ci-reader --agent default --permission read
  signet token create --name claude-laptop --agent work --permission read --permission write \\
      --ttl 30d
  signet token create --name one-session --agent work --permission write --session
  signet token list
  signet token revoke ci-reader
"""
DESCRIPTION = """\
Scoped bearer tokens for the daemon's HTTP API and /mcp (what team and hybrid modes ask). Each
token holds permissions (read: reads and searches; write: remember, modify, forget, hooks;
admin: pipeline, repair, maintenance, Dreaming runs, tokens) and is bound to one or more
agents: asking for another agent is refused (403 agent_not_allowed), and a request that
names no agent acts for the token's agent when it has exactly one. Tokens expire after
auth.defaultTokenTtlSeconds (session tokens: auth.sessionTokenTtlSeconds) unless --ttl says
otherwise. Managing tokens needs the admin permission: the local user (hybrid/local mode on
loopback) or SIGNET_TOKEN set to auth.token or an admin token."""


def duration(text: str) -> int:
    """`3600`, `90s`, `45m`, `12h` or `30d` as seconds."""
    match = _DURATION.fullmatch(text.strip().lower())
    if not match:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 3600, 45m, 12h, 30d)")
    return int(match[1]) * _UNIT_SECONDS[match[2]]


def register(subparsers: Subparsers) -> None:
    """Add the `token` group to the `signet` parser."""
    commands = add_group(
        subparsers,
        "token",
        help="scoped API tokens: create, list, revoke",
        description=DESCRIPTION,
        examples=EXAMPLES,
    )
    create = add_command(
        commands,
        "create",
        help="issue a token and print its secret (shown this once only)",
        handler=run_create,
    )
    create.add_argument("--name", required=True, help="a unique name (letters, digits, . _ -)")
    create.add_argument(
        "--agent",
        dest="agents",
        action="append",
        required=True,
        metavar="ID",
        help="an agent the token may act for (repeat for several)",
    )
    create.add_argument(
        "--permission",
        dest="permissions",
        action="append",
        required=True,
        choices=PERMISSIONS,
        help="a permission it holds (repeat for several)",
    )
    create.add_argument(
        "--ttl",
        type=duration,
        metavar="DURATION",
        help="lifetime: seconds, or 45m / 12h / 30d (1 minute to 1 year; default "
        "auth.defaultTokenTtlSeconds, or auth.sessionTokenTtlSeconds with --session)",
    )
    create.add_argument(
        "--session",
        action="store_true",
        help="a session token: one harness session's credential, with the session lifetime",
    )
    listing = add_command(
        commands,
        "list",
        help="every token issued: state, permissions, agents (no secrets)",
        handler=run_list,
    )
    revoke = add_command(
        commands,
        "revoke",
        help="revoke a token by id or name (it stops working at once)",
        handler=run_revoke,
    )
    revoke.add_argument("token", metavar="ID_OR_NAME", help="the token's id or name")
    for parser in (create, listing, revoke):
        json_option(parser)


def token_line(token: Mapping[str, Any]) -> list[Any]:
    """One row of `signet token list`."""
    return [
        token.get("name"),
        token.get("state"),
        ",".join(token.get("permissions", [])),
        ",".join(token.get("agents", [])),
        token.get("kind"),
        output.date_part(token.get("expiresAt")),
        token.get("id"),
    ]


def run_create(args: argparse.Namespace, ctx: CliContext) -> int:
    body: dict[str, Any] = {
        "name": args.name,
        "agents": args.agents,
        "permissions": sorted(set(args.permissions)),
        "session": args.session,
    }
    if args.ttl is not None:
        body["ttlSeconds"] = args.ttl
    answer = ctx.request(args, "POST", "/api/tokens", body=body)
    return ctx.emit(args, answer, created_lines)


def created_lines(answer: Mapping[str, Any]) -> list[str]:
    """The new token's name, scope and expiry, then its secret."""
    return [
        f"Created token {answer['name']} ({answer['id']}), expires {answer['expiresAt']}",
        f"  permissions: {', '.join(answer['permissions'])}",
        f"  agents: {', '.join(answer['agents'])}",
        "Secret (shown this once; send it as 'Authorization: Bearer <secret>'):",
        answer["secret"],
    ]


def run_list(args: argparse.Namespace, ctx: CliContext) -> int:
    answer = ctx.request(args, "GET", "/api/tokens")
    return ctx.emit(args, answer, list_lines)


def list_lines(answer: Mapping[str, Any]) -> list[str]:
    """A table of the tokens, or how to create one."""
    headers = ("name", "state", "permissions", "agents", "kind", "expires", "id")
    empty = "No tokens issued (`signet token create --help`)."
    return output.listing(answer.get("tokens", []), headers, token_line, empty)


def run_revoke(args: argparse.Namespace, ctx: CliContext) -> int:
    answer = ctx.request(args, "DELETE", f"/api/tokens/{quote(args.token, safe='')}", body={})
    token = answer["token"]
    text = f"Revoked token {token['name']} ({token['id']}) at {token['revokedAt']}"
    return ctx.emit(args, answer, text)
