"""Contenders given the same file set: codelex, bm25s (numpy and numba
backends), tantivy and rank_bm25.  The BM25 engines receive codelex's tokens,
so that the comparison is of engines, not tokenizers."""

from __future__ import annotations

import importlib.util
import time

import numpy as np


def available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def codelex_tokens(docs) -> list[list[str]]:
    import codelex

    return [codelex.tokenize_line(data) for _, data in docs]


def query_tokens(query: str) -> list[str]:
    import codelex

    return list(dict.fromkeys(codelex.tokenize_line(codelex.parse_query(query).terms)))


class Bm25s:
    def __init__(self, backend: str = "numpy"):
        self.backend = backend
        self.name = f"bm25s ({backend})"

    def build(self, docs, tokens):
        import bm25s

        self.retriever = bm25s.BM25(backend=self.backend)
        self.retriever.index(tokens, show_progress=False)
        vocab = self.retriever.vocab_dict
        self.vocab = vocab

    def prepare(self, query):
        ids = [self.vocab[t] for t in query_tokens(query) if t in self.vocab]
        return ids

    def search(self, ids, k=10):
        if not ids:
            return []
        n = self.retriever.scores["num_docs"]
        if self.backend == "numba":
            docs, _ = self.retriever.retrieve([ids], k=min(k, n), show_progress=False, n_threads=1)
            return docs
        scores = self.retriever.get_scores(ids)
        k = min(k, n)
        top = np.argpartition(-scores, k - 1)[:k]
        return top[np.argsort(-scores[top])]


class Tantivy:
    name = "tantivy"

    def build(self, docs, tokens):
        import tantivy

        builder = tantivy.SchemaBuilder()
        builder.add_text_field("body", stored=False, tokenizer_name="whitespace", index_option="freq")
        builder.add_integer_field("id", stored=True, fast=True)
        self.schema = builder.build()
        self.index = tantivy.Index(self.schema)
        writer = self.index.writer(heap_size=256 * 1024 * 1024, num_threads=1)
        for i, toks in enumerate(tokens):
            writer.add_document(tantivy.Document(body=" ".join(toks), id=i))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()

    def prepare(self, query):
        import tantivy

        terms = query_tokens(query)
        if not terms:
            return None
        return tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(self.schema, "body", t)) for t in terms])

    def search(self, q, k=10):
        if q is None:
            return []
        return self.searcher.search(q, k).hits


class RankBm25:
    name = "rank_bm25"

    def build(self, docs, tokens):
        from rank_bm25 import BM25Okapi

        self.bm = BM25Okapi(tokens)

    def prepare(self, query):
        return query_tokens(query)

    def search(self, q, k=10):
        if not q:
            return []
        scores = self.bm.get_scores(q)
        k = min(k, len(scores))
        return np.argpartition(-scores, k - 1)[:k]


def timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t, out
