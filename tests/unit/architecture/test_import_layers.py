"""The import layers of ARCHITECTURE §2, checked by parsing every module's imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[3] / "signet_desktop"

# Top to bottom; a module may import from its own layer or any layer below it.
LAYERS: list[set[str]] = [
    {"ui"},
    {"api", "harness", "cli"},
    {"service"},
    {"dreaming"},
    {"recall", "graph", "ingest", "evidence", "projection", "maintenance"},
    {"queue", "embedding", "inference", "safety"},
    {"storage"},
    {"domain", "config"},
]
QT_MODULES = ("PySide6", "qasync", "pyqtgraph", "shiboken6")
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


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE_ROOT)))
def test_imports_only_go_down(path: Path) -> None:
    package = own_package(path)
    if package is None:
        assert path.stem in ROOT_MODULES, f"unexpected top-level module {path.name}"
        return
    own = layer_of(package)
    for line, module in imported_modules(path):
        if module.startswith(QT_MODULES):
            assert package == "ui", f"{path}:{line} imports {module}; only ui/ may import Qt"
        if not module.startswith("signet_desktop."):
            continue
        target = module.split(".")[1]
        if target in ROOT_MODULES:
            raise AssertionError(f"{path}:{line} imports the entry point {module}")
        assert layer_of(target) >= own, (
            f"{path}:{line}: {package} (layer {own}) imports {module} "
            f"(layer {layer_of(target)}), which is above it"
        )


def test_checker_catches_an_upward_import(tmp_path: Path) -> None:
    """The rule itself works: a storage module importing the service layer is flagged."""
    bad = tmp_path / "bad.py"
    bad.write_text("from signet_desktop.service.facade import SignetService\n")
    (line, module) = imported_modules(bad)[0]
    assert layer_of(module.split(".")[1]) < layer_of("storage")
