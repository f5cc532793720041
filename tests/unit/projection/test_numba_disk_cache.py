"""`cache_compiled`: the numba functions of the named packages go to numba's on-disk cache and
a later process loads them instead of compiling; other packages' functions are left alone, and
a function numba has no place to cache for (no source file) still runs, compiled per run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

JITTED = "import numba\n\n\n@numba.njit\ndef add(a, b):\n    return a + b\n"
RUN = (
    "import sys, types\n"
    "import jitted, untouched\n"
    "from signet_desktop.projection.reducers import cache_compiled\n"
    "unsourced = types.ModuleType('unsourced')\n"
    f"exec({JITTED!r}, vars(unsourced))\n"
    "sys.modules['unsourced'] = unsourced\n"
    "assert cache_compiled(('jitted', 'unsourced')) == 1\n"
    "assert jitted.add(1, 2) == 3 and untouched.add(2, 3) == 5 and unsourced.add(3, 4) == 7\n"
)


def run(tmp_path: Path) -> str:
    env = {
        **os.environ,
        "PYTHONPATH": str(tmp_path),
        "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache"),
        "NUMBA_DEBUG_CACHE": "1",  # numba says on stdout what it saved and loaded
    }
    done = subprocess.run(
        [sys.executable, "-c", RUN], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_named_package_is_cached_and_loaded_by_the_next_process(tmp_path: Path) -> None:
    for name in ("jitted", "untouched"):
        (tmp_path / f"{name}.py").write_text(JITTED)
    first = run(tmp_path)
    assert "data saved" in first and "jitted" in first
    saved = {p.name.partition(".")[0] for p in tmp_path.rglob("*.nbi")}
    assert saved == {"jitted"}  # `untouched` was not named: compiled, not kept
    second = run(tmp_path)
    assert "data loaded" in second and "data saved" not in second
