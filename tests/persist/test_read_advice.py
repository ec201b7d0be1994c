"""A mapped index tells the kernel how it is read: the lazily read arrays a few pages at a time."""

from __future__ import annotations

import mmap
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
    page = mmap.PAGESIZE
    base = min(lo for lo, _, _ in maps)
    lazy_pages = set()
    for entry in snap.container.header["arrays"]:
        if entry["name"] in LAZY_ARRAYS.values() and entry["nbytes"] >= page:
            first = base + entry["offset"] - entry["offset"] % page  # the page holding its first byte
            lazy_pages.add(first)
            assert any(lo <= first < hi for lo, hi in random), entry["name"]
    assert lazy_pages
    # The header and the arrays read whole at load keep the default read-ahead (unless a lazy array
    # shares the header's page).
    if base not in lazy_pages:
        assert not any(lo <= base < hi for lo, hi in random)


def test_an_untrusted_load_keeps_read_ahead(tmp_path, monkeypatch):
    """A file this user did not write is validated whole when installed, a sequential scan: no advice."""
    from codelex.persist import trust

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "other-cache"))  # another key writes it
    trust._reset()
    try:
        WordIndex.build([(f"src/m{i}.py", "alpha beta gamma\n" * 400) for i in range(8)]).save(tmp_path / "idx")
    finally:
        monkeypatch.undo()
        trust._reset()
    snap = load_lexical(tmp_path / "idx", allow_untrusted=True)
    assert snap.trusted is False
    maps = _mapping_flags((tmp_path / "idx" / "index.clx").resolve())
    assert maps and not any("rr" in flags for _, _, flags in maps)
