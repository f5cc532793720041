"""Codex's session hooks: a `codex` wrapper script first on PATH, as Signet's original does.

Codex has no hook settings, so session context and capture come from wrapping the binary:
`$XDG_CONFIG_HOME/signet/bin/codex` (a POSIX shell script, wholly ours) finds the real
`codex` further down PATH, pipes `{cwd}` into `signet hook session-start -H codex`, runs
Codex with the output as `-c developer_instructions=<TOML string>` (beside Codex's own
instructions, which `model_instructions_file` would replace; plain Codex when there is no
context), and at exit pipes the newest rollout file written during the run, with Codex's own
session id taken from its name, into `signet hook session-end -H codex`. `signet hook` fails
open, so a daemon that is down never stops Codex. `SIGNET_NO_HOOKS=1`, `SIGNET_BYPASS=1` or
`SIGNET_CODEX_BYPASS_WRAPPER=1` run the real binary untouched.

The wrapper directory goes on PATH through one marked block in the shell start-up files that
exist (`~/.bashrc`, `~/.zshrc`, `~/.bash_profile`; `~/.bashrc` is created when none does);
every edited file is backed up like any other installer change, and uninstall takes out
exactly the block and the script.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

from signet_desktop.harness.installers.files import (
    DEFAULT_URL,
    FileChange,
    Locations,
    read_text,
)

BLOCK_START = "# >>> signet codex wrapper >>>"
BLOCK_END = "# <<< signet codex wrapper <<<"
RC_FILES = (".bashrc", ".zshrc", ".bash_profile")
WRAPPER_MODE = 0o755

_SCRIPT = """\
#!/bin/sh
# Codex with Signet: installed by `signet install codex`, removed by `signet uninstall codex`.
# Session context in at start, the session's rollout file to Signet at exit. Never blocks
# Codex: every signet call fails open. SIGNET_NO_HOOKS=1, SIGNET_BYPASS=1 or
# SIGNET_CODEX_BYPASS_WRAPPER=1 run Codex untouched.
wrapper_dir={wrapper_dir}
signet={signet}
daemon_url={url}

find_real_codex() {{
    old_ifs=$IFS
    IFS=:
    for dir in $PATH; do
        [ "$dir" = "$wrapper_dir" ] && continue
        if [ -f "$dir/codex" ] && [ -x "$dir/codex" ]; then
            IFS=$old_ifs
            printf '%s\\n' "$dir/codex"
            return 0
        fi
    done
    IFS=$old_ifs
    return 1
}}

real=$(find_real_codex) || {{
    echo "signet: no codex found on PATH besides this wrapper ($wrapper_dir/codex)" >&2
    exit 127
}}
if [ -n "$SIGNET_NO_HOOKS" ] || [ -n "$SIGNET_BYPASS" ] \\
    || [ -n "$SIGNET_CODEX_BYPASS_WRAPPER" ]; then
    exec "$real" "$@"
fi

json_string() {{
    printf '%s' "$1" | sed -e 's/\\\\/\\\\\\\\/g' -e 's/"/\\\\"/g'
}}

# stdin as one TOML basic string (control characters but tab and newline dropped)
toml_string() {{
    tr -d '\\000-\\010\\013-\\037\\177' | awk '
        BEGIN {{ printf "\\"" }}
        {{
            out = ""
            for (i = 1; i <= length($0); i++) {{
                c = substr($0, i, 1)
                if (c == "\\\\") c = "\\\\\\\\"
                else if (c == "\\"") c = "\\\\\\""
                else if (c == "\\t") c = "\\\\t"
                out = out c
            }}
            printf "%s%s", (NR > 1 ? "\\\\n" : ""), out
        }}
        END {{ printf "\\"" }}'
}}

work=$(mktemp -d "${{TMPDIR:-/tmp}}/signet-codex.XXXXXX") || exec "$real" "$@"
trap 'rm -rf "$work"' EXIT
started="$work/started"
: > "$started"
cwd=$(json_string "$PWD")
printf '{{"cwd": "%s"}}' "$cwd" \\
    | "$signet" hook session-start -H codex --project "$PWD" --url "$daemon_url" \\
    > "$work/context.md" \\
    2>/dev/null
# The context goes in beside Codex's own instructions (model_instructions_file would put it
# in their place); one too long for a single argument is left out rather than stop Codex.
instructions=""
[ -s "$work/context.md" ] && instructions=$(toml_string < "$work/context.md")
if [ -n "$instructions" ] && [ "${{#instructions}}" -le 100000 ]; then
    "$real" -c "developer_instructions=$instructions" "$@"
else
    "$real" "$@"
fi
status=$?

sessions="${{CODEX_HOME:-$HOME/.codex}}/sessions"
transcript=$(find "$sessions" -type f -name 'rollout-*.jsonl' -newer "$started" 2>/dev/null \\
    | sort | tail -n 1)
if [ -n "$transcript" ]; then
    name=$(basename "$transcript" .jsonl)
    session_id=$(printf '%s' "$name" | sed -n 's/.*-\\([0-9a-fA-F-]\\{{36\\}}\\)$/\\1/p')
    [ -n "$session_id" ] || session_id="$name"
    printf '{{"session_id": "%s", "transcript_path": "%s", "cwd": "%s"}}' \\
        "$(json_string "$session_id")" "$(json_string "$transcript")" "$cwd" \\
        | "$signet" hook session-end -H codex --url "$daemon_url" > /dev/null 2>&1
fi
exit $status
"""


def wrapper_dir(locations: Locations) -> Path:
    """`$XDG_CONFIG_HOME/signet/bin` (Signet's `~/.config/signet/bin`)."""
    return locations.config_home / "signet" / "bin"


def wrapper_path(locations: Locations) -> Path:
    return wrapper_dir(locations) / "codex"


def script(locations: Locations, url: str = DEFAULT_URL) -> str:
    """The wrapper's text for this home and daemon URL (values quoted for sh)."""
    return _SCRIPT.format(
        wrapper_dir=shlex.quote(str(wrapper_dir(locations))),
        signet=shlex.quote(_signet_command(locations)),
        url=shlex.quote(url),
    )


def signet_of(locations: Locations) -> str | None:
    """The `signet` command our installed wrapper runs (None: no wrapper of ours)."""
    text = read_text(wrapper_path(locations))
    if text is None or "signet install codex" not in text:
        return None
    for line in text.splitlines():
        if line.startswith("signet="):
            words = shlex.split(line.removeprefix("signet="))
            return words[0] if words else None
    return None


def _signet_command(locations: Locations) -> str:
    """An absolute `signet` when one is known: the wrapper runs from any PATH."""
    found = locations.executable("signet")
    return found if os.path.isabs(found) else _which(found, locations) or found


def _which(name: str, locations: Locations) -> str | None:
    return shutil.which(name, path=locations.env.get("PATH"))


def block(locations: Locations) -> str:
    """The marked PATH block for the shell start-up files."""
    directory = shlex.quote(str(wrapper_dir(locations)))
    return (
        f"{BLOCK_START}\n"
        "# Added by `signet install codex`; `signet uninstall codex` removes it.\n"
        f'export PATH={directory}:"$PATH"\n'
        f"{BLOCK_END}\n"
    )


def rc_paths(locations: Locations) -> list[Path]:
    """The shell start-up files the block goes into: those that exist, else ~/.bashrc."""
    existing = [locations.home / name for name in RC_FILES if (locations.home / name).exists()]
    return existing or [locations.home / ".bashrc"]


def without_block(text: str) -> str:
    """`text` with our marked block (and the blank line we put before it) taken out."""
    start = text.find(BLOCK_START)
    if start < 0:
        return text
    end = text.find(BLOCK_END, start)
    if end < 0:
        return text  # a block someone cut in half: leave it to them
    end += len(BLOCK_END)
    if text[end : end + 1] == "\n":
        end += 1
    head = text[:start]
    if head.endswith("\n\n"):
        head = head[:-1]
    return head + text[end:]


def with_block(text: str | None, locations: Locations) -> str:
    """`text` holding exactly one current block, at the end."""
    base = without_block(text or "")
    if base and not base.endswith("\n"):
        base += "\n"
    separator = "\n" if base else ""
    return base + separator + block(locations)


def install_changes(locations: Locations, url: str = DEFAULT_URL) -> list[FileChange]:
    """The wrapper script and the PATH block in each start-up file."""
    path = wrapper_path(locations)
    changes = [
        FileChange(path, read_text(path), script(locations, url), mode=WRAPPER_MODE, backup=False)
    ]
    for rc in rc_paths(locations):
        before = read_text(rc)
        changes.append(FileChange(rc, before, with_block(before, locations)))
    return changes


def uninstall_changes(locations: Locations) -> list[FileChange]:
    """The script out (when it is ours) and the block out of every start-up file."""
    changes = []
    path = wrapper_path(locations)
    before = read_text(path)
    if before is not None and BLOCK_START not in before and "signet install codex" in before:
        changes.append(FileChange(path, before, None, backup=False))
    for name in RC_FILES:
        rc = locations.home / name
        text = read_text(rc)
        if text is not None and BLOCK_START in text:
            changes.append(FileChange(rc, text, without_block(text)))
    return changes


def installed(locations: Locations) -> bool:
    """Is our wrapper in place?"""
    text = read_text(wrapper_path(locations))
    return text is not None and "signet install codex" in text


def on_path(locations: Locations) -> bool:
    """Does the current PATH find our wrapper before any other codex?"""
    return _which("codex", locations) == str(wrapper_path(locations))
