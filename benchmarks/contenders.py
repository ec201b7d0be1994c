"""The contenders of the benchmark suite, behind one interface.

Every contender indexes the same files, read from disk inside the timed
build (tokenization included).  The BM25 engines run twice: with codelex's
tokens (a comparison of engines) and with their own default tokenizer (what a
user gets out of the box).  ripgrep has no index: it scans the tree for each
query.
"""

from __future__ import annotations

import importlib.util
import os
import pickle
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np


def available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def read_all(root: Path, paths: list[str]) -> list[bytes]:
    out = []
    for p in paths:
        with open(root / p, "rb") as f:
            out.append(f.read())
    return out


def codelex_query_tokens(query: str) -> list[str]:
    import codelex

    return list(dict.fromkeys(codelex.tokenize_line(codelex.parse_query(query).terms)))


def dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


class Contender:
    name = "?"
    filters = False  # understands lang:/file: filters
    updates = False  # updates one document in place
    module: str | None = None

    @classmethod
    def installed(cls) -> bool:
        return cls.module is None or available(cls.module)

    def import_modules(self) -> None:
        """Import what load() needs, so that load times exclude module imports."""
        if self.module:
            __import__(self.module)

    def build(self, root: Path, paths: list[str], workdir: Path) -> None:
        """Index the files; ``workdir`` is where :meth:`save` will write (tantivy writes there as it goes)."""
        raise NotImplementedError

    def save(self, directory: Path) -> None:
        raise NotImplementedError

    def load(self, directory: Path) -> None:
        raise NotImplementedError

    def search(self, query: str, k: int = 10) -> list:
        raise NotImplementedError

    def update(self, root: Path, paths: list[str], path: str, content: bytes, workdir: Path) -> None:
        """Without in-place updates, a change means a full rebuild."""
        self.build(root, paths, workdir)


class Codelex(Contender):
    name = "codelex"
    filters = True
    updates = True

    def import_modules(self):
        # What `from codelex import WordIndex` loads (the others' rows import their module too), so that
        # the load column times opening an index, not importing the library.
        import codelex.lexical.index  # noqa: F401
        import codelex.persist.lexical  # noqa: F401  (persistence is imported lazily by codelex)

    def build(self, root, paths, workdir):
        import codelex

        def docs():
            for p in paths:
                with open(root / p, "rb") as f:
                    yield p, f.read()

        self.index = codelex.WordIndex.build(docs(), max_bytes=None)

    def save(self, directory):
        self.index.save(directory)

    def load(self, directory):
        import codelex

        self.index = codelex.WordIndex.load(directory)

    def search(self, query, k=10):
        return self.index.search(query, limit=k)

    def update(self, root, paths, path, content, workdir):
        self.index.update(path, content)


class _Bm25sBase(Contender):
    module = "bm25s"
    backend = "numpy"

    def _retriever(self):
        import bm25s

        return bm25s.BM25(backend=self.backend)

    def save(self, directory):
        self.retriever.save(str(directory), show_progress=False)

    def load(self, directory):
        import bm25s

        self.retriever = bm25s.BM25.load(str(directory), mmap=True, show_progress=False)
        self.retriever.backend = self.backend
        self._loaded()

    def _loaded(self):
        self.vocab = self.retriever.vocab_dict

    def _ids(self, query) -> list:
        raise NotImplementedError

    def search(self, query, k=10):
        ids = self._ids(query)
        if not ids:
            return []
        n = self.retriever.scores["num_docs"]
        k = min(k, n)
        if self.backend == "numba":
            docs, _ = self.retriever.retrieve([ids], k=k, show_progress=False, n_threads=1)
            return list(docs[0])
        scores = self.retriever.get_scores(ids)
        top = np.argpartition(-scores, k - 1)[:k]
        return list(top[np.argsort(-scores[top])])


class Bm25sCodelexTokens(_Bm25sBase):
    def __init__(self, backend="numpy"):
        self.backend = backend
        self.name = f"bm25s-{backend} (codelex tokens)"

    @classmethod
    def installed(cls):
        return available("bm25s")

    def build(self, root, paths, workdir):
        import codelex
        from bm25s.tokenization import Tokenized

        vocab = codelex.Vocabulary()
        ids = []
        for data in read_all(root, paths):
            terms, _ = codelex.tokenize_document(data, vocab)
            ids.append(terms.tolist())
        self.retriever = self._retriever()
        self.retriever.index(Tokenized(ids=ids, vocab={t: i for i, t in enumerate(vocab.terms())}),
                             show_progress=False)
        self._loaded()

    def _ids(self, query):
        return [self.vocab[t] for t in codelex_query_tokens(query) if t in self.vocab]


class Bm25sOwnTokens(_Bm25sBase):
    def __init__(self, backend="numpy"):
        self.backend = backend
        self.name = f"bm25s-{backend} (own tokenizer)"

    @classmethod
    def installed(cls):
        return available("bm25s")

    def build(self, root, paths, workdir):
        import bm25s

        texts = [d.decode("utf-8", "replace") for d in read_all(root, paths)]
        tokens = bm25s.tokenize(texts, stopwords="en", show_progress=False)
        self.retriever = self._retriever()
        self.retriever.index(tokens, show_progress=False)
        self._loaded()

    def _ids(self, query):
        import bm25s

        tok = bm25s.tokenize([query], stopwords="en", show_progress=False, return_ids=False)
        return [self.vocab[t] for t in dict.fromkeys(tok[0]) if t in self.vocab]


class Tantivy(Contender):
    module = "tantivy"

    def __init__(self, own_tokenizer: bool):
        self.own = own_tokenizer
        self.name = "tantivy (own tokenizer)" if own_tokenizer else "tantivy (codelex tokens)"

    def _schema(self):
        import tantivy

        builder = tantivy.SchemaBuilder()
        builder.add_text_field("body", stored=False, tokenizer_name="default" if self.own else "whitespace",
                               index_option="freq")
        builder.add_integer_field("id", stored=True, indexed=False)
        return builder.build()

    def build(self, root, paths, workdir):
        import codelex
        import tantivy

        self.schema = self._schema()
        shutil.rmtree(workdir, ignore_errors=True)
        Path(workdir).mkdir(parents=True)
        self.index = tantivy.Index(self.schema, path=str(workdir))
        writer = self.index.writer(heap_size=512 * 1024 * 1024, num_threads=2)
        for i, data in enumerate(read_all(root, paths)):
            if self.own:
                body = data.decode("utf-8", "replace")
            else:
                body = " ".join(codelex.tokenize_line(data))
            writer.add_document(tantivy.Document(body=body, id=i))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()

    def save(self, directory):
        pass  # written to the work directory while indexing

    def load(self, directory):
        import tantivy

        self.schema = self._schema()
        self.index = tantivy.Index.open(str(directory))
        self.searcher = self.index.searcher()

    def search(self, query, k=10):
        import tantivy

        terms = self._terms(query)
        if not terms:
            return []
        q = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(self.schema, "body", t)) for t in terms])
        return self.searcher.search(q, k).hits

    def _terms(self, query):
        if self.own:  # what tantivy's default tokenizer would make of the text
            return list(dict.fromkeys(t.lower() for t in re.findall(r"[A-Za-z0-9]+", query) if len(t) <= 40))
        return codelex_query_tokens(query)


class RankBm25(Contender):
    module = "rank_bm25"

    def __init__(self, own_tokenizer: bool):
        self.own = own_tokenizer
        self.name = "rank_bm25 (own tokenizer)" if own_tokenizer else "rank_bm25 (codelex tokens)"

    def _tokens(self, data):
        import codelex

        if self.own:
            return data.decode("utf-8", "replace").lower().split()
        return codelex.tokenize_line(data)

    def build(self, root, paths, workdir):
        from rank_bm25 import BM25Okapi

        self.bm = BM25Okapi([self._tokens(d) for d in read_all(root, paths)])

    def save(self, directory):
        Path(directory).mkdir(parents=True, exist_ok=True)
        with open(Path(directory) / "bm25.pickle", "wb") as f:
            pickle.dump(self.bm, f, protocol=pickle.HIGHEST_PROTOCOL)

    def load(self, directory):
        with open(Path(directory) / "bm25.pickle", "rb") as f:
            self.bm = pickle.load(f)

    def search(self, query, k=10):
        terms = query.lower().split() if self.own else codelex_query_tokens(query)
        if not terms:
            return []
        scores = self.bm.get_scores(terms)
        k = min(k, len(scores))
        return list(np.argpartition(-scores, k - 1)[:k])


class Ripgrep(Contender):
    """``rg -l -i -w -e w1 -e w2 ...``: the files mentioning any query word (no index, no ranking)."""

    def __init__(self, counted: bool):
        self.counted = counted
        self.name = "rg -c (ranked by count)" if counted else "rg -l"

    @classmethod
    def installed(cls):
        return shutil.which("rg") is not None

    def build(self, root, paths, workdir):
        self.root = root
        # The same file set: hand rg the list (it reads paths from the command line in chunks).
        self.paths = paths

    def save(self, directory):
        Path(directory).mkdir(parents=True, exist_ok=True)
        (Path(directory) / "files.txt").write_text("\n".join(self.paths))

    def load(self, directory):
        self.paths = (Path(directory) / "files.txt").read_text().splitlines()

    def search(self, query, k=10):
        words = [w for w in re.findall(r"[A-Za-z0-9_]+", query) if len(w) > 1]
        if not words:
            return []
        # -uu: the corpus directory holds exactly the indexed files; do not let
        # ignore files or hidden-file rules change the set.
        args = ["rg", "--no-config", "-uu", "-i", "-w", "--no-messages", "-c" if self.counted else "-l"]
        for w in words:
            args += ["-e", w]
        out = subprocess.run(args + ["--", "."], cwd=self.root, capture_output=True, text=True).stdout
        if not self.counted:
            return out.splitlines()[:k]
        counts = []
        for line in out.splitlines():
            path, _, n = line.rpartition(":")
            counts.append((-int(n or 0), path))
        counts.sort()
        return [p for _, p in counts[:k]]


def all_contenders(corpus: str) -> list[Contender]:
    """Every contender, in table order (rank_bm25 only on the stdlib and small corpora)."""
    out: list[Contender] = [Codelex(), Ripgrep(counted=False), Ripgrep(counted=True)]
    for backend in ("numpy", "numba"):
        out.append(Bm25sCodelexTokens(backend))
        out.append(Bm25sOwnTokens(backend))
    out += [Tantivy(own_tokenizer=False), Tantivy(own_tokenizer=True)]
    if corpus == "stdlib" or corpus.startswith("synthetic:") and int(corpus.split(":")[1]) <= 5000:
        out += [RankBm25(own_tokenizer=False), RankBm25(own_tokenizer=True)]
    return out


def contender_by_name(name: str, corpus: str) -> Contender:
    for c in all_contenders(corpus) + [RankBm25(False), RankBm25(True)]:
        if c.name == name:
            return c
    raise KeyError(name)
