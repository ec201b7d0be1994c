"""The import graph's cache on disk (``graph.clx``): each file's import references with its signature.

Resolution is cheap next to reading and scanning every file again, so what
is saved is the extraction: per file its ``(mtime_ns, size)`` as the index
recorded them and its references as written.  A project reuses the
references of every file whose signature still matches and re-extracts the
rest; the references are resolved afresh.  Beside them lie the centrality
prior counts the graph gave when it was saved, so that a later process (or a
one-shot command that builds no graph) ranks as the last graph did until its
own is ready; the header's ``covers`` is the word index's
:meth:`~codelex.lexical.WordIndex.files_digest` the counts were derived for,
and they stand for an index only while it has that digest.  It is a cache: anything that does not read back intact, was
written by other extraction rules or not by this user (no valid MAC: see
:mod:`codelex.persist.trust`), is None.  Version 3: the MAC.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from codelex.errors import IndexFormatError
from codelex.persist.container import decode_items, encode_items, read_container, write_container

__all__ = ["COUNTS_FILE", "GRAPH_FILE", "load_graph_counts", "load_graph_prior", "load_graph_refs", "save_graph_counts",
           "save_graph_refs"]

#: The counts alone, as a process that followed edits last derived them (small: written after each burst of
#: edits, where the references' cache is rewritten only by a build).
COUNTS_FILE = "graph-counts.clx"
_COUNT_ARRAYS = {"path_blob": "|u1", "path_off": "<u8", "prior": "<i4"}

#: The longest ``covers`` a header may hold (anything else reads as none).
_MAX_COVERS = 96

GRAPH_FILE = "graph.clx"
FORMAT = "codelex-graph"
FORMAT_VERSION = 3
_ARRAYS = {"path_blob": "|u1", "path_off": "<u8", "mtime_ns": "<i8", "size": "<i8", "ref_blob": "|u1",
           "ref_off": "<u8", "prior": "<i4"}


def save_graph_refs(entries: dict[str, tuple[int, int, list]], rules: str, directory: str | os.PathLike[str],
                    prior: dict[str, int] | None = None, covers: str | None = None) -> None:
    """Write ``path -> (mtime_ns, size, refs)`` (refs as ``[lang, spec, level, names]`` lists) atomically.

    ``prior`` (the graph's centrality prior counts, per path of ``entries``)
    is saved beside them: a later process ranks with it before, or instead
    of, building its own graph; ``covers``, the files digest of the word
    index they were derived for (see :func:`load_graph_counts`).

    Raises
    ------
    OSError
        When it cannot be written.
    """
    paths = sorted(entries)
    path_blob, path_off = encode_items([p.encode("utf-8", "surrogateescape") for p in paths])
    # One JSON document for all files (one decode call on load); the offsets keep each file's part apart.
    ref_blob, ref_off = encode_items([json.dumps([list(r) for r in entries[p][2]], ensure_ascii=False)
                                 .encode("utf-8", "surrogateescape") + b"," for p in paths])
    arrays = {"path_blob": path_blob, "path_off": path_off,
              "mtime_ns": np.array([entries[p][0] for p in paths], dtype=np.int64),
              "size": np.array([entries[p][1] for p in paths], dtype=np.int64), "ref_blob": ref_blob,
              "ref_off": ref_off,
              "prior": np.array([min((prior or {}).get(p, 0), 2**31 - 1) for p in paths], dtype=np.int32)}
    meta = {"format": FORMAT, "rules": rules}
    if covers is not None:
        meta["covers"] = covers
    write_container(Path(directory), GRAPH_FILE, arrays, _ARRAYS, meta, FORMAT_VERSION)


def save_graph_counts(counts: dict[str, int], rules: str, directory: str | os.PathLike[str], covers: str) -> None:
    """Write the prior counts alone (files counted at least once) with the files digest they were derived for,
    atomically, to ``COUNTS_FILE``.

    Raises
    ------
    OSError
        When it cannot be written.
    """
    paths = sorted(p for p, n in counts.items() if n > 0)
    path_blob, path_off = encode_items([p.encode("utf-8", "surrogateescape") for p in paths])
    arrays = {"path_blob": path_blob, "path_off": path_off,
              "prior": np.array([min(counts[p], 2**31 - 1) for p in paths], dtype=np.int32)}
    write_container(Path(directory), COUNTS_FILE, arrays, _COUNT_ARRAYS,
                    {"format": FORMAT + "-counts", "rules": rules, "covers": covers}, FORMAT_VERSION)


def load_graph_prior(directory: str | os.PathLike[str], rules: str) -> dict[str, int] | None:
    """The prior counts saved with the references (files counted at least once), or None."""
    found = load_graph_counts(directory, rules)
    return None if found is None else found[0]


def load_graph_counts(directory: str | os.PathLike[str], rules: str,
                      name: str = GRAPH_FILE) -> tuple[dict[str, int], str | None] | None:
    """``(prior counts, covers)``: the counts saved with the references (``GRAPH_FILE``, the default) or alone
    (``COUNTS_FILE``), files counted at least once, and the files digest of the word index they were derived
    for (None: not recorded); None without a usable file."""
    try:
        if name == COUNTS_FILE:
            c = read_container(Path(directory) / COUNTS_FILE, _COUNT_ARRAYS, FORMAT + "-counts", FORMAT_VERSION)
        else:  # (mapped; the references are neither read nor checked: nothing here depends on them)
            c = read_container(Path(directory) / GRAPH_FILE, _ARRAYS, FORMAT, FORMAT_VERSION,
                               lazy=frozenset({"ref_blob", "ref_off"}))
        if c.header.get("rules") != rules:
            return None
        a = c.arrays
        off, prior = a["path_off"], a["prior"]
        raw = a["path_blob"].tobytes()
        if off.shape[0] != prior.shape[0] + 1 or off.shape[0] < 1 or int(off[0]) != 0 or int(off[-1]) != len(raw) \
                or np.any(off[1:] < off[:-1]):
            return None
        rows = np.flatnonzero(prior > 0)  # (only the files counted are decoded)
        lo, hi = off[rows].tolist(), off[rows + 1].tolist()
        counts = {raw[i:j].decode("utf-8", "surrogateescape"): n for i, j, n in zip(lo, hi, prior[rows].tolist())}
        covers = c.header.get("covers")
        return counts, covers if isinstance(covers, str) and 0 < len(covers) <= _MAX_COVERS else None
    except (OSError, IndexFormatError, ValueError, TypeError):
        return None


def load_graph_refs(directory: str | os.PathLike[str], rules: str) -> dict[str, tuple[int, int, list]] | None:
    """What :func:`save_graph_refs` wrote under the same extraction ``rules``, or None."""
    try:
        c = read_container(Path(directory) / GRAPH_FILE, _ARRAYS, FORMAT, FORMAT_VERSION, mmap=False)
        if c.header.get("rules") != rules:
            return None
        a = c.arrays
        paths = [p.decode("utf-8", "surrogateescape") for p in decode_items(a["path_blob"], a["path_off"], "graph cache")]
        refs = decode_items(a["ref_blob"], a["ref_off"], "graph cache")
        mtimes, sizes = a["mtime_ns"].tolist(), a["size"].tolist()
        if not len(paths) == len(refs) == len(mtimes) == len(sizes):
            return None
        if any(not r.endswith(b",") for r in refs):
            return None
        items = json.loads(b"[" + bytes(a["ref_blob"])[:-1] + b"]") if refs else []
        if not isinstance(items, list) or len(items) != len(paths) or not all(isinstance(i, list) for i in items):
            return None
        return {path: (m, s, i) for path, m, s, i in zip(paths, mtimes, sizes, items)}
    except (OSError, IndexFormatError, ValueError, TypeError):
        return None
