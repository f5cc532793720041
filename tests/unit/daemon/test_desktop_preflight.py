"""signet-desktop names the missing X11 libraries instead of letting Qt abort the process."""

from __future__ import annotations

import sys

import pytest

from signet_desktop.main import missing_xcb_packages

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11 on Linux")


def test_missing_libraries_are_named_by_package() -> None:
    present = {"xcb-icccm": "libxcb-icccm.so.4"}
    missing = missing_xcb_packages({"DISPLAY": ":0"}, present.get)
    assert missing == ["libxcb-cursor0"]


def test_nothing_is_checked_without_x11() -> None:
    def absent(name: str) -> None:
        return None

    assert missing_xcb_packages({}, absent) == []
    assert missing_xcb_packages({"DISPLAY": ":0", "WAYLAND_DISPLAY": "w"}, absent) == []
    assert missing_xcb_packages({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, absent) == []
    assert missing_xcb_packages({"DISPLAY": ":0"}, lambda name: f"lib{name}.so") == []
