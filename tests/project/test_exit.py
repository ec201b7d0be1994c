"""A script that exits while a project's background work runs exits cleanly (issue 27, findings 4 and 11)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("exit") / "repo"
    for i in range(1500):
        d = root / f"d{i % 30}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"m{i}.py").write_text("".join(f"def function_{i}_{j}(alpha, beta):\n    return compute(alpha) + {j}\n"
                                            for j in range(40)))
    return root


@pytest.mark.timeout(300)
@pytest.mark.parametrize("wait, pause", [(False, 0.05), (False, 0.3), (True, 0.2)])
def test_exiting_during_a_build_or_the_structure_stage_is_clean(big_tree, wait, pause):
    script = (f"import shutil, time, codelex\n"
              f"shutil.rmtree({str(big_tree / '.codelex')!r}, ignore_errors=True)\n"
              f"p = codelex.Project({str(big_tree)!r})\n"
              f"p.open(wait={wait})\n"
              f"time.sleep({pause})\n")  # no close(): the interpreter's exit stops the build and the structure stage
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "failed" not in proc.stderr, proc.stderr
