"""What the window remembers between runs (geometry, last pane, notices shown, theme), in
QSettings.

The Qt `main` decides where the file lives: the user's settings by default, an ini file under a
test's tmp directory in tests, so no test ever touches the real settings.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

ORGANIZATION = "Signet"
APPLICATION = "Signet Desktop"
GEOMETRY = "window/geometry"
LAST_PANE = "window/lastPane"
TRAY_NOTICE = "tray/closeNoticeShown"
THEME = "look/theme"
THEMES = ("system", "light", "dark")  # follow the desktop, or always one


class ShellSettings:
    """Typed access to the shell's few QSettings keys."""

    def __init__(self, settings: QSettings) -> None:
        self._settings = settings

    @classmethod
    def user(cls) -> ShellSettings:
        """The user's settings (native format and location)."""
        return cls(QSettings(ORGANIZATION, APPLICATION))

    @classmethod
    def at(cls, path: Path) -> ShellSettings:
        """Settings in an ini file at `path` (tests, portable installs)."""
        return cls(QSettings(str(path), QSettings.Format.IniFormat))

    @property
    def location(self) -> str:
        return self._settings.fileName()

    def geometry(self) -> QByteArray | None:
        value = self._settings.value(GEOMETRY)
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_geometry(self, geometry: QByteArray) -> None:
        self._settings.setValue(GEOMETRY, geometry)

    def last_pane(self) -> str | None:
        value = self._settings.value(LAST_PANE)
        return value if isinstance(value, str) and value else None

    def set_last_pane(self, key: str) -> None:
        self._settings.setValue(LAST_PANE, key)

    def tray_notice_shown(self) -> bool:
        return _as_bool(self._settings.value(TRAY_NOTICE, False))

    def set_tray_notice_shown(self) -> None:
        self._settings.setValue(TRAY_NOTICE, True)

    def theme(self) -> str:
        """The chosen theme: one of THEMES ("system" when unset or unknown)."""
        value = self._settings.value(THEME)
        return value if isinstance(value, str) and value in THEMES else THEMES[0]

    def set_theme(self, choice: str) -> None:
        if choice not in THEMES:
            raise ValueError(f"theme {choice!r} is not one of {', '.join(THEMES)}")
        self._settings.setValue(THEME, choice)

    def sync(self) -> None:
        self._settings.sync()


def _as_bool(value: object) -> bool:
    # Ini files give strings back ("true"); native backends give bools.
    if isinstance(value, str):
        return value.lower() in ("1", "true", "yes")
    return bool(value)
