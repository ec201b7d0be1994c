"""The front-coded term dictionary (csrc/text/term_blocks.hpp) against a pure-Python reference.

A saved dictionary is searched in place, block by block: these tests build
one from random sorted term sets (the empty term, 0xFF bytes, long shared
prefixes, counts around the block and head sizes) and compare every read
with plain sorted lists, then feed it corrupt blocks, which must be refused
(``ValueError`` when validated in full, ``corrupt index`` when read lazily),
never read out of bounds.
"""

from __future__ import annotations

import bisect
import ctypes
import mmap
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codelex._native import chunk_digests
from codelex._native import text as _core

BLOCK = _core.TERM_BLOCK
HEAD = _core.HEAD_EVERY

# Pieces that make neighbours share long prefixes, and bytes at both ends of the order.
_PIECES = [b"", b"\x00", b"a", b"b", b"z", b"_", b"\x7f", b"\xc3\xa9", b"\xfe", b"\xff", b"\xff\xff", b"config_",
           b"q" * 20]
_STEMS = [b"", b"", b"config_", b"drivers/net/", b"x" * 40, b"\xff" * 3, b"y" * 150]
_term = st.tuples(st.sampled_from(_STEMS), st.lists(st.sampled_from(_PIECES), max_size=5)).map(
    lambda t: t[0] + b"".join(t[1]))
_terms = st.sets(_term, max_size=3 * HEAD + 5).map(sorted)
_probe = _term | st.binary(max_size=6)


def _arrays(words: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    blob = np.frombuffer(b"".join(words), dtype=np.uint8)
    return blob, np.cumsum([0] + [len(w) for w in words], dtype=np.uint64)


def _guarded(data: bytes) -> np.ndarray:
    """``data`` as an array that ends where an inaccessible page starts: a read past its end faults."""
    page = mmap.PAGESIZE
    size = -(-max(len(data), 1) // page) * page + page
    region = mmap.mmap(-1, size)
    buf = np.frombuffer(region, dtype=np.uint8)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    if libc.mprotect(buf.ctypes.data + size - page, page, 0) != 0:
        raise OSError(ctypes.get_errno(), "mprotect")
    start = size - page - len(data)
    out = buf[start : start + len(data)]
    out[:] = np.frombuffer(data, dtype=np.uint8)
    return out


def _pack_any(offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Packed offsets as pack_offsets lays them out, for any values (pack_offsets refuses decreasing ones)."""
    offsets = np.asarray(offsets, dtype=np.uint64)
    block = _core.OFFSET_BLOCK
    base = offsets[::block].copy()
    rel = (offsets - np.repeat(base, block)[: len(offsets)]) & np.uint64(0xFFFFFFFF)
    return base, rel.astype(np.uint32)


def _dictionary(words: list[bytes], *, checked: bool = False, guard: bool = False, heads: bool = True,
                filt: bool = True, blocks: bytes | None = None, block_offsets: np.ndarray | None = None):
    blob, offsets = _arrays(words)
    coded, coded_offsets = _core.front_code(blob, offsets)
    if blocks is not None:
        coded = np.frombuffer(blocks, dtype=np.uint8)
    if block_offsets is not None:
        coded_offsets = block_offsets
    if guard and sys.platform.startswith("linux"):
        coded = _guarded(coded.tobytes())
    base, rel = _pack_any(coded_offsets)
    filt_arr = _core.term_filter(blob, offsets) if filt else None
    kwargs = {"heads": _core.term_heads(blob, offsets) if heads else None, "filter": filt_arr}
    if checked:
        kwargs.update(blocks_digests=chunk_digests(coded), offset_digests=chunk_digests(rel),
                      filter_digests=chunk_digests(filt_arr) if filt else None)
    return _core.Vocabulary.from_front_coded(coded, base, rel, len(words), **kwargs)


def _raw_terms(vocab, order=None) -> list[bytes]:
    blob, offsets = vocab.to_arrays(order)
    raw, cut = blob.tobytes(), offsets.tolist()
    return [raw[cut[i] : cut[i + 1]] for i in range(len(cut) - 1)]


def _prefix_range(words: list[bytes], prefix: bytes) -> tuple[int, int]:
    first = bisect.bisect_left(words, prefix)
    last = first
    while last < len(words) and words[last].startswith(prefix):
        last += 1
    return first, last


def _words(words: list[bytes], prefix: bytes, min_len: int, max_len: int) -> list[str]:
    return [w.decode() for w in words if w.startswith(prefix) and min_len <= len(w) <= max_len
            and all(97 <= c <= 122 for c in w)]


def _check_reads(vocab, words: list[bytes], probes: list[bytes]) -> None:
    assert len(vocab) == vocab.base_size == len(words)
    assert _raw_terms(vocab) == words
    for i, w in enumerate(words):
        assert vocab.find(w) == i
    for p in probes:
        assert vocab.find(p) == (bisect.bisect_left(words, p) if p in set(words) else -1)
        assert vocab.base_prefix_range(p) == _prefix_range(words, p)
    for i in {0, len(words) - 1, len(words) // 2, BLOCK - 1, BLOCK, HEAD, HEAD + 1} & set(range(len(words))):
        try:
            expected = words[i].decode("utf-8")
        except UnicodeDecodeError:
            continue
        assert vocab.term(i) == expected


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_terms, st.lists(_probe, max_size=20), st.booleans(), st.booleans(), st.booleans())
def test_front_coded_dictionary_matches_a_reference(words, probes, checked, heads, filt):
    vocab = _dictionary(words, checked=checked, heads=heads, filt=filt, guard=True)
    _check_reads(vocab, words, probes + [w[:-1] for w in words[::7]] + [w + b"\x00" for w in words[::5]])
    for prefix, lo, hi in (("", 1, 24), ("a", 1, 3), ("b", 2, 30), ("z", 1, 1), ("q", 1, 24)):
        assert vocab.base_words(prefix, lo, hi) == _words(words, prefix.encode(), lo, hi)


@pytest.mark.parametrize("n", [0, 1, 2, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK, HEAD - 1, HEAD, HEAD + 1,
                               2 * HEAD + BLOCK - 1, 4 * HEAD + 3])
def test_block_and_head_boundaries(n):
    # Long shared prefixes, a long suffix and a long drop (their counts escape the header's nibbles), 0xFF bytes.
    words = sorted({b"" if i == 0 else (b"k" * (i % 300) + b"%05d" % i + b"\xff" * (i % 3)) for i in range(n)})
    words = words[:n]
    for checked in (False, True):
        vocab = _dictionary(words, checked=checked, guard=True)
        _check_reads(vocab, words, [b"", b"k", b"kk", b"\xff", b"k" * 17, b"zz"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_terms, st.lists(_term | st.binary(max_size=8), max_size=40), st.booleans())
def test_sorted_order_and_arrays_after_additions(words, added, checked):
    """Terms interned over a front-coded base: ids, byte order and arrays as a sorted list of all says."""
    vocab = _dictionary(words, checked=checked, guard=True)
    ids = [vocab.intern(t) for t in added]
    everything = list(words)
    for t in added:
        if t not in everything:
            everything.append(t)
    assert ids == [everything.index(t) for t in added]  # a base term keeps its id; a new one is appended
    assert _raw_terms(vocab) == everything
    order = vocab.sorted_order()
    assert [everything[i] for i in order] == sorted(everything)
    assert _raw_terms(vocab, order) == sorted(everything)
    for t in added:  # a second lookup finds the cached base id or the added term
        assert vocab.find(t) == everything.index(t)
    rebuilt = _core.Vocabulary.from_arrays(*vocab.to_arrays())
    assert _raw_terms(rebuilt) == everything


def test_front_code_refuses_unsorted_terms():
    for words in ([b"b", b"a"], [b"a", b"a"], [b"ab", b"a"]):
        blob, offsets = _arrays(words)
        with pytest.raises(ValueError):
            _core.front_code(blob, offsets)
    with pytest.raises(ValueError):
        _core.front_code(np.frombuffer(b"abc", dtype=np.uint8), np.array([0, 2, 1], dtype=np.uint64))


def test_front_coding_stores_each_term_once_as_its_difference():
    words = [b"config_a", b"config_ab", b"config_b"]
    blocks, offsets = _core.front_code(*_arrays(words))
    # 8 bytes whole; then drop 0 add 1 ("b"); then drop 2 add 1 ("b")
    assert blocks.tobytes() == b"\x08config_a" + b"\x01b" + b"\x21b"
    assert offsets.tolist() == [0, len(blocks)]


# --- corrupt blocks -----------------------------------------------------------------

_CORPUS = sorted({b"t%04d" % (i * 7) + b"x" * (i % 5) for i in range(3 * HEAD)} | {b"", b"\xff\xff"})


def _use(vocab, probes) -> None:
    """Every read a dictionary answers: each may raise, none may read out of bounds."""
    for p in probes:
        vocab.find(p)
        vocab.base_prefix_range(p)
    vocab.base_words("t", 1, 24)
    _raw_terms(vocab)
    vocab.intern(b"t0003zz")
    vocab.sorted_order()
    _raw_terms(vocab, vocab.sorted_order())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=6), st.booleans())
def test_corrupt_blocks_are_refused_never_misread(edits, checked):
    """Bytes of the blocks changed.  Validated in full: refused, or (the change kept every block well formed and
    the terms ascending) answering as its own terms say.  Read lazily with digests that match the change (what a
    verified chunk that lies would be): each read answers or raises ``corrupt index``, never reads past a block."""
    blob, offsets = _arrays(_CORPUS)
    coded = bytearray(_core.front_code(blob, offsets)[0].tobytes())
    for pos, value in edits:
        coded[pos % len(coded)] = value
    probes = [_CORPUS[i] for i in range(0, len(_CORPUS), 11)] + [b"t01", b"\xff", b""]
    try:
        vocab = _dictionary(_CORPUS, blocks=bytes(coded), checked=checked, guard=True, filt=False, heads=False)
    except ValueError:
        assert not checked
        return
    if not checked:  # it passed validation: a consistent dictionary of other terms
        terms = _raw_terms(vocab)
        assert terms == sorted(set(terms)) and len(terms) == len(_CORPUS)
        _check_reads(vocab, terms, probes)
        return
    try:
        _use(vocab, probes)
    except RuntimeError as exc:
        assert str(exc).startswith("corrupt index:"), exc


@pytest.mark.parametrize("lie", ["past_end", "backwards", "short", "long", "huge_varint", "overlap"])
@pytest.mark.parametrize("checked", [False, True])
def test_corrupt_block_offsets_are_refused(lie, checked):
    blob, offsets = _arrays(_CORPUS)
    coded, block_offsets = _core.front_code(blob, offsets)
    block_offsets = block_offsets.copy()
    coded = bytearray(coded.tobytes())
    if lie == "past_end":
        block_offsets[3] = block_offsets[-1] + 100
    elif lie == "backwards":
        block_offsets[3], block_offsets[4] = block_offsets[4], block_offsets[3]
    elif lie == "short":  # a block that ends before its last term
        block_offsets[3] -= 1
    elif lie == "long":
        block_offsets[3] += 1
    elif lie == "huge_varint":  # the first term's length: ten continuation bytes
        coded[int(block_offsets[2]) : int(block_offsets[2]) + 10] = b"\xff" * 10
    elif lie == "overlap":  # every block starts where the first does
        block_offsets[1:-1] = 0
    if not checked:  # validated in full: refused at install
        with pytest.raises(ValueError):
            _dictionary(_CORPUS, blocks=bytes(coded), block_offsets=block_offsets, guard=True)
        return
    # Read lazily (digests that match the lie): the last offset is right, so the lie is found when it is read.
    vocab = _dictionary(_CORPUS, blocks=bytes(coded), block_offsets=block_offsets, checked=True, guard=True)
    with pytest.raises(RuntimeError, match="^corrupt index:"):
        _use(vocab, [w for w in _CORPUS])


def test_inconsistent_counts_are_refused():
    blob, offsets = _arrays(_CORPUS)
    coded, block_offsets = _core.front_code(blob, offsets)
    base, rel = _core.pack_offsets(block_offsets)
    n = len(_CORPUS)
    for wrong in (n - 1, n + 1, n + BLOCK, 0):  # (n - 1 and n + 1 keep the block count: validation finds them)
        with pytest.raises(ValueError):
            _core.Vocabulary.from_front_coded(coded, base, rel, wrong)
    with pytest.raises(ValueError):
        _core.Vocabulary.from_front_coded(coded, base, rel, -1)
    with pytest.raises(ValueError):
        _core.Vocabulary.from_front_coded(coded, base, rel, n, heads=np.zeros(-(-n // HEAD), dtype=np.uint64))
