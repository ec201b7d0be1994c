"""Issue 27: the sentence-transformers adapter embeds a query on one thread and bulk batches on every core.

torch is not a test dependency: a stand-in ``torch`` (the thread setting) and ``sentence_transformers``
(a model that records the thread count each encode ran with) are put in ``sys.modules``.
"""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from codelex.dense import SentenceTransformerEmbedder


class _Torch(types.ModuleType):
    def __init__(self) -> None:
        super().__init__("torch")
        self.threads = 7  # whatever the process had

    def set_num_threads(self, n: int) -> None:
        assert isinstance(n, int) and n >= 1
        self.threads = n

    def get_num_threads(self) -> int:
        return self.threads


@pytest.fixture
def fake_torch(monkeypatch):
    torch = _Torch()
    runs: list[tuple[int, int]] = []  # (texts, threads) per encode

    class SentenceTransformer:
        def __init__(self, path, device=None, local_files_only=None) -> None:
            assert local_files_only is True and device == "cpu"

        def get_embedding_dimension(self) -> int:
            return 4

        def encode(self, texts, **kwargs):
            runs.append((len(texts), torch.threads))
            return np.ones((len(texts), 4), dtype=np.float32)

    st = types.ModuleType("sentence_transformers")
    st.SentenceTransformer = SentenceTransformer
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "sentence_transformers", st)
    return torch, runs


def test_a_query_runs_on_one_thread_and_a_batch_on_every_core(tmp_path, fake_torch, monkeypatch):
    torch, runs = fake_torch
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 3)
    (tmp_path / "model").mkdir()
    e = SentenceTransformerEmbedder(tmp_path / "model")
    e.embed(["how are routes registered"])
    e.embed([f"def f{i}(): pass" for i in range(64)])
    e.embed(["parse config"])
    assert runs == [(1, 1), (64, 3), (1, 1)]
    pinned = SentenceTransformerEmbedder(tmp_path / "model", threads=2, query_threads=1)
    pinned.embed([f"def f{i}(): pass" for i in range(8)])
    pinned.embed(["x"])
    assert runs[-2:] == [(8, 2), (1, 1)]
    with pytest.raises(ValueError):
        SentenceTransformerEmbedder(tmp_path / "model", query_threads=0)
