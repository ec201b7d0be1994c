"""Reference BM25 word index: the oracle of ``csrc/lexical`` and ``csrc/score`` (pure Python, tests only).

Dictionaries of postings token -> file -> lines, scored with the original's
formula term by term; the native index must give the same files, scores
(to rounding), hits and best lines.
"""

from __future__ import annotations

import math

from codelex._reference.tokenize import tokenize_document, tokenize_line
from codelex.defaults import BM25_B as B
from codelex.defaults import BM25_K1 as K1


class ReferenceIndex:
    """Dictionary-based word index: postings token -> file -> set of lines."""

    def __init__(self, docs=()):
        self.postings: dict[str, dict[str, set[int]]] = {}
        self.doc_len: dict[str, int] = {}
        for path, content in docs:
            self.update(path, content)

    def update(self, path: str, content: str | bytes) -> None:
        self.remove(path)
        length = 0
        for line_no, token in tokenize_document(content):
            length += 1
            self.postings.setdefault(token, {}).setdefault(path, set()).add(line_no)
        self.doc_len[path] = length

    def remove(self, path: str) -> bool:
        if path not in self.doc_len:
            return False
        del self.doc_len[path]
        for token in list(self.postings):
            files = self.postings[token]
            if files.pop(path, None) is not None and not files:
                del self.postings[token]
        return True

    @property
    def total_tokens(self) -> int:
        return sum(self.doc_len.values())

    def idf(self, token: str) -> float:
        n = len(self.doc_len) or 1
        df = len(self.postings.get(token, {}))
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def search(self, terms: str, *, limit=20, allowed=None, multiplier=None):
        """BM25 over ``terms``; returns ``[(path, score, hits, best_line)]``.

        ``allowed(path)`` filters files after df is taken (df stays global);
        ``multiplier(path)`` is the prior applied to a file's score.
        """
        tokens = list(dict.fromkeys(tokenize_line(terms)))
        if not tokens or limit <= 0:
            return []
        n = len(self.doc_len) or 1
        avgdl = self.total_tokens / n or 1.0
        scores: dict[str, float] = {}
        hits: dict[str, int] = {}
        line_weight: dict[str, dict[int, float]] = {}
        for token in tokens:
            files = self.postings.get(token)
            if not files:
                continue
            idf = self.idf(token)
            for path, lines in files.items():
                if allowed is not None and not allowed(path):
                    continue
                tf = len(lines)
                dl = self.doc_len.get(path, avgdl)
                score = idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / avgdl))
                scores[path] = scores.get(path, 0.0) + score
                hits[path] = hits.get(path, 0) + tf
                weights = line_weight.setdefault(path, {})
                for line in lines:
                    weights[line] = weights.get(line, 0.0) + idf
        results = []
        for path, score in scores.items():
            if multiplier is not None:
                score *= multiplier(path)
            weights = line_weight[path]
            best = min(weights, key=lambda ln: (-weights[ln], ln))
            results.append((path, score, hits[path], best))
        results.sort(key=lambda r: (-r[1], r[0]))
        return results[:limit]


__all__ = ["B", "K1", "ReferenceIndex"]
