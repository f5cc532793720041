"""`signet ingest <url|file|->` and `signet documents list|show|delete`, over HTTP.

`ingest` posts /api/documents (a URL, an absolute file path, or `-` for text on stdin) and
follows the document (GET /api/documents/{id}) on stderr, one line per state, until it is
`done`, `failed` or `deleted`; `--no-wait` prints the id and returns at once. A document the
agent already has is reported as such (`deduplicated`) and followed like a new one.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from signet_desktop.cli import output
from signet_desktop.cli.context import (
    CliContext,
    ExitCode,
    Subparsers,
    add_command,
    add_group,
    agent_and_json_options,
)
from signet_desktop.client.daemon import DaemonClient

DOCUMENTS_PATH = "/api/documents"
FINAL = frozenset({"done", "failed", "deleted"})

INGEST_EXAMPLES = """\
  signet ingest https://example.com/guide.html   # fetched, HTML reduced to text
  signet ingest ~/notes/design.md --title Design  # text, Markdown, HTML or PDF files
  git log -50 | signet ingest - --title "recent commits"
  signet ingest report.pdf --no-wait              # print the id and return
"""
DOCUMENTS_EXAMPLES = """\
  signet documents list --status failed
  signet documents show doc_0123...
  signet documents delete doc_0123... --reason "superseded"
"""


def register(subparsers: Subparsers) -> None:
    """Add `ingest` and the `documents` group to the `signet` parser."""
    ingest = add_command(
        subparsers,
        "ingest",
        help="turn a URL or a file into searchable document chunks",
        description="Queue a document for ingest: it is fetched or read, reduced to text,\n"
        "split into chunks and each chunk stored as a `document_chunk` memory. Progress is\n"
        "printed until the document is done (or failed).",
        examples=INGEST_EXAMPLES,
        handler=run_ingest,
    )
    ingest.add_argument("target", help="an http(s) URL, a file path, or - for text on stdin")
    ingest.add_argument("--title", help="the document's title (default: found in it)")
    ingest.add_argument("--content-type", help="read a file as this type (e.g. text/markdown)")
    ingest.add_argument("--project", help="the project the chunks belong to")
    ingest.add_argument("--no-wait", action="store_true", help="queue it and print the id")
    agent_and_json_options(ingest)
    commands = add_group(
        subparsers,
        "documents",
        help="list, inspect and delete ingested documents",
        description="Documents are what `signet ingest` (or POST /api/documents) queued.",
        examples=DOCUMENTS_EXAMPLES,
    )
    listing = add_command(commands, "list", help="the agent's documents", handler=run_list)
    listing.add_argument("--status", help="only documents in this state (e.g. failed)")
    listing.add_argument("--limit", type=int, default=50, help="at most this many (≤ 500)")
    agent_and_json_options(listing)
    show = add_command(commands, "show", help="a document, its state and chunks", handler=run_show)
    show.add_argument("document_id", metavar="ID")
    agent_and_json_options(show)
    delete = add_command(
        commands,
        "delete",
        help="delete a document and soft-delete its chunk memories",
        handler=run_delete,
    )
    delete.add_argument("document_id", metavar="ID")
    delete.add_argument("--reason", help="why (kept in the chunks' history)")
    agent_and_json_options(delete)


# -- handlers ------------------------------------------------------------------------------


def ingest_body(args: argparse.Namespace, ctx: CliContext) -> dict[str, Any]:
    """The POST body for `target`: a URL, `-` (stdin text) or a file made absolute."""
    target: str = args.target
    body: dict[str, Any]
    if target.startswith(("http://", "https://")):
        body = {"source_type": "url", "url": target}
    elif target == "-":
        body = {"source_type": "text", "content": ctx.stdin.read()}
    else:
        body = {"source_type": "file", "path": str(Path(target).expanduser().absolute())}
    for key in ("title", "content_type", "project"):
        value = getattr(args, key, None)
        if value:
            body[key] = value
    return body


def run_ingest(args: argparse.Namespace, ctx: CliContext) -> int:
    with ctx.client(args) as client:
        ticket = client.post(DOCUMENTS_PATH, ingest_body(args, ctx))
        if ticket.get("deduplicated"):
            ctx.warn(f"already ingested as {ticket['id']} ({ticket['status']})")
        if args.no_wait:
            return ctx.emit(args, ticket, lambda ticket: str(ticket["id"]))
        document = follow(client, ctx, ticket["id"], lines=not args.json)
    ctx.emit(args, document, summary_line)
    return ExitCode.OK if document.get("status") == "done" else ExitCode.FAILURE


def follow(
    client: DaemonClient, ctx: CliContext, document_id: str, *, lines: bool
) -> Mapping[str, Any]:
    """Poll until the document is done, failed (an attempt failed) or deleted; a line per state."""
    last = ""
    for document, elapsed in client.poll(f"{DOCUMENTS_PATH}/{document_id}"):
        status = str(document.get("status"))
        if lines and status != last:
            ctx.warn(f"{status} · {elapsed:.1f} s")
        last = status
        if status in FINAL:
            return document
    raise AssertionError("poll() never ends")


def summary_line(document: Mapping[str, Any]) -> str:
    """`done: 12 chunks from "Title" (doc_…)`, or the failure and whether it will be retried."""
    status = document.get("status")
    ident = document.get("id")
    if status == "done":
        title = document.get("title") or document.get("source_url") or "untitled"
        return f'done: {document.get("chunk_count", 0)} chunks from "{title}" ({ident})'
    if status == "deleted":
        return f"deleted while it was ingested ({ident})"
    job = document.get("job") or {}
    attempts, budget = job.get("attempts", 0), job.get("max_attempts", 0)
    retry = (
        f"; attempt {attempts} of {budget}, retried at {job.get('retry_at')}"
        if job.get("status") == "pending"
        else f"; gave up after {attempts} attempts"
    )
    return f"failed: {document.get('error')}{retry} ({ident})"


def run_list(args: argparse.Namespace, ctx: CliContext) -> int:
    params: dict[str, Any] = {"limit": args.limit}
    if args.status:
        params["status"] = args.status
    answer = ctx.request(args, "GET", DOCUMENTS_PATH, params=params)
    return ctx.emit(args, answer, document_list_lines)


def document_list_lines(answer: Mapping[str, Any]) -> list[str]:
    """A table of the documents, or `no documents`."""
    headers = ("id", "status", "chunks", "title", "created")
    return output.listing(answer.get("documents", []), headers, _document_row, "no documents")


def _document_row(document: Mapping[str, Any]) -> tuple[Any, ...]:
    return (
        document["id"],
        document["status"],
        document["chunk_count"],
        output.one_line(document.get("title") or document.get("source_url") or "", 40),
        output.date_part(document["created_at"]),
    )


def run_show(args: argparse.Namespace, ctx: CliContext) -> int:
    path = f"{DOCUMENTS_PATH}/{args.document_id}"
    with ctx.client(args) as client:
        document = client.get(path)
        chunks = client.get(f"{path}/chunks", {"limit": 20}).get("chunks", [])
    return ctx.emit(args, {**document, "chunks": chunks}, document_lines)


def document_lines(document: Mapping[str, Any]) -> list[str]:
    """A document's state, source and job, then a line per chunk."""
    lines = [
        f"{document['id']}  {document['status']}  {document['source_type']}",
        f"title: {document.get('title') or '-'}",
    ]
    if document.get("source_url"):
        lines.append(f"source: {document['source_url']}")
    lines.append(f"chunks: {document['chunk_count']} · type: {document.get('content_type') or '-'}")
    if document.get("error"):
        lines.append(f"error: {document['error']}")
    job = document.get("job")
    if job:
        lines.append(f"job: {job['status']} · attempt {job['attempts']} of {job['max_attempts']}")
    for chunk in document["chunks"]:
        lines.append(
            f"  #{chunk['chunk_index']} {chunk['id']}  {output.one_line(chunk['content'])}"
        )
    return lines


def run_delete(args: argparse.Namespace, ctx: CliContext) -> int:
    params = {"reason": args.reason} if args.reason else {}
    answer = ctx.request(args, "DELETE", f"{DOCUMENTS_PATH}/{args.document_id}", params=params)
    return ctx.emit(args, answer, deleted_line)


def deleted_line(answer: Mapping[str, Any]) -> str:
    """`deleted doc_… (12 chunk memories soft-deleted)`."""
    return f"deleted {answer['id']} ({answer['memories_deleted']} chunk memories soft-deleted)"
