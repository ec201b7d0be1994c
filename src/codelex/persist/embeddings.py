"""The embedding cache's on-disk format (version 2): ``embeddings/<model>.clx`` in an index directory.

One container per model: ``keys`` (the xxh3-64 of each embedded text,
ascending) and ``vectors`` (the L2-normalised rows, float16 or float32,
row-major, ``dimensions`` in the header).  The header names the model; a
file whose model name differs is never read as another model's, and a file
this user did not write (no valid MAC: :mod:`codelex.persist.trust`; version
2) is never read at all.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import numpy as np

from codelex.defaults import EMBEDDINGS_DIR
from codelex.errors import IndexFormatError
from codelex.persist.container import UntrustedIndexError, read_container, read_container_header, write_container
from codelex.persist.layout import dir_refusal

__all__ = ["FORMAT", "FORMAT_VERSION", "embeddings_file", "load_embeddings", "save_embeddings"]

FORMAT = "codelex-embeddings"
FORMAT_VERSION = 2
_DTYPES = {"float16": "<f2", "float32": "<f4"}


def embeddings_file(directory: str | Path, model: str) -> Path:
    """Where ``model``'s vectors live under the index directory ``directory``."""
    digest = hashlib.blake2b(model.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return Path(directory) / EMBEDDINGS_DIR / f"{digest}.clx"


def save_embeddings(directory: str | Path, model: str, keys: np.ndarray, vectors: np.ndarray) -> Path:
    """Write ``keys`` (uint64, ascending, unique) and ``vectors`` (n, d) for ``model`` atomically."""
    keys = np.ascontiguousarray(keys, dtype="<u8")
    if vectors.ndim != 2 or vectors.shape[0] != keys.shape[0]:
        raise ValueError("vectors must have one row per key")
    if keys.size > 1 and not (np.diff(keys.astype(np.uint64)) > 0).all():
        raise ValueError("keys must be ascending and unique")
    dtype = "float16" if vectors.dtype == np.float16 else "float32"
    target = embeddings_file(directory, model)
    _clear_the_way(Path(directory), target.parent)
    schema = {"keys": "<u8", "vectors": _DTYPES[dtype]}
    write_container(target.parent, target.name, {"keys": keys, "vectors": np.ascontiguousarray(vectors).reshape(-1)},
                    schema, {"format": FORMAT, "model": model, "dimensions": int(vectors.shape[1]),
                             "dtype": dtype}, FORMAT_VERSION)
    return target


def _clear_the_way(directory: Path, subdirectory: Path) -> None:
    """Remove whatever but a directory sits where an index directory (this user's) keeps its embeddings:
    a symbolic link a clone brought would otherwise make every save fail."""
    if dir_refusal(directory) is not None:
        return  # not an index directory of ours: touch nothing (the write refuses it)
    try:
        st = os.lstat(subdirectory)
    except OSError:
        return
    if not stat.S_ISDIR(st.st_mode):
        try:
            os.unlink(subdirectory)
        except OSError:
            pass


def load_embeddings(directory: str | Path, model: str, *, verify: bool = True) -> tuple[np.ndarray, np.ndarray] | None:
    """``(keys, vectors)`` saved for ``model`` (memory-mapped), or None when there are none.

    Raises
    ------
    codelex.IndexFormatError
        When the file is not an intact embedding cache of this model.
    """
    file = embeddings_file(directory, model)
    if not file.is_file():
        return None
    why = dir_refusal(file.parent)
    if why is not None:  # (a link a clone brought, say: what it leads to is not this index's)
        raise UntrustedIndexError(f"{file.parent}: {why}")

    def checks(header: dict) -> None:
        if header.get("model") != model:
            raise IndexFormatError(f"{file}: holds the vectors of {header.get('model')!r}, not {model!r}")
        if header.get("dtype") not in _DTYPES or not isinstance(header.get("dimensions"), int) \
                or header["dimensions"] < 1:
            raise IndexFormatError(f"{file}: bad dtype or dimensions")

    header = read_container_header(file, FORMAT, FORMAT_VERSION, checks)
    c = read_container(file, {"keys": "<u8", "vectors": _DTYPES[header["dtype"]]}, FORMAT, FORMAT_VERSION,
                       verify=verify, checks=checks)
    keys, flat = c.arrays["keys"], c.arrays["vectors"]
    d = c.header["dimensions"]
    if flat.size != keys.size * d:
        raise IndexFormatError(f"{file}: {flat.size} values for {keys.size} keys of {d} dimensions")
    if keys.size > 1 and not (keys[1:] > keys[:-1]).all():
        raise IndexFormatError(f"{file}: keys are not ascending")
    return keys, flat.reshape(keys.size, d)
