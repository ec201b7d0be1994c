"""Reference field-aware ranking (BM25F): the oracle of the native ``code`` ranking (pure Python, tests only).

A document has four fields:

- ``body``: its content, tokenized line by line (tf = lines mentioning the
  token, length = token occurrences), as in the classic index;
- ``dir``: the identifiers of its directory path (presence; length = tokens);
- ``name``: the identifiers of its file name without the extension;
- ``defs``: the identifiers of the names it defines (tf = distinct lines
  defining them, length = tokens).

For a query token t, with its stem variants u (weight ``stem_weight``; t
itself weighs 1) folded in::

    tf~(d) = sum over t and its u, then over f: weight * (tf_f(d, u) * (w_f / (1 - b_f + b_f * len_f(d) / avglen_f)))
    score(d) += idf(t) * tf~ * (k1 + 1) / (k1 + tf~)

(tf~ summed as the body's part plus the other fields' part, terms in that
order and each term's fields in order, as the native passes add them), with
``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))`` and df the largest document
frequency of t and its variants over the fields.  A document whose
definitions hold every query token gets ``def_boost``, and one whose file
name holds every query token ``name_boost`` (multipliers; variants do not
count), then the path priors multiply as in
the classic ranking.  Ties go to the smaller path.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from codelex._reference.definitions import scan_definitions
from codelex._reference.tokenize import tokenize_document, tokenize_line
from codelex.defaults import BM25_K1, DEF_BOOST, FIELD_B, FIELD_WEIGHTS, NAME_BOOST, STEM_WEIGHT

__all__ = ["FIELDS", "FieldParams", "ReferenceFieldIndex", "field_tokens"]

FIELDS = ("body", "dir", "name", "defs")


@dataclass(frozen=True)
class FieldParams:
    """Weights and length normalisation per field, and the boosts (default: :mod:`codelex.defaults`')."""

    k1: float = BM25_K1
    weights: tuple[float, float, float, float] = FIELD_WEIGHTS
    b: tuple[float, float, float, float] = FIELD_B
    def_boost: float = DEF_BOOST
    name_boost: float = NAME_BOOST
    stem_weight: float = STEM_WEIGHT


def _path_parts(path: str) -> tuple[str, str]:
    directory, _, base = path.rpartition("/")
    dot = base.rfind(".")
    stem = base[:dot] if dot > 0 else base
    return directory, stem


def field_tokens(path: str, content, definitions: Iterable[tuple[str, int]] | None = None
                 ) -> dict[str, list[tuple[int, str]]]:
    """Every field's token occurrences as ``(line, token)``; lines are 0 outside the body and defs.

    ``definitions`` (``(name, line)`` pairs) default to the definition scanner's.
    """
    directory, stem = _path_parts(path)
    if definitions is None:
        definitions = scan_definitions(path, content)
    out: dict[str, list[tuple[int, str]]] = {
        "body": tokenize_document(content),
        "dir": [(0, t) for t in tokenize_line(directory)],
        "name": [(0, t) for t in tokenize_line(stem)],
        "defs": [(line, t) for name, line in definitions for t in tokenize_line(name)],
    }
    return out


@dataclass
class _Doc:
    length: dict[str, int] = field(default_factory=dict)
    lines: dict[str, dict[str, set[int]]] = field(default_factory=dict)  # field -> token -> lines


class ReferenceFieldIndex:
    """Dictionary-based field index: token -> doc -> lines, per field."""

    def __init__(self, docs: Iterable[tuple] = ()) -> None:
        self.docs: dict[str, _Doc] = {}
        for path, content, *definitions in docs:
            self.update(path, content, definitions[0] if definitions else None)

    def update(self, path: str, content, definitions: Iterable[tuple[str, int]] | None = None) -> None:
        doc = _Doc()
        for f, occurrences in field_tokens(path, content, definitions).items():
            doc.length[f] = len(occurrences)
            lines: dict[str, set[int]] = {}
            for line, token in occurrences:
                lines.setdefault(token, set()).add(line)
            doc.lines[f] = lines
        self.docs[path] = doc

    def remove(self, path: str) -> bool:
        return self.docs.pop(path, None) is not None

    def df(self, token: str) -> int:
        return max(sum(1 for d in self.docs.values() if token in d.lines[f]) for f in FIELDS)

    def words(self) -> list[str]:
        """The body tokens (df > 0) that are words: ASCII lower-case letters, 3 to 24 long; sorted."""
        found = {t for d in self.docs.values() for t in d.lines["body"]}
        return sorted(t for t in found if 3 <= len(t) <= 24 and t.isascii() and t.isalpha() and t.islower())

    def stem_variants(self, query: str) -> dict[str, list[str]]:
        """Each query token's stem variants, for a prose query (else none).

        Prose: two or more words of lower-case letters.  A variant of a word
        with Snowball stem ``s``: another word with stem ``s`` that begins
        with ``s`` less its last letter.
        """
        words_of_query = query.split()
        if len(words_of_query) < 2 or not all(w.isalpha() and w.islower() for w in words_of_query):
            return {}
        import Stemmer

        stemmer = Stemmer.Stemmer("english")
        words = self.words()
        out = {}
        for t in dict.fromkeys(tokenize_line(query)):
            if not (3 <= len(t) <= 24 and t.isascii() and t.isalpha() and t.islower()):
                continue
            s = stemmer.stemWord(t)
            prefix = s[:-1] if len(s) > 1 else s
            out[t] = [w for w in words if w != t and w.startswith(prefix) and stemmer.stemWord(w) == s]
        return out

    def search(self, query: str, params: FieldParams = FieldParams(), *, limit: int = 20,
               allowed: Callable[[str], bool] | None = None, multiplier: Callable[[str], float] | None = None
               ) -> list[tuple[str, float, int, int, tuple[str, ...]]]:
        """``[(path, score, hits, best line, matched fields)]``, best first (``query``: search terms only)."""
        tokens = list(dict.fromkeys(tokenize_line(query)))
        stems = self.stem_variants(query) if params.stem_weight > 0 else {}
        if not tokens or limit <= 0 or not self.docs:
            return []
        n = len(self.docs)
        avg = {f: (sum(d.length[f] for d in self.docs.values()) / n) or 1.0 for f in FIELDS}
        # One group per query token: the token (weight 1), then its stem variants (stem_weight).
        groups: list[list[tuple[str, float]]] = []
        for t in tokens:
            members = [(t, 1.0)]
            if params.stem_weight > 0:
                members += [(u, params.stem_weight) for u in stems.get(t, []) if u not in tokens]
            groups.append(members)
        idf = {}  # per query token: from the largest df among its group's terms
        for members in groups:
            df = max(self.df(u) for u, _ in members)
            if df:
                idf[members[0][0]] = math.log(1 + (n - df + 0.5) / (df + 0.5))
        line_idf = {t: v for t, v in idf.items() if self.df(t)}  # the best line weighs the tokens themselves
        results = []
        for path, doc in self.docs.items():
            if allowed is not None and not allowed(path):
                continue
            score = 0.0
            hits = 0
            matched: set[str] = set()
            for members in groups:
                t = members[0][0]
                if t not in idf:
                    continue
                # tf~ = body part + other parts; members in order, each member's fields in order.
                body = extra = 0.0
                body_tf = 0
                for u, weight in members:
                    for i, f in enumerate(FIELDS):
                        tf = len(doc.lines[f].get(u, ()))
                        if tf:
                            matched.add(f)
                            norm = 1 - params.b[i] + params.b[i] * doc.length[f] / avg[f]
                            c = weight * (tf * (params.weights[i] / norm))
                            if i == 0:
                                body += c
                                body_tf += tf
                            else:
                                extra += c
                tilde = body + extra
                if tilde:
                    score += 1.0 * idf[t] * tilde * (params.k1 + 1) / (params.k1 + tilde)
                    hits += body_tf
            if score <= 0:
                continue
            if params.def_boost != 1.0 and all(t in doc.lines["defs"] for t in tokens):
                score *= params.def_boost
            if params.name_boost != 1.0 and all(t in doc.lines["name"] for t in tokens):
                score *= params.name_boost
            if multiplier is not None:
                score *= multiplier(path)
            fields = tuple(f for f in FIELDS if f in matched)
            results.append((path, score, hits, self._best_line(doc, tokens, line_idf), fields))
        results.sort(key=lambda r: (-r[1], r[0]))
        return results[:limit]

    @staticmethod
    def _best_line(doc: _Doc, tokens: list[str], idf: dict[str, float]) -> int:
        """The line with the largest total idf of query tokens, definitions counting again; earliest on ties."""
        weights: dict[int, float] = {}
        for f in ("body", "defs"):
            for t in tokens:
                if t in idf:
                    for line in doc.lines[f].get(t, ()):
                        weights[line] = weights.get(line, 0.0) + idf[t]
        if not weights:
            return 1
        return min(weights, key=lambda ln: (-weights[ln], ln))
