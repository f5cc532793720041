"""The Markdown artifact file format, and atomic file writes (temp file + fsync + rename).

A file is `{captured_at}--{session_token}--{kind}.md` under `memory/`, `captured_at` in a
filename-safe form (`20261201T144139.123Z` for `2026-12-01T14:41:39.123Z`). It opens with a
frontmatter block whose values are JSON scalars (which YAML reads too), so the index can be
rebuilt from the files alone:

    ---
    kind: "transcript"
    agent: "default"
    session_key: "s1"
    ...
    ---
    # Transcript · s1
    <body>
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, cast

from signet_desktop.domain.artifacts import ARTIFACT_KINDS, ArtifactKind, ArtifactMeta

FENCE = "---"
FILE_NAME = re.compile(
    r"^(?P<at>\d{8}T\d{6}(?:\.\d{1,6})?Z)--(?P<token>[a-z0-9]+(?:-[a-z0-9]+)*)"
    r"--(?P<kind>transcript|summary|compaction)\.md$"
)
_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?Z$")
_COMPACT = re.compile(r"^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\.\d{1,6})?Z$")
TITLES = {"transcript": "Transcript", "summary": "Summary", "compaction": "Compaction summary"}
# Frontmatter keys in the order they are written.
KEYS = (
    ("kind", "kind"),
    ("agent", "agent_id"),
    ("session_key", "session_key"),
    ("session_token", "session_token"),
    ("harness", "harness"),
    ("project", "project"),
    ("captured_at", "captured_at"),
    ("started_at", "started_at"),
    ("ended_at", "ended_at"),
    ("memory_sentence", "memory_sentence"),
)


def _time_parts(pattern: re.Pattern[str], text: str, what: str) -> tuple[str, ...]:
    """Year, month, day, hour, minute, second and fraction ('' if none) of a timestamp."""
    found = pattern.match(text)
    if found is None:
        raise ValueError(f"not {what}: {text!r}")
    return tuple(part or "" for part in found.groups())


def compact_time(iso: str) -> str:
    """`2026-12-01T14:41:39.123Z` -> `20261201T144139.123Z` (ValueError if not that form)."""
    y, mo, d, h, mi, s, frac = _time_parts(_ISO, iso, "a UTC ISO-8601 timestamp")
    return f"{y}{mo}{d}T{h}{mi}{s}{frac}Z"


def iso_time(compact: str) -> str:
    """The inverse of `compact_time`."""
    y, mo, d, h, mi, s, frac = _time_parts(_COMPACT, compact, "a compact timestamp")
    return f"{y}-{mo}-{d}T{h}:{mi}:{s}{frac}Z"


def file_name(meta: ArtifactMeta) -> str:
    return f"{compact_time(meta.captured_at)}--{meta.session_token}--{meta.kind}.md"


def render(meta: ArtifactMeta, body: str) -> str:
    """The file's text: frontmatter, a title, the body (ends with one newline)."""
    lines = [FENCE]
    for key, attr in KEYS:
        lines.append(f"{key}: {json.dumps(getattr(meta, attr), ensure_ascii=False)}")
    lines.append(FENCE)
    lines.append(f"# {TITLES[meta.kind]} · {meta.session_key}")
    lines.append("")
    lines.append(body.strip())
    return "\n".join(lines) + "\n"


def parse(text: str) -> tuple[ArtifactMeta, str]:
    """Frontmatter and body of an artifact file (ValueError when it is not one)."""
    lines = text.split("\n")
    if not lines or lines[0] != FENCE or FENCE not in lines[1:]:
        raise ValueError("no frontmatter")
    end = lines.index(FENCE, 1)
    values: dict[str, Any] = {}
    for line in lines[1:end]:
        key, sep, raw = line.partition(": ")
        if not sep:
            raise ValueError(f"bad frontmatter line {line!r}")
        values[key] = json.loads(raw)
    kind = values.get("kind")
    if kind not in ARTIFACT_KINDS:
        raise ValueError(f"unknown artifact kind {kind!r}")
    fields: dict[str, Any] = {attr: values.get(key) for key, attr in KEYS}
    for required in ("agent_id", "session_key", "session_token", "captured_at"):
        if not isinstance(fields[required], str) or not fields[required]:
            raise ValueError(f"frontmatter lacks {required}")
    fields["kind"] = cast(ArtifactKind, kind)
    body_lines = lines[end + 1 :]
    if body_lines and body_lines[0].startswith("# "):
        body_lines = body_lines[2:] if len(body_lines) > 1 and not body_lines[1] else body_lines[1:]
    return ArtifactMeta(**fields), "\n".join(body_lines).strip()


def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` so a reader sees the old file or the new one, never a part.

    The temp file sits beside the target (same filesystem), is fsynced, then renamed over
    it; the directory is fsynced so the rename survives a crash. On failure the temp file is
    removed and the target is untouched (the OSError propagates).
    """
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
