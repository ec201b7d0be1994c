"""The benchmark suite runs end to end on a tiny corpus (a smoke test: no timing is asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

COMPARE = Path(__file__).resolve().parents[1] / "benchmarks" / "compare.py"


@pytest.mark.skipif(not COMPARE.exists(), reason="benchmarks/ not available (installed wheel)")
def test_suite_completes_and_prints_every_column(tmp_path):
    env = dict(os.environ, CODELEX_BENCH_DIR=str(tmp_path / "cache"))
    out = tmp_path / "results"
    proc = subprocess.run([sys.executable, str(COMPARE), "suite", "--corpus", "synthetic:40", "--out", str(out),
                           "--no-install", "--timeout", "600"], capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    sys.path.insert(0, str(COMPARE.parent))
    try:
        from compare import SUITE_COLUMNS
    finally:
        sys.path.remove(str(COMPARE.parent))
    header = next(line for line in proc.stdout.splitlines() if line.startswith("| contender"))
    assert [c.strip() for c in header.strip("|").split("|")] == SUITE_COLUMNS
    codelex_row = next(line for line in proc.stdout.splitlines() if line.startswith("| codelex |"))
    cells = [c.strip() for c in codelex_row.strip("|").split("|")]
    assert len(cells) == len(SUITE_COLUMNS) and all(cells), cells
    assert cells[2] == "1.0" and cells[SUITE_COLUMNS.index("p50 ÷ codelex")] == "1.0"  # the ratios of codelex to itself
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ") and not line.startswith("| contender")]
    assert len(rows) >= 3  # codelex plus the other contenders (measured, or "not installed")
    data = json.loads((out / "synthetic-40.json").read_text())
    assert data["files"] == 40 and data["results"][0]["contender"] == "codelex"
    assert "error" not in data["results"][0] and data["results"][0]["query_p50_s"] > 0
    assert (out / "synthetic-40.md").read_text().startswith("Corpus `synthetic:40`")
