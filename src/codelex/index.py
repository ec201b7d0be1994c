"""The word index: documents in, ranked files out.

Storage is a CSR segment of numpy arrays built by the native core (see
``csrc/index_build.hpp``): per term its documents (uint32, ascending) and term
frequencies, with the line numbers kept apart as varint deltas so that the
scoring loop (``csrc/bm25.cpp``) never reads them.  Python holds the document
table (paths, per-document attributes) and turns filters and priors into
per-document arrays that the native loop consumes.
"""

from __future__ import annotations

import math
import os
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from codelex._native import _core
from codelex.kinds import KINDS, extname, kind_of
from codelex.priors import (
    DOC_FACTOR,
    FLAG_DOC,
    FLAG_TEST_VENDOR,
    TEST_VENDOR_FACTOR,
    centrality_factor,
    prior_flags,
)
from codelex.query import Filter, parse_query, paths_predicate, resolve_kind, validate_filters
from codelex.tokenize import Vocabulary

Hit = _core.Hit

_KIND_IDS = {kind: i for i, kind in enumerate(sorted(KINDS))}
_NO_KIND = len(_KIND_IDS)
_WINDOWS = os.name == "nt"


def _check_path(path: object) -> str:
    if not isinstance(path, str):
        raise TypeError(f"path must be str, not {type(path).__name__}")
    if "\x00" in path:
        raise ValueError("path contains a NUL character")
    return path.replace("\\", "/") if _WINDOWS else path


def _check_content(content: object) -> str | bytes:
    if not isinstance(content, (str, bytes)):
        raise TypeError(f"content must be str or bytes, not {type(content).__name__}")
    return content


class WordIndex:
    """Identifier-aware BM25 index over a set of files.

    Build one with :meth:`WordIndex.build`; query it with :meth:`search`.

    Examples
    --------
    >>> index = WordIndex.build([("src/auth.py", "def authenticate_user(name): ...")])
    >>> [hit.file for hit in index.search("authenticate user")]
    ['src/auth.py']
    """

    K1 = 1.2
    B = 0.75

    def __init__(self) -> None:
        self._vocab = Vocabulary()
        self._paths: list[str] = []
        self._doc_of: dict[str, int] = {}
        self._arrays: dict[str, np.ndarray] = {}
        self._searcher = None
        self._mask_cache: OrderedDict = OrderedDict()
        self._mult_cache: dict = {}

    # --- construction ---------------------------------------------------------

    @classmethod
    def build(cls, docs: Iterable[tuple[str, str | bytes]]) -> WordIndex:
        """Build an index from ``(path, content)`` pairs.

        Parameters
        ----------
        docs : iterable of (str, str or bytes)
            Paths are stored as given (``/``-separated, project-relative when
            they come from a project); a repeated path keeps its last content.
            Bytes are decoded as UTF-8, ill-formed sequences acting as
            separators.

        Returns
        -------
        WordIndex

        Raises
        ------
        TypeError
            If a path is not a str or a content is neither str nor bytes.
        ValueError
            If a path contains a NUL character.
        """
        latest: dict[str, str | bytes] = {}
        for item in docs:
            try:
                path, content = item
            except (TypeError, ValueError):
                raise TypeError("docs must be (path, content) pairs") from None
            latest[_check_path(path)] = _check_content(content)
        self = cls()
        self._paths = list(latest)
        self._doc_of = {p: i for i, p in enumerate(self._paths)}
        arrays = _core.build_segment(self._vocab, latest.values())
        self._install(arrays)
        return self

    def _install(self, arrays: dict[str, np.ndarray]) -> None:
        self._arrays = arrays
        term_ptr = arrays["term_ptr"]
        df = np.diff(term_ptr).astype(np.uint32)
        if len(df) < len(self._vocab):
            df = np.concatenate([df, np.zeros(len(self._vocab) - len(df), np.uint32)])
        self._df = df
        doc_len = arrays["doc_len"]
        self._total_tokens = int(doc_len.sum(dtype=np.uint64))
        order = sorted(range(len(self._paths)), key=self._paths.__getitem__)
        rank = np.empty(len(self._paths), dtype=np.uint32)
        rank[np.asarray(order, dtype=np.int64)] = np.arange(len(self._paths), dtype=np.uint32)
        self._path_rank = rank
        self._flags = np.fromiter((prior_flags(p) for p in self._paths), dtype=np.uint8, count=len(self._paths))
        self._kind_id = np.fromiter(
            (_KIND_IDS.get(kind_of(p) or "", _NO_KIND) for p in self._paths), dtype=np.int16, count=len(self._paths)
        )
        self._ext = [extname(p).lower() for p in self._paths]
        self._searcher = _core.Searcher(
            self._vocab, arrays, doc_len, self._df, rank, float(len(self._paths)), float(self._total_tokens)
        )
        self._mask_cache.clear()
        self._mult_cache.clear()

    # --- introspection --------------------------------------------------------

    def __len__(self) -> int:
        return len(self._paths)

    def __contains__(self, path: object) -> bool:
        return path in self._doc_of

    def __repr__(self) -> str:
        return f"<WordIndex files={len(self)} terms={int(np.count_nonzero(self._df))}>"

    @property
    def files(self) -> list[str]:
        """Indexed paths, in document order."""
        return list(self._paths)

    def stats(self) -> dict[str, int]:
        """Sizes of the index.

        Returns
        -------
        dict
            ``files``; ``tokens`` (distinct tokens with postings);
            ``postings`` (one per token, file and line, as the original
            counts them); ``term_doc_pairs`` (stored postings, one per token
            and file); ``total_tokens`` (token occurrences, repeats counted);
            ``index_bytes`` (the numpy arrays: postings, lines, lengths,
            forward index, document frequencies); ``vocabulary_bytes`` (the
            term dictionary: strings, offsets and hash table).
        """
        arrays = self._arrays
        index_bytes = sum(int(a.nbytes) for a in arrays.values() if a is not None)
        index_bytes += int(self._df.nbytes) + int(self._path_rank.nbytes)
        return {
            "files": len(self._paths),
            "tokens": int(np.count_nonzero(self._df)),
            "postings": int(arrays["post_tf"].sum(dtype=np.uint64)),
            "term_doc_pairs": int(arrays["post_doc"].shape[0]),
            "total_tokens": self._total_tokens,
            "index_bytes": index_bytes,
            "vocabulary_bytes": int(self._vocab.memory_bytes()),
        }

    def document_length(self, path: str) -> int:
        """Token occurrences of an indexed file (``KeyError`` when absent)."""
        return int(self._arrays["doc_len"][self._doc_of[path]])

    # --- search ---------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        paths: Sequence[str] | str | None = None,
        lang: str | None = None,
        centrality: Mapping[str, int] | None = None,
        demote_test_vendor: bool = True,
        demote_docs: bool = True,
    ) -> list[Hit]:
        """Rank files for a query.

        Parameters
        ----------
        query : str
            Free text plus inline filters (``lang:``, ``file:``, ``ext:``,
            negated with ``-``); see :func:`codelex.parse_query`.
        limit : int, default 20
            Maximum number of hits; ``<= 0`` gives none.
        paths : sequence of str, optional
            Globs over the stored paths; a bare directory scopes its subtree.
        lang : str, optional
            A kind of :data:`codelex.KINDS` (case-insensitive).
        centrality : mapping of str to int, optional
            Importing-file counts per path; boosts by ``1 + ln(1 + c) / 4``.
        demote_test_vendor, demote_docs : bool, default True
            Apply the ×0.3 test/vendor and ×0.5 doc/data priors.

        Returns
        -------
        list of Hit
            Best first; ties broken by path.

        Raises
        ------
        TypeError
            If ``query`` is not a str.
        codelex.QueryError
            For an unknown ``lang:`` in the query or ``lang`` parameter.
        """
        parsed = parse_query(query)
        if not isinstance(limit, int):
            raise TypeError(f"limit must be int, not {type(limit).__name__}")
        mask = self._mask(parsed.filters, paths, lang)
        if limit <= 0 or not parsed.tokens:
            return []
        if mask is not None and not mask.any():
            return []
        mult = self._multiplier(demote_test_vendor, demote_docs, centrality)
        return self._searcher.search_hits(list(parsed.tokens), limit, self._paths, mask, mult)

    # --- filters and priors ---------------------------------------------------

    def _filter_mask(self, flt: Filter) -> np.ndarray:
        """Documents matching the un-negated condition of one filter (cached)."""
        key = (flt.key, flt.value)
        mask = self._mask_cache.get(key)
        if mask is not None:
            try:
                self._mask_cache.move_to_end(key)
            except KeyError:  # evicted by a concurrent search; the mask is still valid
                pass
            return mask
        if flt.key == "lang":
            mask = self._kind_id == _KIND_IDS[resolve_kind(flt.value)]
        elif flt.key == "ext":
            want = "." + flt.value.lstrip(".").lower()
            mask = np.fromiter((e == want for e in self._ext), dtype=bool, count=len(self._ext))
        else:
            needle = flt.value.replace("\\", "/")
            if _WINDOWS:
                needle = needle.lower()
                mask = np.fromiter((needle in p.lower() for p in self._paths), dtype=bool, count=len(self._paths))
            else:
                mask = np.fromiter((needle in p for p in self._paths), dtype=bool, count=len(self._paths))
        self._remember(key, mask)
        return mask

    def _remember(self, key, mask: np.ndarray) -> None:
        self._mask_cache[key] = mask
        while len(self._mask_cache) > 256:
            try:
                self._mask_cache.popitem(last=False)
            except KeyError:  # emptied by a concurrent search
                break

    def _mask(self, filters: Sequence[Filter], paths, lang) -> np.ndarray | None:
        validate_filters(filters)
        if lang is not None:
            if not isinstance(lang, str):
                raise TypeError(f"lang must be str, not {type(lang).__name__}")
            lang_kind = resolve_kind(lang, inline=False)
        predicate = paths_predicate(paths)
        if not filters and lang is None and predicate is None:
            return None
        n = len(self._paths)
        mask = np.ones(n, dtype=bool)
        groups: dict[str, np.ndarray] = {}
        for flt in filters:
            m = self._filter_mask(flt)
            if flt.negated:
                mask &= ~m
            else:
                groups[flt.key] = groups[flt.key] | m if flt.key in groups else m.copy()
        for m in groups.values():
            mask &= m
        if lang is not None:
            mask &= self._kind_id == _KIND_IDS[lang_kind]
        if predicate is not None:
            key = ("paths", tuple(paths) if not isinstance(paths, str) else (paths,))
            pm = self._mask_cache.get(key)
            if pm is None:
                pm = np.fromiter((predicate(p) for p in self._paths), dtype=bool, count=n)
                self._remember(key, pm)
            mask &= pm
        return mask.view(np.uint8)

    def _multiplier(self, demote_test_vendor: bool, demote_docs: bool, centrality) -> np.ndarray | None:
        key = (bool(demote_test_vendor), bool(demote_docs))
        base = self._mult_cache.get(key)
        if base is None:
            base = np.ones(len(self._paths), dtype=np.float64)
            if demote_test_vendor:
                base[(self._flags & FLAG_TEST_VENDOR) != 0] *= TEST_VENDOR_FACTOR
            if demote_docs:
                base[(self._flags & FLAG_DOC) != 0] *= DOC_FACTOR
            self._mult_cache[key] = base
        if centrality:
            mult = base.copy()
            for path, count in centrality.items():
                doc = self._doc_of.get(path)
                if doc is not None:
                    mult[doc] *= centrality_factor(int(count or 0))
            return mult
        if not demote_test_vendor and not demote_docs:
            return None
        return base


__all__ = ["Hit", "WordIndex"]
