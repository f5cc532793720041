#!/usr/bin/env bash
# Build the one-folder app with PyInstaller and smoke-test it.
#
#   packaging/build.sh             build into dist/signet-desktop/, then run packaging/smoke.py
#   packaging/build.sh --no-smoke  build only
#
# The build runs in its own environment (build/pyinstaller-venv: the locked runtime
# dependencies plus the `packaging` group, no dev tools), so the bundle carries nothing the
# app does not need and the development .venv is left alone. It takes several minutes.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SMOKE=1
[[ "${1:-}" == "--no-smoke" ]] && SMOKE=0

export UV_PROJECT_ENVIRONMENT="${UV_PROJECT_ENVIRONMENT:-$ROOT/build/pyinstaller-venv}"
# A regular (non-editable) install: the wheel carries migrations/ and resources/ as package data.
uv sync --frozen --no-dev --group packaging --no-editable
uv run --frozen --no-dev --group packaging --no-editable --no-sync \
    pyinstaller --noconfirm --clean \
    --distpath "$ROOT/dist" --workpath "$ROOT/build/pyinstaller" \
    packaging/pyinstaller/signet-desktop.spec

# One executable, two commands: the entry point looks at the name it was started under.
ln -sf signet-desktop "$ROOT/dist/signet-desktop/signet"
du -sh "$ROOT/dist/signet-desktop"

if [[ "$SMOKE" == 1 ]]; then
    # The build environment's Python has numpy, which the UMAP check's input needs.
    "$UV_PROJECT_ENVIRONMENT/bin/python" packaging/smoke.py "$ROOT/dist/signet-desktop"
fi
