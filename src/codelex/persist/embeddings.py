"""The embedding cache's on-disk format (version 2): ``embeddings/<model>.clx`` in an index directory.

One container per model: ``keys`` (the xxh3-64 of each embedded text,
ascending) and ``vectors`` (the L2-normalised rows, float16 or float32,
row-major, ``dimensions`` in the header).  The header names the model; a
file whose model name differs is never read as another model's, and a file
this user did not write (no valid MAC: :mod:`codelex.persist.trust`; version
2) is never read at all.

Beside them, ``embeddings/models.clx`` records which model each embedder
spec (``minilm``, ``st:PATH``, ``model2vec:PATH``) last loaded as (its name
and dimensions), so a process that must not load a model (a one-shot
command answering lexically) can still say how many chunks have vectors.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import numpy as np

from codelex.defaults import EMBEDDINGS_DIR
from codelex.errors import IndexFormatError
from codelex.persist.container import UntrustedIndexError, read_container, read_container_header, write_container
from codelex.persist.layout import dir_refusal

__all__ = ["FORMAT", "FORMAT_VERSION", "MODELS_FILE", "embeddings_file", "load_embeddings", "load_spec_models",
           "save_embeddings", "save_spec_models"]

FORMAT = "codelex-embeddings"
FORMAT_VERSION = 2
_DTYPES = {"float16": "<f2", "float32": "<f4"}
#: Which model each embedder spec last loaded as: ``embeddings/models.clx`` (one JSON array of UTF-8 bytes).
MODELS_FILE = "models.clx"
MODELS_FORMAT = "codelex-embedding-models"
MODELS_FORMAT_VERSION = 1
#: At most this many specs are remembered (a handful in practice; the file stays small).
MAX_SPECS = 64


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


def save_spec_models(directory: str | Path, models: dict[str, tuple[str, int]]) -> Path:
    """Record ``spec -> (model name, dimensions)`` in ``embeddings/models.clx`` atomically (the last
    :data:`MAX_SPECS` entries).

    Raises
    ------
    OSError
        When it cannot be written.
    """
    target = Path(directory) / EMBEDDINGS_DIR
    _clear_the_way(Path(directory), target)
    entries = {str(spec): [str(name), int(dims)] for spec, (name, dims) in list(models.items())[-MAX_SPECS:]}
    blob = np.frombuffer(json.dumps(entries).encode("utf-8", "surrogatepass"), dtype=np.uint8)
    write_container(target, MODELS_FILE, {"entries": blob}, {"entries": "|u1"}, {"format": MODELS_FORMAT},
                    MODELS_FORMAT_VERSION)
    return target / MODELS_FILE


def load_spec_models(directory: str | Path) -> dict[str, tuple[str, int]]:
    """``spec -> (model name, dimensions)`` as :func:`save_spec_models` recorded it; empty when there is no
    record, or one that does not read back intact or that this user did not write (it is a cache)."""
    file = Path(directory) / EMBEDDINGS_DIR / MODELS_FILE
    if not file.is_file() or dir_refusal(file.parent) is not None:
        return {}
    try:
        c = read_container(file, {"entries": "|u1"}, MODELS_FORMAT, MODELS_FORMAT_VERSION, mmap=False)
        entries = json.loads(c.arrays["entries"].tobytes().decode("utf-8", "surrogatepass"))
    except (IndexFormatError, OSError, ValueError):
        return {}
    if not isinstance(entries, dict):
        return {}
    out: dict[str, tuple[str, int]] = {}
    for spec, value in list(entries.items())[:MAX_SPECS]:
        if isinstance(spec, str) and isinstance(value, list) and len(value) == 2 and isinstance(value[0], str) \
                and isinstance(value[1], int) and not isinstance(value[1], bool) and value[1] > 0:
            out[spec] = (value[0], value[1])
    return out
