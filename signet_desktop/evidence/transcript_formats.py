"""Harness transcript files -> conversation turns (user/assistant text; no tool traces).

Claude Code and Codex write one JSON object per line and append while a session is live, so
a last line may be torn: a line that does not parse is skipped and counted, never fatal.
Tool calls, tool results, thinking and bookkeeping lines are not conversation and stay out
(the spec keeps raw tool traces out of the semantic projection).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.sessions import Turn
from signet_desktop.safety import local_files

MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024
# Codex repeats these as user messages at the start of every session; they are not talk.
_CODEX_BOILERPLATE = ("<environment_context>", "<user_instructions>", "<permissions")


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
    """User and assistant text of a Claude Code session (main thread; sidechains left out)."""
    return (turn for _, turn in indexed_claude_code_turns(records))


def indexed_claude_code_turns(records: Iterable[dict[str, Any]]) -> Iterator[tuple[int, Turn]]:
    """`claude_code_turns` with the index of the record each turn came from."""
    for index, record in enumerate(records):
        if record.get("type") not in ("user", "assistant") or record.get("isSidechain"):
            continue
        message = record.get("message")
        if not isinstance(message, dict):
            continue
        role = message.get("role") or record.get("type")
        text = _text_of(message.get("content"), ("text",))
        if role not in ("user", "assistant") or not text:
            continue
        turn_id = record.get("uuid")
        yield (
            index,
            Turn(
                turn_id=str(turn_id) if turn_id else _turn_id(index, role, text),
                role=role,
                text=text,
                timestamp=_str_or_none(record.get("timestamp")),
            ),
        )


def codex_turns(records: Iterable[dict[str, Any]]) -> Iterator[Turn]:
    """User and assistant messages of a Codex rollout (boilerplate and tool calls left out)."""
    return (turn for _, turn in indexed_codex_turns(records))


def indexed_codex_turns(records: Iterable[dict[str, Any]]) -> Iterator[tuple[int, Turn]]:
    """`codex_turns` with the index of the record each turn came from."""
    for index, record in enumerate(records):
        payload = record.get("payload")
        if record.get("type") != "response_item" or not isinstance(payload, dict):
            continue
        if payload.get("type") != "message":
            continue
        role = payload.get("role")
        text = _text_of(payload.get("content"), ("input_text", "output_text", "text"))
        if role not in ("user", "assistant") or not text:
            continue
        if role == "user" and text.lstrip().startswith(_CODEX_BOILERPLATE):
            continue
        yield (
            index,
            Turn(
                turn_id=_turn_id(index, role, text),
                role=role,
                text=text,
                timestamp=_str_or_none(record.get("timestamp")),
            ),
        )


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
        role, text = item.get("role"), _text_of(item.get("content"), ("text",))
        if role in ("user", "assistant") and text:
            turns.append(Turn(_turn_id(index, str(role), text), str(role), text))
    return turns


def _text_of(content: object, kinds: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    parts = [
        str(block.get("text", "")).strip()
        for block in content
        if isinstance(block, dict) and block.get("type") in kinds
    ]
    return "\n\n".join(part for part in parts if part)


def _turn_id(index: int, role: str, text: str) -> str:
    digest = hashlib.sha256(f"{index}\x00{role}\x00{text}".encode()).hexdigest()
    return digest[:24]


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None
