"""Harness transcript files -> conversation turns (user/assistant text; no tool traces).

Claude Code and Codex write one JSON object per line and append while a session is live, so
a last line may be torn: a line that does not parse is skipped and counted, never fatal.
Tool calls, tool results, thinking, bookkeeping lines and the harness's own records
(`claude_code_records`, `codex_records`) are not conversation and stay out (the spec keeps
raw tool traces out of the semantic projection).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.sessions import Turn
from signet_desktop.evidence import claude_code_records, codex_records
from signet_desktop.evidence.turn_reading import text_of, turn_id
from signet_desktop.safety import local_files

MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ParsedTranscript:
    """The turns of one transcript and how many lines could not be read."""

    turns: list[Turn]
    skipped_lines: int


def check_transcript_path(raw: object) -> Path:
    """`raw` as an absolute transcript path (`~` expanded), or InvalidInput."""
    if not isinstance(raw, str) or not raw.strip() or "\x00" in raw:
        raise InvalidInput("transcriptPath must be a file path", code="transcript_path_invalid")
    path = Path(raw).expanduser()
    if not path.is_absolute():
        raise InvalidInput("transcriptPath must be absolute", code="transcript_path_invalid")
    return path


def open_transcript(path: Path, roots: Sequence[Path]) -> BinaryIO:
    """The transcript file, opened and then checked on its descriptor: inside `roots`, not a
    credential store (Forbidden `path_not_allowed` / `path_credential_store`), a regular file
    (`transcript_not_found`), at most MAX_TRANSCRIPT_BYTES (`transcript_too_large`)."""
    try:
        handle = local_files.open_file(str(path), roots, field="transcriptPath")
    except InvalidInput as exc:
        if exc.code == "path_invalid":
            raise InvalidInput(exc.message, code="transcript_path_invalid") from None
        raise InvalidInput(
            "transcriptPath is not a readable file", code="transcript_not_found"
        ) from None
    size = os.fstat(handle.fileno()).st_size
    if size > MAX_TRANSCRIPT_BYTES:
        handle.close()
        raise InvalidInput(
            f"transcript is {size / 2**20:.0f} MB; the limit is {MAX_TRANSCRIPT_BYTES // 2**20} MB",
            code="transcript_too_large",
        )
    return handle


@dataclass(frozen=True, slots=True)
class JsonlLines:
    """The JSON objects of a JSONL file with the byte offset of each, and what was skipped."""

    records: list[dict[str, Any]]
    offsets: list[int]
    skipped: int
    complete_end: int  # bytes covered by lines that were read (a torn tail lies past it)


def read_jsonl(source: Path | BinaryIO) -> JsonlLines:
    """Every line that is a JSON object, with offsets; blank lines are ignored."""
    if isinstance(source, Path):
        with source.open("rb") as handle:
            return _read_lines(handle)
    return _read_lines(source)


def _read_lines(handle: BinaryIO) -> JsonlLines:
    records: list[dict[str, Any]] = []
    offsets: list[int] = []
    skipped = 0
    offset = 0
    end = 0
    for raw in handle:
        start, offset = offset, offset + len(raw)
        line = raw.strip()
        if not line:
            end = offset if raw.endswith(b"\n") else end
            continue
        try:
            value = json.loads(line)
        except ValueError:  # a torn last line of a live session, or garbage
            skipped += 1
            continue
        if isinstance(value, dict):
            records.append(value)
            offsets.append(start)
            end = offset
        else:
            skipped += 1
    return JsonlLines(records, offsets, skipped, end)


def read_records(source: Path | BinaryIO) -> tuple[list[dict[str, Any]], int]:
    """The JSON objects of a JSONL file and the number of lines that were not objects."""
    lines = read_jsonl(source)
    return lines.records, lines.skipped


def parse_transcript(harness: str, source: Path | BinaryIO) -> ParsedTranscript:
    """Turns of a harness's own transcript file (Claude Code or Codex layout)."""
    records, skipped = read_records(source)
    if harness == "codex":
        return ParsedTranscript(list(codex_turns(records)), skipped)
    return ParsedTranscript(list(claude_code_turns(records)), skipped)


def claude_code_turns(records: Iterable[dict[str, Any]]) -> Iterator[Turn]:
    """User and assistant text of a Claude Code session (main thread; sidechains and the
    harness's own records left out: `claude_code_records`)."""
    return (found.turn for found in claude_code_records.read_turns(records).turns)


def codex_turns(records: Sequence[dict[str, Any]]) -> Iterator[Turn]:
    """User and assistant messages of a Codex rollout, either layout (`codex_records`)."""
    return (found.turn for found in codex_records.read_turns(records).turns)


def message_turns(messages: object) -> list[Turn]:
    """Turns from an inline `[{role, content}]` list (plugins that send the conversation)."""
    if not isinstance(messages, list):
        raise InvalidInput(
            "transcript must be a list of {role, content}", code="transcript_invalid"
        )
    turns = []
    for index, item in enumerate(messages):
        if not isinstance(item, dict):
            continue
        role, text = item.get("role"), text_of(item.get("content"), ("text",))
        if role in ("user", "assistant") and text:
            turns.append(Turn(turn_id(index, str(role), text), str(role), text))
    return turns
