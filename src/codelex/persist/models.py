"""Derived model files in the per-user cache: written once, believed only when this user's key vouches for them.

The ONNX form of an embedding model (:mod:`codelex.dense.onnx_embedder`)
takes about a second to make from the model's weights and is the same
every time, so it is kept in ``models/`` beside the per-user ``projects/``
directory.  A model file is parsed by a native library, so it is hostile
input like any index file: it is opened without following a link or
blocking, must be a regular file of this user's, and its first line is an
HMAC (:mod:`codelex.persist.trust`) of its own name and the BLAKE2b digest of the rest (so a file is
believed only under the name it was written as: another model's or precision's graph renamed is not);
anything else is ignored (and replaced at the next save).  Without a key
nothing is kept and the model is made in memory each time.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

from codelex.persist.container import atomic_file, open_regular
from codelex.persist.layout import user_cache_dir
from codelex.persist.trust import MAC_HEX, mac, mac_matches

__all__ = ["load_model_file", "models_dir", "save_model_file"]

log = logging.getLogger("codelex")

#: The largest model file read back (a file this large is not ours).
MAX_MODEL_FILE = 4 << 30


def models_dir() -> Path:
    """``models/`` in the per-user cache directory (beside ``projects/``)."""
    return user_cache_dir().parent / "models"


def _signed(name: str, payload: bytes | memoryview) -> bytes:
    """What a model file's MAC covers: a domain tag (no index file's MAC can stand for it), its name, its bytes."""
    return b"codelex-model\0" + name.encode("utf-8", "surrogateescape") + b"\0" + \
        hashlib.blake2b(payload, digest_size=32).digest()


def load_model_file(name: str) -> bytes | None:
    """The payload saved as ``name``, or None when there is none this user's key vouches for."""
    path = models_dir() / name
    try:
        with open_regular(path) as fh:
            head = fh.read(MAC_HEX + 1)
            if len(head) != MAC_HEX + 1 or head[-1:] != b"\n":
                return None
            payload = fh.read(MAX_MODEL_FILE + 1)
    except FileNotFoundError:
        return None
    except Exception as exc:  # a link, another user's file, a FIFO: never read, made again
        log.warning("codelex: ignoring the model file %s: %s", path, exc)
        return None
    if len(payload) > MAX_MODEL_FILE or not mac_matches(_signed(name, payload), head[:MAC_HEX]):
        log.warning("codelex: ignoring the model file %s: not written by this user's codelex", path)
        return None
    return payload


def save_model_file(name: str, payload: bytes, *, replaces: str | None = None) -> bool:
    """Keep ``payload`` as ``name`` (atomically, owner-only); False when there is no key or it cannot be written.

    ``replaces``: a glob of the files this one supersedes (the same model's graphs made from files that have
    changed since), removed once it is written, so the cache holds one file per model and precision.
    """
    tag = mac(_signed(name, payload))
    if tag is None:
        return False
    try:
        with atomic_file(models_dir(), name) as fh:
            fh.write(tag.encode("ascii") + b"\n")
            fh.write(payload)
    except (OSError, TimeoutError) as exc:
        log.warning("codelex: cannot keep the model file %s: %s", models_dir() / name, exc)
        return False
    if replaces:
        for old in models_dir().glob(replaces):
            if old.name != name and old.suffix == ".onnx":
                try:
                    old.unlink()
                except OSError:
                    pass
    return True
