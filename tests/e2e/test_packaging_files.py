"""The shipped desktop entry and systemd unit start the real entry point with real flags."""

from __future__ import annotations

import configparser
import shlex
import tomllib
from pathlib import Path

from signet_desktop.main import build_parser
from tests.e2e.launcher import REPO_ROOT

LINUX = REPO_ROOT / "packaging" / "linux"


def script_name() -> str:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    scripts = project["project"]["scripts"]
    (name,) = [name for name, target in scripts.items() if target == "signet_desktop.main:main"]
    return str(name)


def read_ini(path: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(path)
    return parser


def check_command(exec_line: str) -> None:
    program, *args = shlex.split(exec_line)
    assert Path(program).name == script_name()
    build_parser().parse_args(args)  # every flag exists (SystemExit otherwise)


def test_desktop_entries_launch_the_tray_app() -> None:
    for name in ("signet-desktop.desktop", "signet-desktop-autostart.desktop"):
        entry = read_ini(LINUX / name)["Desktop Entry"]
        assert entry["Type"] == "Application"
        check_command(entry["Exec"])
        assert "--headless" not in entry["Exec"]


def test_systemd_unit_runs_headless_and_stops_with_sigterm() -> None:
    unit = read_ini(LINUX / "signet-desktop.service")
    service = unit["Service"]
    check_command(service["ExecStart"].replace("%h", "/home/user"))
    assert "--headless" in service["ExecStart"]
    assert service["KillSignal"] == "SIGTERM"
    assert service["RestartPreventExitStatus"] == "2"
    assert unit["Install"]["WantedBy"] == "default.target"
