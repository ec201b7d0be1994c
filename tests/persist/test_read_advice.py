"""A mapped index tells the kernel how it is read: the lazily read arrays a few pages at a time."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from codelex import WordIndex
from codelex.persist.lexical import LAZY_ARRAYS, load_lexical

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/smaps")


def _mapping_flags(file: Path) -> list[tuple[int, int, set[str]]]:
    """(start, end, VmFlags) of this process's mappings of file."""
    out, current = [], None
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and len(head) >= 5 and ":" in head[3]:  # a mapping's first line
                current = None
                if len(head) >= 6 and head[5] == str(file):
                    lo, hi = (int(x, 16) for x in head[0].split("-"))
                    current = [lo, hi, set()]
                    out.append(current)
            elif current is not None and line.startswith("VmFlags:"):
                current[2].update(line.split()[1:])
    return [tuple(m) for m in out]


def test_the_lazily_read_arrays_are_advised_random_and_the_rest_is_not(tmp_path):
    corpus = [(f"src/m{i}.py", "\n".join(f"def f{i}_{j}(x):\n    return x + {j}" for j in range(400)))
              for i in range(12)]
    WordIndex.build(corpus).save(tmp_path)
    snap = load_lexical(tmp_path)
    file = (tmp_path / "index.clx").resolve()
    maps = _mapping_flags(file)
    assert maps, "the index is mapped"
    random = [(lo, hi) for lo, hi, flags in maps if "rr" in flags]
    assert random, maps
    header = snap.container.header
    base = min(lo for lo, _, _ in maps)
    for entry in header["arrays"]:
        start, end = base + entry["offset"], base + entry["offset"] + entry["nbytes"]
        if entry["name"] in LAZY_ARRAYS.values() and entry["nbytes"] >= 4096:
            inner = start - start % 4096  # the page holding the array's first byte
            assert inner < end and any(lo <= inner < hi for lo, hi in random), entry["name"]
    # The header and the small arrays read whole at load keep the default read-ahead.
    assert any("rr" not in flags and lo == base for lo, _, flags in maps)
