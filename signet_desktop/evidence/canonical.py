"""The canonical retained transcript: `memory/{harness}/transcripts/transcript.jsonl`.

Append-only, one JSON line per conversation turn, for every agent and session of a harness
(each line names its agent and session). The daemon is the only writer; `TranscriptService`
(service/transcripts/service.py) appends here first and then commits the rows that say how far the
file is covered, so a crash between the two leaves complete lines the next start adopts, and
a crash inside a write leaves at most one torn last line, which `torn_tail` finds to cut.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from signet_desktop.domain.sessions import Turn

LINE_VERSION = 1


@dataclass(frozen=True, slots=True)
class CanonicalTurn:
    """One line of the canonical file."""

    agent_id: str
    session_key: str
    harness: str
    project: str | None
    ordinal: int  # 0-based position of the turn in its session
    turn: Turn
    # Imported turns: the source that brought them and the byte offset of the line they came
    # from in its staged copy (memory/imports/<source>/...). Live capture leaves both None.
    source_id: str | None = None
    source_offset: int | None = None

    def to_json(self) -> dict[str, Any]:
        line: dict[str, Any] = {
            "v": LINE_VERSION,
            "agentId": self.agent_id,
            "sessionKey": self.session_key,
            "harness": self.harness,
            "project": self.project,
            "ordinal": self.ordinal,
            "turnId": self.turn.turn_id,
            "role": self.turn.role,
            "text": self.turn.text,
            "timestamp": self.turn.timestamp,
        }
        if self.source_id is not None:
            line["sourceId"] = self.source_id
            line["sourceOffset"] = self.source_offset
        return line

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> CanonicalTurn:
        return cls(
            agent_id=str(value["agentId"]),
            session_key=str(value["sessionKey"]),
            harness=str(value["harness"]),
            project=value.get("project"),
            ordinal=int(value["ordinal"]),
            turn=Turn(
                str(value["turnId"]), str(value["role"]), str(value["text"]), value.get("timestamp")
            ),
            source_id=value.get("sourceId"),
            source_offset=value.get("sourceOffset"),
        )


@dataclass(frozen=True, slots=True)
class Tail:
    """What lies past the committed offset: complete lines, where they end, a torn rest."""

    turns: list[CanonicalTurn]
    complete_end: int  # byte offset just after the last complete line
    torn_bytes: int  # bytes after it that do not end in a newline (cut them)


class CanonicalFile:
    """One harness's canonical transcript file under the workspace root."""

    def __init__(self, root: Path, harness: str) -> None:
        self.relative = f"memory/{harness}/transcripts/transcript.jsonl"
        self.path = root / self.relative

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def append(self, turns: Sequence[CanonicalTurn]) -> int:
        """Append the lines in one write, flushed to disk; the file's new size."""
        if not turns:
            return self.size()
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        data = "".join(
            json.dumps(t.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n" for t in turns
        ).encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
            return os.fstat(fd).st_size
        finally:
            os.close(fd)

    def tail(self, offset: int) -> Tail:
        """Lines after `offset`; a line that does not parse counts as torn only at the end."""
        size = self.size()
        if size <= offset:
            return Tail([], size, 0)
        with self.path.open("rb") as handle:
            handle.seek(offset)
            data = handle.read()
        end = data.rfind(b"\n") + 1  # 0 when no complete line
        turns = []
        for raw in data[:end].splitlines():
            if not raw.strip():
                continue
            try:
                turns.append(CanonicalTurn.from_json(json.loads(raw)))
            except (ValueError, KeyError, TypeError):
                continue  # not ours to interpret; it stays in the file untouched
        return Tail(turns, offset + end, len(data) - end)

    def cut(self, size: int) -> None:
        """Truncate a torn last line (only ever bytes past every committed offset)."""
        with self.path.open("r+b") as handle:
            handle.truncate(size)
            handle.flush()
            os.fsync(handle.fileno())

    def drop_source(self, agent_id: str, source_id: str) -> tuple[int, int]:
        """Rewrite the file without the lines one source imported for one agent (a removed
        source's evidence): temp file, fsync, rename. The lines dropped and the new size."""
        if self.size() == 0:
            return 0, 0
        kept: list[bytes] = []
        dropped = 0
        with self.path.open("rb") as handle:
            for raw in handle:
                try:
                    value = json.loads(raw)
                except ValueError:
                    value = None
                if (
                    isinstance(value, dict)
                    and value.get("sourceId") == source_id
                    and value.get("agentId") == agent_id
                ):
                    dropped += 1
                else:
                    kept.append(raw)
        if not dropped:
            return 0, self.size()
        temp = self.path.with_name(self.path.name + ".rewrite")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            data = memoryview(b"".join(kept))
            while data:
                data = data[os.write(fd, data) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, self.path)
        return dropped, self.size()

    def read_session(self, agent_id: str, session_key: str) -> list[CanonicalTurn]:
        """Every line of one session, in file order (a scan; for the inspector and tests)."""
        return [
            t for t in self.tail(0).turns if t.agent_id == agent_id and t.session_key == session_key
        ]
