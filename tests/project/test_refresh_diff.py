"""refresh.diff's one-comparison answer for an unchanged tree equals the file-by-file diff in every case."""

from __future__ import annotations

import random

import pytest

from codelex.ingest import SourceFile
from codelex.lexical import WordIndex
from codelex.project.refresh import content_skipped, diff


def _oracle(index: WordIndex, current: dict[str, SourceFile]):
    """The diff file by file (as it was written before the one-comparison shortcut)."""
    table = index.file_table()
    old_set = {path for path, _, _ in table}
    skips = content_skipped(index)

    def unchanged_skip(path):
        entry, f = skips.get(path), current[path]
        return isinstance(entry, list) and len(entry) >= 2 and entry[0] == f.mtime_ns and entry[1] == f.size

    added = [p for p in current if p not in old_set and not unchanged_skip(p)]
    removed, stale = [], []
    for path, mtime_ns, size in table:
        f = current.get(path)
        if f is None:
            removed.append(path)
        elif mtime_ns != f.mtime_ns or size != f.size:
            stale.append(path)
    return added, removed, sorted(stale)


@pytest.mark.parametrize("seed", range(40))
def test_diff_equals_the_file_by_file_diff(seed):
    rng = random.Random(seed)
    paths = [f"d{i % 4}/f{i:03}.py" for i in range(rng.randrange(0, 30))]
    docs = [(p, f"def f{i}(): pass\n".encode(), 1000 + i) for i, p in enumerate(paths)]
    index = WordIndex.build(docs)
    listed = {p: SourceFile(p, len(c), m) for p, c, m in docs}
    skipped = {f"gen/g{i}.py": [7, 70 + i, "generated"] for i in range(rng.randrange(0, 3))}
    index.metadata["content_skipped"] = skipped
    for p, (m, s, _) in skipped.items():
        listed[p] = SourceFile(p, s, m)
    current = dict(sorted(listed.items()))
    change = rng.randrange(7)
    if change == 1 and paths:  # an mtime
        p = rng.choice(paths)
        current[p] = current[p]._replace(mtime_ns=current[p].mtime_ns + 1)
    elif change == 2 and paths:  # a file gone
        del current[rng.choice(paths)]
    elif change == 3:  # a file added
        current["new.py"] = SourceFile("new.py", 3, 3)
    elif change == 4 and skipped:  # a skipped file changed
        p = next(iter(skipped))
        current[p] = current[p]._replace(size=current[p].size + 1)
    elif change == 5 and paths:  # another order
        items = list(current.items())
        rng.shuffle(items)
        current = dict(items)
    elif change == 6 and paths:  # a per-edit update (mtime unknown, -1)
        index.update(paths[0], b"def edited(): pass\n")
    assert diff(index, current) == _oracle(index, current)
