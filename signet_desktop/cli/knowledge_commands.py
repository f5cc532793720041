"""`signet knowledge list|show|stats|add-entity|add-claim|link|archive`, over HTTP.

The knowledge graph: entities (people, projects, systems...), their aspects and claims (a
keyed claim is versioned: a new value supersedes the old one, which stays as history), the
links between entities and the memories that mention them. Every write is an explicit,
attributed operation (`x-signet-actor`, logged in the graph's mutation log).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from signet_desktop.cli import output
from signet_desktop.cli.context import (
    CliContext,
    Subparsers,
    add_command,
    add_group,
    agent_and_json_options,
)

BASE = "/api/knowledge"

EXAMPLES = """\
  signet knowledge list                                   # active entities, most mentioned first
  signet knowledge list --query post --type system
  signet knowledge show 5f2c...                           # aspects, claims, links, mentions
  signet knowledge stats
  signet knowledge add-entity "Postgres 16" --type system --alias PG16
  signet knowledge add-claim 5f2c... deployment "runs on port 5433" --key port
  signet knowledge link 1a2b... 5f2c... maintains         # SOURCE TARGET TYPE
  signet knowledge archive 5f2c... --reason duplicate
"""


def register(subparsers: Subparsers) -> None:
    """Add the `knowledge` group to the `signet` parser."""
    commands = add_group(
        subparsers,
        "knowledge",
        help="the knowledge graph: entities, aspects, claims and links",
        examples=EXAMPLES,
    )

    listing = add_command(commands, "list", help="the agent's entities", handler=run_list)
    listing.add_argument("--query", "-q", help="only names or aliases containing this")
    listing.add_argument("--type", help="only this entity type (person, project, system, ...)")
    listing.add_argument(
        "--status", default="active", help="active (default), archived, merged, unsupported, all"
    )
    listing.add_argument("--limit", type=int, default=50, help="entities to show (1..500)")
    listing.add_argument("--offset", type=int, default=0, help="entities to skip")
    agent_and_json_options(listing)

    show = add_command(commands, "show", help="one entity in full", handler=run_show)
    show.add_argument("entity_id", metavar="ID")
    show.add_argument("--mentions", type=int, default=20, help="mentions to show (1..500)")
    agent_and_json_options(show)

    stats = add_command(commands, "stats", help="counts of the agent's graph", handler=run_stats)
    agent_and_json_options(stats)

    entity = add_command(
        commands,
        "add-entity",
        help="create an entity (or find the existing one)",
        handler=run_add_entity,
    )
    entity.add_argument("name")
    entity.add_argument("--type", default="unknown", help="entity type (default unknown)")
    entity.add_argument("--description")
    entity.add_argument("--alias", action="append", default=[], help="another name (repeatable)")
    agent_and_json_options(entity)

    claim = add_command(
        commands, "add-claim", help="add a claim under an entity's aspect", handler=run_add_claim
    )
    claim.add_argument("entity_id", metavar="ID")
    claim.add_argument("aspect", help="the aspect's name (created if new)")
    claim.add_argument("content", help="the claim")
    claim.add_argument("--key", help="a claim key: a new value supersedes the current one")
    claim.add_argument("--kind", default="attribute", help="attribute, constraint, policy, ...")
    agent_and_json_options(claim)

    link = add_command(commands, "link", help="link two entities", handler=run_link)
    link.add_argument("source_id", metavar="SOURCE")
    link.add_argument("target_id", metavar="TARGET")
    link.add_argument("dependency_type", metavar="TYPE", help="e.g. uses, maintains, part_of")
    link.add_argument("--strength", type=float, default=0.5, help="0..1 (default 0.5)")
    link.add_argument("--reason")
    agent_and_json_options(link)

    archive = add_command(
        commands, "archive", help="archive an entity (kept for history)", handler=run_archive
    )
    archive.add_argument("entity_id", metavar="ID")
    archive.add_argument("--reason")
    agent_and_json_options(archive)


def _entity_path(entity_id: str, *rest: str) -> str:
    return "/".join((f"{BASE}/entities/{quote(entity_id, safe='')}", *rest))


# -- handlers ------------------------------------------------------------------------------


def run_list(args: argparse.Namespace, ctx: CliContext) -> int:
    params: dict[str, Any] = {"status": args.status, "limit": args.limit, "offset": args.offset}
    if args.query:
        params["q"] = args.query
    if args.type:
        params["type"] = args.type
    answer = ctx.request(args, "GET", f"{BASE}/entities", params=params)
    return ctx.emit(args, answer, entity_list_lines)


def run_show(args: argparse.Namespace, ctx: CliContext) -> int:
    params = {"mentionLimit": args.mentions}
    answer = ctx.request(args, "GET", _entity_path(args.entity_id), params=params)
    return ctx.emit(args, answer, entity_detail_lines)


def run_stats(args: argparse.Namespace, ctx: CliContext) -> int:
    return ctx.emit(args, ctx.request(args, "GET", f"{BASE}/stats"), stats_lines)


def run_add_entity(args: argparse.Namespace, ctx: CliContext) -> int:
    body: dict[str, Any] = {"name": args.name, "type": args.type, "aliases": list(args.alias)}
    if args.description:
        body["description"] = args.description
    answer = ctx.request(args, "POST", f"{BASE}/entities", body=body)
    entity = answer["entity"]
    verb = "created" if answer.get("created") else "exists"
    return ctx.emit(
        args, answer, f"{verb} {entity['id']}  {entity['name']} ({entity['entity_type']})"
    )


def run_add_claim(args: argparse.Namespace, ctx: CliContext) -> int:
    body: dict[str, Any] = {"aspect": args.aspect, "content": args.content, "kind": args.kind}
    if args.key:
        body["claim_key"] = args.key
    answer = ctx.request(args, "POST", _entity_path(args.entity_id, "claims"), body=body)
    claim = answer["attribute"]
    version = f" v{claim['version']}" if claim.get("claim_key") else ""
    return ctx.emit(args, answer, f"claim {claim['id']}{version}: {claim['content']}")


def run_link(args: argparse.Namespace, ctx: CliContext) -> int:
    body: dict[str, Any] = {
        "source_entity_id": args.source_id,
        "target_entity_id": args.target_id,
        "dependency_type": args.dependency_type,
        "strength": args.strength,
    }
    if args.reason:
        body["reason"] = args.reason
    answer = ctx.request(args, "POST", f"{BASE}/links", body=body)
    link = answer["dependency"]
    verb = "linked" if answer.get("created") else "already linked"
    line = f"{verb} {link['source_name']} -[{link['dependency_type']}]-> {link['target_name']}"
    return ctx.emit(args, answer, line)


def run_archive(args: argparse.Namespace, ctx: CliContext) -> int:
    body: dict[str, Any] = {"reason": args.reason} if args.reason else {}
    answer = ctx.request(args, "POST", _entity_path(args.entity_id, "archive"), body=body)
    entity = answer["entity"]
    return ctx.emit(args, answer, f"archived {entity['id']}  {entity['name']}")


# -- rendering -----------------------------------------------------------------------------


def entity_list_lines(answer: Mapping[str, Any]) -> list[str]:
    """A table of entities and how many of the total it shows."""
    items = answer.get("items", [])
    headers = ("ID", "NAME", "TYPE", "STATUS", "MENTIONS", "PINNED")
    lines = output.listing(items, headers, _entity_row, "no entities")
    if items:
        shown = answer.get("offset", 0) + len(items)
        lines.append(f"{len(items)} shown ({shown} of {answer.get('total', len(items))})")
    return lines


def _entity_row(entity: Mapping[str, Any]) -> tuple[Any, ...]:
    return (
        entity["id"],
        entity["name"],
        entity["entity_type"],
        entity["status"],
        entity["mentions"],
        "yes" if entity["pinned"] else "",
    )


def entity_detail_lines(answer: Mapping[str, Any]) -> list[str]:
    entity = answer["entity"]
    lines = [
        f"{entity['name']}  ({entity['entity_type']}, {entity['status']})  {entity['id']}",
        f"mentions: {entity['mentions']}  created by {entity['created_by']} "
        f"{output.date_part(entity['created_at'])}",
    ]
    if entity.get("description"):
        lines.append(output.one_line(entity["description"]))
    aliases = [a["alias"] for a in answer.get("aliases", [])]
    if aliases:
        lines.append("aliases: " + ", ".join(aliases))
    for aspect in answer.get("aspects", []):
        lines.append(
            f"[{aspect['name']}]"
            + ("" if aspect["status"] == "active" else f" ({aspect['status']})")
        )
        for claim in aspect.get("attributes", []):
            key = f"{claim['claim_key']} = " if claim.get("claim_key") else ""
            tag = (
                "" if claim["status"] == "active" else f"  ({claim['status']}, v{claim['version']})"
            )
            lines.append(f"  - {key}{output.one_line(claim['content'])}{tag}")
    links = answer.get("dependencies", {})
    for link in links.get("outgoing", []):
        lines.append(f"-> {link['dependency_type']} {link['target_name']}  ({link['status']})")
    for link in links.get("incoming", []):
        lines.append(f"<- {link['dependency_type']} {link['source_name']}  ({link['status']})")
    mentions = answer.get("mentions", [])
    if mentions:
        lines.append(f"mentioned by {answer.get('mention_total', len(mentions))} memories:")
        for mention in mentions:
            who = f" ({mention['who']})" if mention.get("who") else ""
            lines.append(
                f"  {mention['memory_id']}  {output.date_part(mention['memory_created_at'])}{who}  "
                f"{output.one_line(mention['excerpt'])}"
            )
    return lines


def stats_lines(answer: Mapping[str, Any]) -> list[str]:
    by_status = ", ".join(
        f"{n} {s}" for s, n in sorted(answer.get("entities_by_status", {}).items())
    )
    by_type = ", ".join(f"{n} {t}" for t, n in sorted(answer.get("entity_types", {}).items()))
    claims = ", ".join(
        f"{n} {s}" for s, n in sorted(answer.get("attributes_by_status", {}).items())
    )
    return [
        f"entities: {answer.get('entities', 0)}" + (f" ({by_status})" if by_status else ""),
        f"types: {by_type or 'none'}",
        f"aspects: {answer.get('aspects', 0)}  claims: {answer.get('attributes', 0)}"
        + (f" ({claims})" if claims else ""),
        f"links: {answer.get('dependencies', 0)}  mentions: {answer.get('mentions', 0)}  "
        f"mutations: {answer.get('mutations', 0)}",
    ]
