"""ui package: the desktop shell (PySide6). The headless path never imports it."""

from signet_desktop.ui import pyside_sources

pyside_sources.install()
