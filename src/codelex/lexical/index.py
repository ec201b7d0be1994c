"""The word index: documents in, ranked files out, kept fresh edit by edit.

Storage is the native live index (``csrc/lexical/live_index.hpp``): an
immutable CSR base segment, a small mutable delta segment for edited
documents and a per-slot document table.  Python holds what filters and
priors need per slot (:class:`~codelex.lexical.doctable.DocTable`) and turns
filters into per-slot masks (:mod:`codelex.lexical.masks`) and priors into
multipliers (:mod:`codelex.lexical.priors`) that the native scoring loop
(``csrc/score/bm25.cpp``) consumes; bulk builds run on worker threads
(:mod:`codelex.lexical.build`).

Concurrency model
-----------------
Writers (:meth:`WordIndex.update`, :meth:`~WordIndex.remove`,
:meth:`~WordIndex.merge`, :meth:`~WordIndex.save`) are serialized by one lock.
Searches take no Python lock: the native index applies each update under a
short exclusive section and searches read under a shared one, so a search
sees an update entirely or not at all.  A search names the slot layout
(generation) that its masks describe; when a writer has just added a slot
or merged, the search waits for the writer to publish the new layout and
runs again.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from codelex._native import lexical as _lexical
from codelex._native import native_errors
from codelex._native import text as _text
from codelex.defaults import (
    BM25_B,
    BM25_K1,
    DEF_BOOST,
    DEFAULT_MAX_BYTES,
    FIELD_B,
    FIELD_WEIGHTS,
    MERGE_MIN_POSTINGS,
    MERGE_RATIO,
    NAME_BOOST,
    STEM_WEIGHT,
)
from codelex.errors import IndexFormatError
from codelex.lexical.build import build_into, first_occurrences
from codelex.lexical.checks import check_content, check_definitions, check_max_bytes, check_mtime, check_path
from codelex.lexical.doctable import NO_KIND, DocTable, PathTable, rules_fingerprint
from codelex.lexical.hits import Hit
from codelex.lexical.masks import search_mask
from codelex.lexical.priors import slot_multipliers
from codelex.lexical.shards import GlobalQueryStats, ShardQueryStats
from codelex.lexical.stems import StemTable, is_prose, stemmer_available
from codelex.query.options import SearchOptions, check_limit
from codelex.query.request import Request, parse_request
from codelex.text import Vocabulary, utf8_length

if TYPE_CHECKING:
    from codelex.persist.lexical import LexicalSnapshot

__all__ = ["FileInfo", "Hit", "WordIndex"]

#: Below this many base postings in all, scoring every posting beats pruning (Linux tree: 4,096 against 16,384
#: took the code ranking's p50 from 63 to 47 µs and the mix's from 78 to 56; lower hurt the stdlib's p95).
PRUNE_MIN_POSTINGS = 4096


class FileInfo(NamedTuple):
    """What the index recorded about a file when it indexed it."""

    mtime_ns: int
    """Modification time in ns as given to the index (−1 when unknown, e.g. a per-edit update)."""
    size: int
    """Size of the indexed content in UTF-8 bytes."""
    tokens: int
    """Token occurrences (the BM25 document length)."""


#: The segment's arrays as a snapshot carries them, and those checked chunk by chunk.
_BLOCK_ARRAYS = tuple(name + suffix for name in ("term_ptr_rel", "post_doc", "line_ckpt_rel")
                      for suffix in ("", "_min", "_width", "_off"))
_SEGMENT_ARRAYS = ("term_ptr_base", *_BLOCK_ARRAYS, "post_tf", "tf_big_pos", "tf_big_val", "line_ckpt_base",
                   "line_data", "doc_len", "field_len")
_CHECKED_ARRAYS = (*_BLOCK_ARRAYS, "post_tf", "line_data")


class _View(NamedTuple):
    """A consistent snapshot of the slot layout: table, slot count, native generation."""

    table: DocTable
    n: int
    generation: int


def files_digest(paths, mtimes, sizes) -> str:
    """The digest of a file table (see :meth:`WordIndex.files_digest`): one xxh3-64 per ``(path, mtime_ns,
    size)``, combined by a sum and an exclusive or (so in any order), with the count."""
    import xxhash

    total = mixed = 0
    for path, mtime, size in zip(paths, mtimes, sizes):
        h = xxhash.xxh3_64_intdigest(b"%s\0%d\0%d" % (path.encode("utf-8", "surrogatepass"), mtime, size))
        total = (total + h) & 0xFFFFFFFFFFFFFFFF
        mixed ^= h
    return f"f1:{len(paths):x}:{total:016x}{mixed:016x}"


class WordIndex:
    """Identifier-aware BM25 index over a set of files, updatable per edit.

    Build one with :meth:`WordIndex.build` (or start empty and
    :meth:`update`), query it with :meth:`search`, keep it fresh with
    :meth:`update` and :meth:`remove`, persist it with :meth:`save` and
    :meth:`load`.  Any sequence of updates and removals gives exactly the
    results of a fresh build over the final documents.

    Parameters
    ----------
    max_bytes : int or None, default 512 KiB
        Documents larger than this (in UTF-8 bytes) are not indexed: an
        update with larger content removes the document.  ``None``: no cap.

    Attributes
    ----------
    k1, b : float
        The BM25 parameters (default 1.2 and 0.75, the original's); the
        code ranking's saturation is ``k1`` too.
    field_weights, field_b : tuple of 4 floats
        The code ranking's weight and length normalisation per field (body,
        dir, name, defs).
    def_boost, name_boost : float
        Multipliers of a file that defines every query token, or whose file
        name holds them (code ranking).
    stem_weight : float
        Weight of a query token's stem variants (code ranking; 0: off;
        needs PyStemmer).
    merge_ratio : float or None
        Merge the delta into a new base once the postings it holds or
        obsoletes exceed this fraction of the live postings (and
        :attr:`merge_min_postings`).  ``None`` merges only when a hard limit
        requires it or on :meth:`merge`.
    merge_min_postings : int
        Floor of the merge threshold, so small indexes do not merge on
        every edit.

    Examples
    --------
    >>> index = WordIndex.build([("src/auth.py", "def authenticate_user(name): ...")])
    >>> [hit.file for hit in index.search("authenticate user")]
    ['src/auth.py']
    >>> index.update("src/session.py", "class UserSession: ...")
    True
    >>> [hit.file for hit in index.search("user session")]
    ['src/session.py', 'src/auth.py']
    """

    def __init__(self, *, max_bytes: int | None = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = check_max_bytes(max_bytes)
        self.merge_ratio: float | None = MERGE_RATIO
        self.merge_min_postings = MERGE_MIN_POSTINGS
        self.b = BM25_B
        # The code ranking's parameters, checked natively once per change (see codelex.defaults).
        self._ranking = _lexical.FieldRanking(BM25_K1, FIELD_WEIGHTS, FIELD_B, DEF_BOOST, NAME_BOOST)
        self._stem_weight = STEM_WEIGHT
        self._stems = None
        #: Score every posting instead of pruning (tests compare the two paths).
        self.exhaustive = False
        #: Prune multi-term queries over at least this many base postings (0: always).
        self.prune_min_postings = PRUNE_MIN_POSTINGS
        self._vocab = Vocabulary()
        self._live = _lexical.LiveIndex(self._vocab)
        self._write_lock = threading.RLock()
        self._view = _View(DocTable([]), 0, self._live.generation)
        #: A loaded index whose dictionary has not been readied for edits yet (see :meth:`prepare_edits`).
        self._cold = False
        #: Free-form JSON-compatible data saved with the index (see :meth:`save`).
        self.metadata: dict = {}
        self._edits = 0  # updates and removals applied (see :attr:`edits`)
        self._file_changes = 0  # files added or removed (see :attr:`file_set_version`)
        self._files_digest: tuple[int, str] | None = None  # (edits, digest) of files_digest()

    # --- ranking parameters ----------------------------------------------------

    def _set_ranking(self, **changes: object) -> None:
        r = self._ranking
        params = {"k1": r.k1, "weights": r.weights, "bs": r.bs, "def_boost": r.def_boost, "name_boost": r.name_boost}
        params.update(changes)
        self._ranking = _lexical.FieldRanking(**params)  # ValueError out of range; nothing changed then

    @property
    def k1(self) -> float:
        """BM25 term-frequency saturation, both rankings (default 1.2)."""
        return self._ranking.k1

    @k1.setter
    def k1(self, value: float) -> None:
        self._set_ranking(k1=value)

    @property
    def field_weights(self) -> tuple[float, float, float, float]:
        """The code ranking's weight per field (body, dir, name, defs)."""
        return self._ranking.weights

    @field_weights.setter
    def field_weights(self, value) -> None:
        self._set_ranking(weights=value)

    @property
    def field_b(self) -> tuple[float, float, float, float]:
        """The code ranking's length normalisation per field, each in [0, 1]."""
        return self._ranking.bs

    @field_b.setter
    def field_b(self, value) -> None:
        self._set_ranking(bs=value)

    @property
    def def_boost(self) -> float:
        """Multiplier of a file that defines every query token (code ranking)."""
        return self._ranking.def_boost

    @def_boost.setter
    def def_boost(self, value: float) -> None:
        self._set_ranking(def_boost=value)

    @property
    def name_boost(self) -> float:
        """Multiplier of a file whose name holds every query token (code ranking)."""
        return self._ranking.name_boost

    @name_boost.setter
    def name_boost(self, value: float) -> None:
        self._set_ranking(name_boost=value)

    @property
    def stem_weight(self) -> float:
        """Weight of a query token's stem variants in the code ranking (0: off; needs PyStemmer)."""
        return self._stem_weight

    @stem_weight.setter
    def stem_weight(self, value: float) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"stem_weight must be a number, not {type(value).__name__}")
        if not 0 <= value < float("inf"):
            raise ValueError(f"stem_weight must be finite and >= 0, not {value}")
        if value > 0:
            missing = stemmer_available()
            if missing:
                raise ImportError(missing)
        self._stem_weight = float(value)

    # --- construction ---------------------------------------------------------

    @classmethod
    def build(
        cls,
        docs: Iterable[tuple[str, str | bytes] | tuple[str, str | bytes, int]],
        *,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
        workers: int | None = None,
    ) -> WordIndex:
        """Build an index from ``(path, content)`` or ``(path, content, mtime_ns)`` items.

        Parameters
        ----------
        docs : iterable of tuples
            Paths are stored as given (``/``-separated, project-relative when
            they come from a project); a repeated path keeps its first
            position and its last content.  Bytes are decoded as UTF-8,
            ill-formed sequences acting as separators.  Contents are
            tokenized as they arrive and not kept, so a generator streams.
            ``mtime_ns`` (default −1, unknown) is recorded for staleness
            checks (see :meth:`file_info`).
        max_bytes : int or None, default 512 KiB
            Larger documents are left out.
        workers : int, optional
            Threads tokenizing in parallel (default: the number of CPUs, at
            most 8).  Documents are cut into batches of about 8 MB; each
            batch's segment is built on a worker and the batches are then
            joined, so the result does not depend on ``workers``.

        Returns
        -------
        WordIndex

        Raises
        ------
        TypeError
            If an item is not such a tuple, a path is not a str, a content is
            neither str nor bytes, or an mtime is not an int.
        ValueError
            If a path contains a NUL character.
        """
        self = cls(max_bytes=max_bytes)
        later: list[tuple[str, str | bytes, int]] = []  # repeated or oversized: applied as updates
        paths = build_into(self._live, first_occurrences(docs, self.max_bytes, later), workers)
        self._view = _View(DocTable(paths), len(paths), self._live.generation)
        if later:
            merge_ratio, self.merge_ratio = self.merge_ratio, None
            for path, content, mtime, definitions in later:
                self.update(path, content, mtime_ns=mtime, definitions=definitions)
            self.merge_ratio = merge_ratio
            self.merge()
        return self

    # --- incremental maintenance ----------------------------------------------

    def update(self, path: str, content: str | bytes, *, mtime_ns: int = -1,
               definitions: Sequence[tuple[str, int]] | None = None) -> bool:
        """Replace (or add) the document at ``path``.

        Costs O(the document's own postings), from the first edit on: the
        old document is retired (a bit cleared; its postings stop counting
        where statistics are read), the new postings appended to the delta
        segment; nothing is derived over the whole index.  A merge may follow
        (see :attr:`merge_ratio`).

        Parameters
        ----------
        path : str
        content : str or bytes
        mtime_ns : int, default -1
            Modification time to record; −1 means unknown (a per-edit update
            of content that may not be on disk yet).
        definitions : sequence of (str, int), optional
            The names the document defines, with their lines (the code
            ranking's ``defs`` field); default: what the definition scanner
            finds in ``content``.

        Returns
        -------
        bool
            True when indexed; False when the content exceeds
            :attr:`max_bytes`, in which case the document is removed.

        Raises
        ------
        TypeError
            If ``path`` is not a str, ``content`` is neither str nor bytes,
            or ``mtime_ns`` is not an int.
        ValueError
            If ``path`` contains a NUL character.
        """
        path = check_path(path)
        content = check_content(content)
        mtime_ns = check_mtime(mtime_ns)
        definitions = check_definitions(definitions)
        size = utf8_length(content)
        with self._write_lock, native_errors():
            view = self._view
            slot = self._slot(path)
            if self.max_bytes is not None and size > self.max_bytes:
                if slot is not None and self._live.remove(slot):
                    self._edits += 1
                    self._file_changes += 1
                    self._maybe_merge()
                return False
            if slot is None:
                slot = self._live.add_slot(path, mtime_ns, size)
                view.table.append(path)
                self._view = _View(view.table, slot + 1, self._live.generation)
                self._file_changes += 1
            elif not self._live.alive(slot):
                self._file_changes += 1
            self._live.put(slot, content, mtime_ns, path, definitions)
            self._edits += 1
            self._maybe_merge()
        if self._cold:  # edits come in runs: ready the dictionary for the next ones
            self.prepare_edits()
        return True

    def remove(self, path: str) -> bool:
        """Remove the document at ``path``; False when it is not indexed.

        Raises
        ------
        TypeError
            If ``path`` is not a str.
        ValueError
            If ``path`` contains a NUL character.
        """
        path = check_path(path)
        with self._write_lock, native_errors():
            slot = self._slot(path)
            if slot is None or not self._live.remove(slot):
                return False
            self._edits += 1
            self._file_changes += 1
            self._maybe_merge()
        return True

    @property
    def edits(self) -> int:
        """How many updates and removals this index has applied (what derived views compare to stay current)."""
        return self._edits

    def files_digest(self) -> str:
        """A digest of what is indexed: every file's path, ``mtime_ns`` and size, in any order.

        Equal digests, the same files as read at the same times: what is derived from an index's files
        and saved apart from it (the import graph's counts) records it, and is believed only while the
        index still has it.  Saved with the index (read back from a file this user wrote, not recomputed).
        """
        edits = self._edits  # (read first: an edit meanwhile makes the next call compute again)
        cached = self._files_digest
        if cached is not None and cached[0] == edits:
            return cached[1]
        table = self.file_table()
        digest = files_digest([t[0] for t in table], [t[1] for t in table], [t[2] for t in table])
        self._files_digest = (edits, digest)
        return digest

    @property
    def file_set_version(self) -> int:
        """How many times a file was added to or removed from this index: what a view of its *set* of files (not
        their contents) compares to stay current."""
        return self._file_changes

    def merge(self) -> bool:
        """Fold pending updates and removals into a new compact base segment.

        Searches go on while the new segment is built and pause only for the
        swap.  Returns False when there was nothing to merge.
        """
        with self._write_lock, native_errors():
            live = self._live
            if live.merge_state()[1]:
                return False
            old_slots = live.merge()
            self._view = _View(self._view.table.compacted(old_slots), len(old_slots), live.generation)
        return True

    def prepare_edits(self) -> None:
        """Ready a loaded index for edits in the background, for an index that expects them (a watched project).

        Edits cost O(the edited document) from the first on; what a loaded
        index's first edits would still pay is the first touch of the mapped
        term dictionary their tokens are looked up in (each 64 KiB chunk
        verified against its digest, and faulted in).  A native thread does
        that for the whole dictionary now (about 40 ms on the Linux tree,
        the GIL released; the dictionary's pages become resident) and builds
        the path table edits use.  Nothing waits for it; the index stops and
        joins it when it goes away.  The first :meth:`update` of a loaded
        index calls this for the edits that follow; a built index needs none.
        """
        self._cold = False
        self._live.prepare_edits()

    def _slot(self, path: str) -> int | None:
        """The slot of ``path``, or None: the native table's (no path decoded, no dict built on a first edit)."""
        slot = self._live.find_slot(path)
        return None if slot < 0 else slot

    def _maybe_merge(self) -> None:
        ratio = -1.0 if self.merge_ratio is None else float(self.merge_ratio)
        if self._live.needs_merge(ratio, int(self.merge_min_postings)):
            self.merge()

    # --- persistence ----------------------------------------------------------

    def export_snapshot(self) -> LexicalSnapshot:
        """The index as plain arrays (merging pending changes first): what :meth:`save` writes.

        The arrays are copies: updates may go on while a snapshot is written.
        """
        from codelex.persist.lexical import LexicalSnapshot

        with self._write_lock, native_errors():
            self.merge()
            arrays, vocab_blob, vocab_offsets, mtime_ns, size = self._live.export()
            view = self._view
            paths = view.table.paths[: view.n]
            flags = view.table.flags(view.n).copy()
            kind = view.table.kind(view.n).copy()
            max_bytes = self.max_bytes
            metadata = dict(self.metadata)
            metadata["files_digest"] = digest = files_digest(paths, mtime_ns.tolist(), size.tolist())
            self._files_digest = (self._edits, digest)
        path_blob, path_offsets = _lexical.encode_paths(paths)
        vocab_blocks, block_offsets = _text.front_code(vocab_blob, vocab_offsets)
        vocab_block_base, vocab_block_rel = _text.pack_offsets(block_offsets)
        return LexicalSnapshot(
            **arrays, vocab_blocks=vocab_blocks, vocab_block_base=vocab_block_base, vocab_block_rel=vocab_block_rel,
            vocab_terms=len(vocab_offsets) - 1, term_heads=_text.term_heads(vocab_blob, vocab_offsets),
            term_filter=_text.term_filter(vocab_blob, vocab_offsets),
            path_blob=np.frombuffer(path_blob, dtype=np.uint8), path_offsets=path_offsets, mtime_ns=mtime_ns,
            size=size, prior_flags=flags, kind_id=kind, rules=rules_fingerprint(), max_bytes=max_bytes,
            metadata=metadata,
        )

    @classmethod
    def from_snapshot(cls, snapshot: LexicalSnapshot) -> WordIndex:
        """An index over a snapshot's arrays (borrowed, not copied: a mapped file stays mapped).

        Prior flags and language ids are recomputed when the snapshot was
        made under other path rules.

        Nothing is decoded or scanned: the term dictionary is searched in
        place and the paths are decoded as hits need them.  With the chunk
        digests of a load of a file this user wrote (``snapshot.trusted``),
        the native core verifies each chunk of the large arrays when it is
        first read; without them, the structure is validated in full here.

        Raises
        ------
        codelex.IndexFormatError
            When the arrays are structurally inconsistent.
        """
        # Digests are believed only from a file this user wrote: anyone can make a file's digests match it.
        digests = (snapshot.digests if snapshot.trusted else None) or {}
        try:
            vocab = Vocabulary.from_front_coded(snapshot.vocab_blocks, snapshot.vocab_block_base,
                                                snapshot.vocab_block_rel, snapshot.vocab_terms,
                                                digests.get("vocab_blocks"), digests.get("vocab_block_rel"),
                                                snapshot.term_heads, snapshot.term_filter, digests.get("term_filter"))
        except (ValueError, TypeError) as exc:
            raise IndexFormatError(f"corrupt index: term dictionary: {exc}") from None
        n = snapshot.n_docs
        kind = snapshot.kind_id
        paths = PathTable(blob=snapshot.path_blob, offsets=snapshot.path_offsets)
        if snapshot.rules == rules_fingerprint() and (n == 0 or (kind.min() >= 0 and kind.max() <= NO_KIND)):
            table = DocTable(paths, snapshot.prior_flags, kind)
        else:  # path rules changed since the save: derive the attributes again
            table = DocTable(paths)
        index = cls(max_bytes=snapshot.max_bytes)
        index._vocab = vocab
        index._live = _lexical.LiveIndex(vocab)
        try:
            with native_errors():
                index._live.install(
                    {name: getattr(snapshot, name) for name in _SEGMENT_ARRAYS},
                    snapshot.path_blob, snapshot.path_offsets, snapshot.mtime_ns, snapshot.size,
                    {name: digests[name] for name in _CHECKED_ARRAYS} if digests else None, len(vocab),
                )
        except (ValueError, KeyError) as exc:
            raise IndexFormatError(f"corrupt index: {exc}") from None
        index._view = _View(table, n, index._live.generation)
        index._cold = bool(digests)
        index.metadata = dict(snapshot.metadata)
        saved = index.metadata.get("files_digest")
        if isinstance(saved, str) and snapshot.trusted:  # (believed from a file this user wrote only)
            index._files_digest = (0, saved)
        index.metadata["saved_at"] = snapshot.saved_at
        return index

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the index atomically to the directory ``path`` (created if needed).

        Merges pending changes first; :attr:`metadata` (JSON-compatible) is
        saved with it.  See :mod:`codelex.persist.lexical` for the format.

        Raises
        ------
        OSError
            When the directory cannot be created or written.
        """
        from codelex.persist.lexical import save_lexical

        save_lexical(self.export_snapshot(), path)

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, mmap: bool = True, verify: bool = True,
             trusted_only: bool = False) -> WordIndex:
        """Load an index written by :meth:`save`.

        Parameters
        ----------
        path : str or path-like
            The index directory (or its ``index.clx`` file).
        mmap : bool, default True
            Map the arrays instead of reading them: opening then builds,
            decodes and scans nothing (the term dictionary is searched in
            place), whatever the index's size.
        verify : bool, default True
            Checksums: the small arrays' (xxh3) now, the large arrays' chunk
            by chunk (native 64 KiB digests) the first time a search or an
            edit reads them, so a flipped byte anywhere is detected before it
            is used (``IndexFormatError`` then).  ``False`` skips every
            checksum and validates the whole structure at load instead.
            :meth:`verify` checks everything at once.
        trusted_only : bool, default False
            Refuse a file this user's codelex did not write (its header's MAC
            is not this user's: committed to a repository, copied, forged).
            By default such a file is loaded as with ``verify=False``: its
            checksums prove nothing (whoever wrote it computed them), so the
            whole structure is validated before any of it is used.

        Raises
        ------
        codelex.IndexFormatError
            With a one-line reason, for anything that is not an intact index
            of this format version (with ``trusted_only``,
            ``codelex.persist.container.UntrustedIndexError`` for a file this
            user did not write).
        """
        from codelex.persist.lexical import load_lexical

        snapshot = load_lexical(path, mmap=mmap, verify=verify, allow_untrusted=not trusted_only)
        index = cls.from_snapshot(snapshot)
        snapshot.release_pages()
        return index

    def verify(self) -> None:
        """Verify every lazily checked chunk of a loaded index now (a no-op for one built in this process).

        Raises
        ------
        codelex.IndexFormatError
            When a chunk does not match its digest.
        """
        with self._write_lock, native_errors():
            self._live.verify()
            self._vocab.verify()

    # --- introspection --------------------------------------------------------

    def __len__(self) -> int:
        return int(self._live.n_live)

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str):
            return False
        slot = self._slot(path)
        return slot is not None and self._live.alive(slot)

    def __repr__(self) -> str:
        return f"<WordIndex files={len(self)}>"

    @property
    def files(self) -> list[str]:
        """Indexed paths, in document order (indexing order; a re-added path keeps its place)."""
        view = self._view
        paths = view.table.paths.as_list()
        return [paths[s] for s in self._live.live_slots().tolist() if s < view.n]

    def file_table(self) -> list[tuple[str, int, int]]:
        """``(path, mtime_ns, size)`` of every indexed file, in document order: :meth:`file_info` for all at once."""
        view = self._view
        mtime, size, alive = self._live.file_table()
        paths = view.table.paths.as_list()
        n = min(view.n, len(alive))
        keep = np.flatnonzero(alive[:n]).tolist()
        mt, sz = mtime.tolist(), size.tolist()
        return [(paths[s], mt[s], sz[s]) for s in keep]

    def file_info(self, path: str) -> FileInfo:
        """What was recorded when ``path`` was indexed (``KeyError`` when absent)."""
        slot = self._slot(path) if isinstance(path, str) else None
        if slot is None or not self._live.alive(slot):
            raise KeyError(path)
        mtime, size = self._live.file_info(slot)
        return FileInfo(int(mtime), int(size), int(self._live.doc_len(slot)))

    def document_length(self, path: str) -> int:
        """Token occurrences of an indexed file (``KeyError`` when absent)."""
        return self.file_info(path).tokens

    def stats(self) -> dict[str, int]:
        """Sizes of the index.

        Returns
        -------
        dict
            ``files``; ``tokens`` (distinct tokens with postings);
            ``postings`` (one per token, file and line, as the original
            counts them); ``term_doc_pairs`` (one per token and file);
            ``total_tokens`` (token occurrences, repeats counted);
            ``pending_postings`` (delta postings and removed ones awaiting a
            merge); ``index_bytes`` (posting arrays, delta and document
            table); ``vocabulary_bytes`` (the term dictionary).  The first
            five equal those of a fresh build over the same documents; the
            byte counts depend on history (the dictionary keeps the terms of
            removed documents until a rebuild).
        """
        with native_errors():
            c = self._live.counts()
        return {
            "files": c["live_docs"],
            "tokens": c["terms"],
            "postings": c["line_postings"],
            "term_doc_pairs": c["pairs"],
            "total_tokens": c["total_tokens"],
            "pending_postings": int(self._live.merge_state()[0]),
            "index_bytes": c["base_bytes"] + c["delta_bytes"] + c["table_bytes"],
            "vocabulary_bytes": int(self._vocab.memory_bytes()),
        }

    # --- search ---------------------------------------------------------------

    def search(self, query: str | Request, options: SearchOptions | None = None, *,
               global_stats: GlobalQueryStats | None = None, **kwargs) -> list[Hit]:
        """Rank files for a query.

        Parameters
        ----------
        query : str or Request
            Free text plus inline filters (``lang:``, ``file:``, ``ext:``,
            negated with ``-``; see :func:`codelex.parse_query`), or a request
            parsed once (:func:`codelex.query.parse_request`) with its options.
        options : SearchOptions, optional
            How to rank (not with a Request); keyword arguments (``limit``,
            ``paths``, ``lang``, ``centrality``, ``demote_test_vendor``,
            ``demote_docs``; see :class:`codelex.SearchOptions`) build one or
            override its fields.
        global_stats : GlobalQueryStats, optional
            A federation's statistics for this query (phase 2; see
            :meth:`query_stats` and :func:`codelex.federation.merge_query_stats`):
            document count, dfs and average field lengths come from them, and
            the code ranking's stem variants are theirs, so this index's scores
            are those of one index over every shard's files.  Default: this
            index's own.

        Returns
        -------
        list of Hit
            Best first; ties broken by path.

        Raises
        ------
        TypeError
            If ``query`` is not a str, or an option has the wrong type.
        codelex.QueryError
            For an unknown ``lang:`` in the query or ``lang`` option.
        ValueError
            If ``global_stats`` were gathered for another query, ranking or
            ranking parameters.

        Examples
        --------
        >>> index = WordIndex.build([("a.py", "def parse_config(): ..."), ("b.md", "parse the config")])
        >>> [h.file for h in index.search("parse config", limit=1)]
        ['a.py']
        """
        request = parse_request(query, options, kwargs)
        parsed, opts = request.parsed, request.options
        if opts.limit <= 0 or not parsed.tokens:
            return []
        tokens = list(parsed.tokens)
        # Word forms for prose only: identifiers are meant as written.
        stems = self._stem_weight > 0 and opts.ranking == "code" and is_prose(parsed.terms)
        glob = None if global_stats is None else self._global_request(global_stats, opts, tokens, stems)
        return self._search_current(parsed.filters, opts, tokens, stems, glob)

    def token_files(self, token: str, limit: int | None = None) -> list[Hit]:
        """The files whose text holds the index token ``token`` (one token as the tokenizer emits it: lower
        case, e.g. ``parse_query``), from its postings alone: best first by the classic BM25 of that token
        (``hits``: how often the file holds it; ``start_line``: the line holding it most), at most ``limit``
        (default: every one).  What "where is this identifier used" starts from, before reading any file.

        Raises
        ------
        TypeError
            If ``token`` is not a str.
        """
        if not isinstance(token, str):
            raise TypeError(f"token must be str, not {type(token).__name__}")
        n = len(self) if limit is None else check_limit(limit)
        if n <= 0 or not token:
            return []
        opts = SearchOptions(limit=n, ranking="classic", demote_test_vendor=False, demote_docs=False, centrality={})
        return self._search_current((), opts, [token])

    def _ranking_params(self) -> tuple:
        return (self.k1, self.b, self.field_weights, self.field_b, self.def_boost, self.name_boost,
                self._stem_weight)

    def query_stats(self, query: str | Request, options: SearchOptions | None = None, *, words: Sequence[str] = (),
                    **kwargs) -> ShardQueryStats:
        """Phase 1 of a federated search: what this index contributes to the collection's statistics.

        Parameters
        ----------
        query, options, **kwargs
            As for :meth:`search` (filters and the limit do not matter here:
            statistics stay global, as a filtered search's do).
        words : sequence of str, optional
            More words to report dfs for: stem variants other shards found
            (a variant counts in every field of every shard, even one whose
            body lacks the word; see :func:`codelex.federation.missing_words`).

        Returns
        -------
        ShardQueryStats
            Live documents, token totals per field, the df per field of every
            word the query would look up here (its tokens and, for a prose
            query of the code ranking, their stem variants found in this
            index's vocabulary), read at one instant.  Plain, picklable data;
            :func:`codelex.federation.merge_query_stats` sums the shards'.

        Raises
        ------
        TypeError, codelex.QueryError
            As :meth:`search` does.

        Examples
        --------
        >>> index = WordIndex.build([("a.py", "def parse_config(): ...")])
        >>> index.query_stats("parse config").dfs["parse"]
        (1, 0, 0, 1)
        """
        request = parse_request(query, options, kwargs)
        parsed, opts = request.parsed, request.options
        tokens = list(parsed.tokens)
        stems = self._stem_weight > 0 and opts.ranking == "code" and is_prose(parsed.terms)
        extra = tuple(words)
        words = list(tokens)
        variants: dict[str, tuple[str, ...]] = {}
        if stems and tokens:  # field_terms lists each token's variants after it
            owner = None
            for t, _, is_token in self.field_terms(tokens):
                if is_token:
                    owner = t
                    variants[t] = ()
                else:
                    variants[owner] = variants[owner] + (t,)
                    words.append(t)
        for w in extra:
            if not isinstance(w, str):
                raise TypeError(f"words must be str, not {type(w).__name__}")
        listed = set(words)
        words += [w for w in dict.fromkeys(extra) if w not in listed]
        with native_errors():
            docs, body, fields, dfs = self._live.term_stats(words)
        rows = dfs.tolist()
        return ShardQueryStats(
            docs=int(docs), body_tokens=int(body), field_tokens=tuple(int(x) for x in fields),  # type: ignore[arg-type]
            query_tokens=tuple(tokens), dfs={w: tuple(r) for w, r in zip(words, rows)},  # type: ignore[misc]
            variants=variants, ranking=opts.ranking, params=self._ranking_params(),
        )

    def _global_request(self, gs: GlobalQueryStats, opts: SearchOptions, tokens: list[str], stems: bool):
        """The native form of ``gs`` for this query: ``(terms or None, (docs, body, fields, dfs))``."""
        if not isinstance(gs, GlobalQueryStats):
            raise TypeError(f"global_stats must be GlobalQueryStats (merge_query_stats), not {type(gs).__name__}")
        if gs.query_tokens != tuple(tokens):
            raise ValueError(f"global_stats were gathered for the tokens {list(gs.query_tokens)}, not {tokens}")
        if gs.ranking != opts.ranking:
            raise ValueError(f"global_stats were gathered for the {gs.ranking} ranking, not {opts.ranking}")
        if gs.params != self._ranking_params():
            raise ValueError("global_stats were gathered under other ranking parameters than this index's")
        if opts.ranking == "classic":
            terms = None
            dfs = [gs.df(t)[0] for t in tokens]
        else:
            terms = [(t, 1.0, True) for t in tokens]
            if stems:  # the collection's variants: a word of any shard's vocabulary
                terms = []
                for t in tokens:
                    terms.append((t, 1.0, True))
                    terms.extend((u, self._stem_weight, False) for u in gs.variants.get(t, ()) if u not in tokens)
            dfs = [x for term in terms for x in gs.df(term[0])]
        return terms, (gs.docs, gs.body_tokens, gs.field_tokens, dfs)

    def _search_current(self, filters, opts: SearchOptions, tokens: list[str], stems: bool = False,
                        glob=None) -> list[Hit]:
        """:meth:`_search_view` of the current view; when a writer changed the slot layout under it, again once
        the writer has published the new one, still holding the writers' lock."""
        hits = self._search_view(self._view, filters, opts, tokens, stems, glob)
        if hits is None:
            with self._write_lock, native_errors():
                hits = self._search_view(self._view, filters, opts, tokens, stems, glob)
        return hits

    def _search_view(self, view: _View, filters, opts: SearchOptions, tokens: list[str],
                     stems: bool = False, glob=None) -> list[Hit] | None:
        mask = search_mask(view.table, view.n, filters, opts)
        if mask is not None and not mask.any():
            return []
        mult, mult_max = slot_multipliers(view.table, view.n, opts.demote_test_vendor, opts.demote_docs,
                                          opts.centrality)
        paths = None  # the hits' paths come from the native table: no search decodes every path
        try:  # (not `with native_errors()`: this runs on every query)
            if glob is not None:
                terms, stats = glob
            else:
                terms, stats = (self.field_terms(tokens) if stems else tokens), None
            if opts.ranking == "classic":
                return self._live.search_hits(tokens, opts.limit, paths, view.generation, self.k1, self.b,
                                              mask, mult, mult_max, self.exhaustive, self.prune_min_postings, Hit,
                                              stats)
            return self._live.search_fields(terms, opts.limit, paths, view.generation, self._ranking,
                                            len(tokens), mask, mult, mult_max, self.exhaustive,
                                            self.prune_min_postings, Hit, stats)
        except RuntimeError as exc:
            with native_errors():
                raise exc from None

    def field_terms(self, tokens: list[str]) -> list[tuple[str, float, bool]]:
        """The code ranking's query terms: ``(token, weight, is a query token)``, each token's stem variants after it.

        Without PyStemmer (a dependency; ``pip install pystemmer``) there are no
        variants, and a warning says so once.
        """
        terms = [(t, 1.0, True) for t in tokens]
        if self._stem_weight <= 0:
            return terms
        if self._stems is None:
            try:
                self._stems = StemTable(self._vocab)
            except ImportError:
                warnings.warn(stemmer_available() or "PyStemmer is unavailable", RuntimeWarning, stacklevel=3)
                self._stems = False
        if self._stems is False:
            return terms
        out = []
        for t in tokens:
            out.append((t, 1.0, True))
            out.extend((u, self._stem_weight, False) for u in self._stems.variants(t) if u not in tokens)
        return out
