"""The import layers of ARCHITECTURE §2, checked by parsing every module's imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[3] / "signet_desktop"

# Top to bottom; a module may import from its own layer or any layer below it.
LAYERS: list[set[str]] = [
    {"ui"},
    {"api", "harness", "cli", "client"},
    {"daemon"},
    {"service"},
    {"dreaming"},
    {"recall", "graph", "ingest", "evidence", "projection", "maintenance"},
    {"queue", "embedding", "inference", "safety"},
    {"storage"},
    {"domain", "config"},
]
QT_MODULES = ("PySide6", "qasync", "pyqtgraph", "shiboken6")
# Surfaces reach data through the facade (or the daemon client), never through storage.
SURFACES = frozenset({"ui", "api", "harness", "cli", "client"})
# Entry points above every layer (they choose headless vs Qt).
ROOT_MODULES = {"main", "__init__", "__main__"}


def layer_of(package: str) -> int:
    for index, members in enumerate(LAYERS):
        if package in members:
            return index
    raise AssertionError(f"package signet_desktop.{package} is not assigned to a layer")


def imported_modules(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def modules() -> list[Path]:
    return sorted(PACKAGE_ROOT.rglob("*.py"))


def own_package(path: Path) -> str | None:
    parts = path.relative_to(PACKAGE_ROOT).parts
    if len(parts) == 1:
        return None  # signet_desktop/main.py etc.
    return parts[0]


def test_every_package_has_a_layer() -> None:
    for child in PACKAGE_ROOT.iterdir():
        if child.is_dir() and (child / "__init__.py").exists():
            layer_of(child.name)


def layer_violations(path: Path, package: str) -> list[str]:
    """Every import in `path` (a module of `package`) that breaks the layer or Qt rules."""
    own = layer_of(package)
    problems = []
    for line, module in imported_modules(path):
        if module.startswith(QT_MODULES) and package != "ui":
            problems.append(f"{path}:{line} imports {module}; only ui/ may import Qt")
        if not module.startswith("signet_desktop."):
            continue
        target = module.split(".")[1]
        if target in ROOT_MODULES:
            problems.append(f"{path}:{line} imports the entry point {module}")
        elif target == "storage" and package in SURFACES:
            problems.append(f"{path}:{line}: {package} is a surface and imports {module}")
        elif target == "api" and package == "ui":
            problems.append(f"{path}:{line}: ui renders the facade's values, not {module}")
        elif layer_of(target) < own:
            problems.append(
                f"{path}:{line}: {package} (layer {own}) imports {module} "
                f"(layer {layer_of(target)}), which is above it"
            )
    return problems


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE_ROOT)))
def test_imports_only_go_down(path: Path) -> None:
    package = own_package(path)
    if package is None:
        assert path.stem in ROOT_MODULES, f"unexpected top-level module {path.name}"
        return
    assert layer_violations(path, package) == []


def test_checker_catches_upward_and_qt_imports(tmp_path: Path) -> None:
    """The rule itself works: storage importing the facade, or PySide6, is flagged."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from signet_desktop.service.facade import SignetService\nimport PySide6.QtCore\n"
    )
    problems = layer_violations(bad, "storage")
    assert len(problems) == 2
    assert "above it" in problems[0] and "only ui/" in problems[1]
    assert layer_violations(bad, "ui") == []


def test_checker_keeps_surfaces_off_storage(tmp_path: Path) -> None:
    """A surface (CLI, HTTP, UI) importing storage is flagged even though storage is below it."""
    bad = tmp_path / "bad.py"
    bad.write_text("from signet_desktop.storage.connect import check_database_file\n")
    assert "is a surface" in layer_violations(bad, "cli")[0]
    assert layer_violations(bad, "service") == []


def test_checker_keeps_the_inspector_off_the_wire_shapes(tmp_path: Path) -> None:
    """The inspector shows the facade's values; rendering HTTP JSON in-process is flagged."""
    bad = tmp_path / "bad.py"
    bad.write_text("from signet_desktop.api.views import service_status_json\n")
    assert "not signet_desktop.api.views" in layer_violations(bad, "ui")[0]
    assert layer_violations(bad, "cli") == []
