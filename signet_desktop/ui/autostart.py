"""Start at login: the XDG autostart entry the tray's toggle writes and removes.

The entry is the same text as the shipped `packaging/linux/signet-desktop-autostart.desktop`
(a test compares them). The directory is `$XDG_CONFIG_HOME/autostart` (else
`~/.config/autostart`); tests pass their own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

ENTRY_NAME = "signet-desktop.desktop"
ENTRY = """\
[Desktop Entry]
Type=Application
Name=Signet Desktop
Comment=Start the Signet Desktop tray and memory daemon at login
Exec=signet-desktop
Icon=signet-desktop
Terminal=false
X-GNOME-Autostart-enabled=true
NoDisplay=true
"""


def autostart_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CONFIG_HOME/autostart`, else `~/.config/autostart`."""
    env = os.environ if env is None else env
    config = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(config) / "autostart"


class Autostart:
    """The autostart entry in one directory: `enabled`, `enable()`, `disable()`."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else autostart_dir()

    @property
    def path(self) -> Path:
        return self.directory / ENTRY_NAME

    @property
    def enabled(self) -> bool:
        return self.path.is_file()

    def enable(self) -> None:
        """Write the entry (atomically: a half-written file would break the session's start)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".tmp")
        partial.write_text(ENTRY, encoding="utf-8")
        partial.replace(self.path)

    def disable(self) -> None:
        self.path.unlink(missing_ok=True)

    def set(self, enabled: bool) -> None:
        if enabled:
            self.enable()
        else:
            self.disable()
