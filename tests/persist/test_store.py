"""Persistence: round trips, corruption, crashes and concurrent writers, debounced saves."""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import xxhash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import codelex
from codelex import IndexFormatError, WordIndex
from codelex.defaults import INDEX_FILE
from codelex.persist.container import encode_header
from codelex.persist.lexical import FORMAT_VERSION, verify_lexical
from codelex.persist.scheduler import PersistScheduler

DOCS = [
    ("src/app.py", "def parse_config(path):\n    return load(path)\n", 1_700_000_000_000_000_000),
    ("src/http/server.py", "class HTTPServer:\n    def serve(self): parse_config('x')\n", 5),
    ("docs/readme.md", "# Café\nHow to parse the config.\n", -1),
    ("tests/test_app.py", "def test_parse_config(): assert parse_config('a')\n", 7),
    ("src/Ωmega.py", "naïveBayes = getUserByID(42)\n", 8),
]
QUERIES = ["parse config", "http server", "café", "naïve bayes user id", "lang:python parse", "-file:test config"]


def results(idx: WordIndex) -> list:
    return [idx.search(q) for q in QUERIES]


@pytest.fixture
def saved(tmp_path):
    idx = WordIndex.build(DOCS)
    idx.save(tmp_path)
    return idx, tmp_path


@pytest.mark.parametrize("mmap", [True, False])
def test_round_trip(saved, mmap):
    idx, d = saved
    loaded = WordIndex.load(d, mmap=mmap)
    assert loaded.files == idx.files
    assert results(loaded) == results(idx)
    logical = ("files", "tokens", "postings", "term_doc_pairs", "total_tokens", "pending_postings")
    assert {k: loaded.stats()[k] for k in logical} == {k: idx.stats()[k] for k in logical}
    for path, _, mtime in DOCS:
        assert loaded.file_info(path) == idx.file_info(path)
        assert loaded.file_info(path).mtime_ns == mtime
    assert WordIndex.load(d / INDEX_FILE).files == idx.files  # the file itself works too


def test_loaded_index_keeps_updating(saved):
    idx, d = saved
    loaded = WordIndex.load(d)
    docs = {p: c for p, c, _ in DOCS}
    for target in (loaded, idx):
        target.update("src/app.py", "def parse_settings(): ...\n")
        target.remove("docs/readme.md")
        target.update("new.py", "parse config new")
    docs["src/app.py"] = "def parse_settings(): ...\n"
    del docs["docs/readme.md"]
    docs["new.py"] = "parse config new"
    want = WordIndex.build(docs.items())
    assert results(loaded) == results(want) == results(idx)
    loaded.save(d)
    assert results(WordIndex.load(d)) == results(want)


def test_save_merges_and_empty_index_round_trips(tmp_path):
    idx = WordIndex()
    idx.save(tmp_path / "empty")
    assert len(WordIndex.load(tmp_path / "empty")) == 0
    idx.update("a.py", "")
    idx.save(tmp_path / "one")
    loaded = WordIndex.load(tmp_path / "one")
    assert loaded.files == ["a.py"] and loaded.document_length("a.py") == 0


def test_on_disk_paths_and_odd_names(tmp_path):
    odd = [("dir with space/ü.py", "alpha"), ("\udcff-surrogate.py", "beta"), ("a" * 300 + ".py", "gamma")]
    idx = WordIndex.build(odd)
    idx.save(tmp_path)
    assert WordIndex.load(tmp_path).files == idx.files


# --- malformed input ---------------------------------------------------------------


def test_not_an_index(tmp_path):
    with pytest.raises(IndexFormatError, match="not a codelex index"):
        WordIndex.load(tmp_path)
    with pytest.raises(IndexFormatError):
        WordIndex.load(tmp_path / "missing")
    (tmp_path / INDEX_FILE).write_bytes(b"hello, world" * 10)
    with pytest.raises(IndexFormatError, match="bad magic"):
        WordIndex.load(tmp_path)
    (tmp_path / INDEX_FILE).write_bytes(b"")
    with pytest.raises(IndexFormatError, match="truncated"):
        WordIndex.load(tmp_path)
    (tmp_path / "plain.txt").write_text("not an index")
    with pytest.raises(IndexFormatError):
        WordIndex.load(tmp_path / "plain.txt")


def test_every_truncation_is_detected(saved):
    _, d = saved
    data = (d / INDEX_FILE).read_bytes()
    for cut in sorted({0, 1, 8, 23, 24, 25, 100, *range(0, len(data), 37), len(data) - 1}):
        (d / INDEX_FILE).write_bytes(data[:cut])
        with pytest.raises(IndexFormatError):
            WordIndex.load(d)
    (d / INDEX_FILE).write_bytes(data + b"\x00")
    with pytest.raises(IndexFormatError):
        WordIndex.load(d)


def _answers(idx):
    return [[(h.file, h.score, h.start_line, h.hits) for h in idx.search(q)] for q in QUERIES]


def test_every_flipped_byte_is_detected(saved):
    """The checksums cover the header, every array and the padding: no flip goes unnoticed.

    Large arrays are verified lazily, so a flip there may pass the open; it is
    then caught by the first read of its chunk (and by ``verify``), and no
    answer before that differs from the intact index's.
    """
    _, d = saved
    data = bytearray((d / INDEX_FILE).read_bytes())
    expected = _answers(WordIndex.load(d))
    for pos in range(len(data)):
        flipped = bytearray(data)
        flipped[pos] ^= 0x20
        (d / INDEX_FILE).write_bytes(flipped)
        try:
            idx = WordIndex.load(d, mmap=pos % 2 == 0)
        except IndexFormatError:
            continue
        try:
            assert _answers(idx) == expected, f"a flip at byte {pos} changed an answer"
        except IndexFormatError:
            pass
        with pytest.raises(IndexFormatError):
            idx.verify()
        with pytest.raises(IndexFormatError):
            verify_lexical(d)


def test_lazy_verification_touches_only_what_is_read(tmp_path):
    """A load checks no large array; a search verifies the chunks it reads; verify() the rest."""
    docs = [(f"src/m{i}.py", f"def handler_{i}(request):\n    return value_{i} + common\n" * 40) for i in range(3000)]
    WordIndex.build(docs).save(tmp_path)
    idx = WordIndex.load(tmp_path)
    live = idx._live
    before = live.verified_chunks()
    assert before[0] <= 1 and before[1] > 2  # the install reads the last term offset only
    assert idx.search("handler_7")
    after = live.verified_chunks()
    assert 0 < after[0] < after[1]
    idx.verify()
    assert live.verified_chunks()[0] == live.verified_chunks()[1]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.integers(0, 10**9), st.integers(0, 255)), min_size=1, max_size=4))
def test_unverified_corruption_never_crashes(tmp_path_factory, edits):
    """With checksums off, structural validation still stands between bad bytes and native code;
    with them on, corruption is an IndexFormatError at load or at first use, never a crash."""
    d = tmp_path_factory.mktemp("idx")
    WordIndex.build(DOCS).save(d)
    data = bytearray((d / INDEX_FILE).read_bytes())
    for pos, value in edits:
        data[pos % len(data)] = value
    (d / INDEX_FILE).write_bytes(data)
    for verify in (False, True):
        try:
            idx = WordIndex.load(d, verify=verify)
            for q in QUERIES:
                idx.search(q)
            idx.update("src/app.py", "parse config again")
            idx.remove("src/http/server.py")
            idx.merge()
            idx.search("parse config")
        except IndexFormatError:
            pass


def _rewrite_header(file: Path, mutate) -> None:
    """Apply mutate(header) and re-sign the header (its digest, and this user's MAC: the file stays one this
    user wrote, so its digests are believed), keeping the layout."""
    data = bytearray(file.read_bytes())
    magic, version, hlen, _ = struct.unpack_from("<8sIIQ", data)
    header = json.loads(bytes(data[24 : 24 + hlen]))
    data_start = min(a["offset"] for a in header["arrays"])
    mutate(header)
    blob = encode_header(header, version)
    assert 24 + len(blob) <= data_start, "mutation grew the header past its padding"
    data[24:data_start] = blob + b"\x00" * (data_start - 24 - len(blob))
    struct.pack_into("<8sIIQ", data, 0, magic, version, len(blob), xxhash.xxh3_64_intdigest(blob))
    file.write_bytes(data)


def _entry(header, name):
    return next(a for a in header["arrays"] if a["name"] == name)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda h: h["arrays"].remove(_entry(h, "post_doc")), "missing array 'post_doc'"),
        (lambda h: _entry(h, "post_doc").update(dtype="<i4"), "dtype"),
        (lambda h: _entry(h, "doc_len").update(shape=[_entry(h, "doc_len")["shape"][0] + 1]), "shape"),
        (lambda h: _entry(h, "line_data").update(offset=_entry(h, "line_data")["offset"] + 1), "outside"),
        (lambda h: h.update(unicode_version="1.0.0"), "Unicode"),
        (lambda h: h.update(format="codelex-other"), "codelex index"),  # same length: fits the padding
        (lambda h: h.update(arrays="none"), "array table"),
    ],
)
def test_malformed_headers(saved, mutate, message):
    _, d = saved
    _rewrite_header(d / INDEX_FILE, mutate)
    with pytest.raises(IndexFormatError, match=message):
        WordIndex.load(d)


def test_wrong_version(saved):
    _, d = saved
    data = bytearray((d / INDEX_FILE).read_bytes())
    struct.pack_into("<I", data, 8, 99)
    (d / INDEX_FILE).write_bytes(data)
    with pytest.raises(IndexFormatError, match="version 99"):
        WordIndex.load(d)


@pytest.mark.parametrize("version", range(3, FORMAT_VERSION))
def test_an_older_format_version_is_refused(saved, version):
    """An index of an older format (version 5: the term dictionary unblocked) is refused by its prefix, never read
    with this format's layout; a project rebuilds it (tests/project: test_an_older_index_format_is_rebuilt)."""
    _, d = saved
    data = bytearray((d / INDEX_FILE).read_bytes())
    struct.pack_into("<I", data, 8, version)
    (d / INDEX_FILE).write_bytes(data)
    with pytest.raises(IndexFormatError, match=f"format version {version} \\(this codelex reads {FORMAT_VERSION}\\)"):
        WordIndex.load(d)
    with pytest.raises(IndexFormatError, match="version"):
        WordIndex.load(d, verify=False)


def _replace_array(file: Path, name: str, fn) -> None:
    """Rewrite one array's bytes in place and fix its checksum (a consistent-looking lie)."""
    data = bytearray(file.read_bytes())
    hlen = struct.unpack_from("<I", data, 12)[0]
    entry = _entry(json.loads(bytes(data[24 : 24 + hlen])), name)
    arr = np.frombuffer(bytes(data[entry["offset"] : entry["offset"] + entry["nbytes"]]), dtype=entry["dtype"]).copy()
    fn(arr)
    data[entry["offset"] : entry["offset"] + entry["nbytes"]] = arr.tobytes()
    file.write_bytes(data)
    _rewrite_header(file, lambda h: _entry(h, name).update(xxh3=xxhash.xxh3_64_hexdigest(arr)))


def _replace_digests(file: Path, name: str) -> None:
    """Recompute a lazily checked array's chunk digests to match its (altered) bytes."""
    data = bytearray(file.read_bytes())
    hlen = struct.unpack_from("<I", data, 12)[0]
    header = json.loads(bytes(data[24 : 24 + hlen]))
    entry = _entry(header, name)
    arr = np.frombuffer(bytes(data[entry["offset"] : entry["offset"] + entry["nbytes"]]), dtype=entry["dtype"])
    digests = codelex._native.chunk_digests(arr)
    _replace_array(file, name + "_digests", lambda a: a.__setitem__(slice(None), digests))


_LIES = [
    ("post_doc", lambda a: a.__setitem__(0, 0xFF)),
    ("post_doc", lambda a: a.__setitem__(slice(None), a[::-1])),
    ("post_doc_min", lambda a: a.__setitem__(0, 10_000)),
    ("post_doc_width", lambda a: a.__setitem__(0, 40)),
    ("post_doc_width", lambda a: a.__setitem__(0, a[0] + 1)),
    ("post_doc_off", lambda a: a.__setitem__(-1, a[-1] + 1)),
    ("term_ptr_rel", lambda a: a.__setitem__(1, a[1] + 1)),
    ("term_ptr_rel_min", lambda a: a.__setitem__(-1, a[-1] + 1000)),
    ("term_ptr_rel_width", lambda a: a.__setitem__(0, 33)),
    ("line_ckpt_rel_min", lambda a: a.__setitem__(0, 7)),
    ("term_ptr_base", lambda a: a.__setitem__(0, 1)),
    ("post_tf", lambda a: a.__setitem__(0, 0)),
    ("post_tf", lambda a: a.__setitem__(0, 255)),
    ("post_tf", lambda a: a.__setitem__(0, 200)),
    ("tf_big_pos", lambda a: a.__setitem__(slice(None), 0)),
    ("line_ckpt_rel", lambda a: a.__setitem__(0, 5)),
    ("line_ckpt_base", lambda a: a.__setitem__(0, 3)),
    ("line_data", lambda a: a.__setitem__(slice(None), 0xFF)),
    ("term_block_offsets_rel", lambda a: a.__setitem__(1, a[1] + 1)),
    ("term_block_offsets_rel", lambda a: a.__setitem__(slice(1, None), a[-1])),
    ("term_block_offsets_base", lambda a: a.__setitem__(0, 2)),
    ("term_blocks", lambda a: a.__setitem__(0, 0x7F)),
    ("term_blocks", lambda a: a.__setitem__(slice(None), 0xFF)),
    ("term_blocks", lambda a: a.__setitem__(slice(1, None), a[:-1].copy())),
    ("term_filter", lambda a: a.__setitem__(slice(None), 0)),
    ("path_offsets", lambda a: a.__setitem__(1, 10**6)),
    ("path_blob", lambda a: a.__setitem__(0, 0xFF)),
    ("kind_id", lambda a: a.__setitem__(0, 30_000)),
]


@pytest.mark.parametrize(("name", "fn"), _LIES)
def test_structurally_invalid_arrays_with_valid_checksums(saved, name, fn):
    """A changed array whose xxh3 was fixed up: still caught (by its chunk digests, or structurally)."""
    idx, d = saved
    _replace_array(d / INDEX_FILE, name, fn)
    try:
        loaded = WordIndex.load(d)
        assert results(loaded) == results(idx)
    except IndexFormatError:
        return
    # Only a change that leaves the answers intact may load: kind ids are recomputed, and a
    # small base finds its lines through offsets derived from the line data, not the checkpoints.
    assert name in ("kind_id", "tf_big_pos", "line_ckpt_rel")


@pytest.mark.parametrize(("name", "fn"), _LIES)
def test_forged_arrays_are_caught_structurally_without_checksums(saved, name, fn):
    """An array altered with every checksum fixed up passes the checksums by construction; with
    ``verify=False`` the structural validation must still refuse it (or answer as before)."""
    idx, d = saved
    _replace_array(d / INDEX_FILE, name, fn)
    try:
        _replace_digests(d / INDEX_FILE, name)
    except StopIteration:  # not a lazily checked array
        pass
    try:
        loaded = WordIndex.load(d, verify=False)
    except IndexFormatError:
        return
    assert results(loaded) == results(idx)
    assert name in ("kind_id", "tf_big_pos")


@pytest.mark.parametrize("fn", [lambda a: a.__setitem__(slice(None), 0xFF),
                                lambda a: a.__setitem__(slice(1, None), a[:-1].copy()),
                                lambda a: a.__setitem__(slice(0, None, 3), 0x0F)])
def test_a_malformed_term_block_behind_matching_digests_is_an_error_not_a_misread(saved, fn):
    """A trusted file whose term blocks lie with digests to match (what a verified chunk that lies would be): the
    blocks are decoded with bounds checks all the same, so each read that meets one raises IndexFormatError."""
    idx, d = saved
    _replace_array(d / INDEX_FILE, "term_blocks", fn)
    _replace_digests(d / INDEX_FILE, "term_blocks")
    loaded = WordIndex.load(d)  # trusted: nothing is decoded at load
    try:
        got = results(loaded)
    except IndexFormatError as exc:
        assert "term dictionary block" in str(exc)
        return
    assert got == results(idx)


@pytest.mark.parametrize(("name", "fn"), _LIES)
def test_forged_arrays_in_a_file_this_user_did_not_write_are_caught_structurally(saved, name, fn, monkeypatch):
    """The same lies, every digest fixed up, signed with another key (a committed or copied file): the
    default load believes none of the digests and validates the structure in full."""
    from codelex.persist import trust

    idx, d = saved
    _replace_array(d / INDEX_FILE, name, fn)
    try:
        _replace_digests(d / INDEX_FILE, name)
    except StopIteration:  # not a lazily checked array
        pass
    monkeypatch.setattr(trust, "_key", b"\x5a" * 32)
    monkeypatch.setattr(trust, "_loaded", True)
    _rewrite_header(d / INDEX_FILE, lambda h: None)
    monkeypatch.undo()
    with pytest.raises(IndexFormatError, match="untrusted"):
        WordIndex.load(d, trusted_only=True)
    try:
        loaded = WordIndex.load(d)
    except IndexFormatError:
        return
    assert results(loaded) == results(idx)
    assert name in ("kind_id", "tf_big_pos")


# --- crashes and concurrent writers ------------------------------------------------

_WRITER = textwrap.dedent(
    """
    import sys
    from codelex import WordIndex
    target, tag = sys.argv[1], sys.argv[2]
    big = [(f"pkg/m{i}.py", f"def function_{i}_{tag}(arg):\\n    return helper_{i % 97}(arg) + {i}\\n" * 40)
           for i in range(1500)]
    small = [("only.py", f"def lonely_{tag}(): pass")]
    a, b = WordIndex.build(big), WordIndex.build(small)
    a.save(target)
    print("ready", flush=True)
    while True:
        a.save(target)
        b.save(target)
    """
)


def _env():
    return dict(os.environ, PYTHONUNBUFFERED="1")


def _start_writer(target: Path, tag: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(target), tag], stdout=subprocess.PIPE,
                            env=_env(), text=True)
    for line in proc.stdout:  # (an editable install may log its rebuild first)
        if line.strip() == "ready":
            return proc
    raise AssertionError(f"writer exited early with {proc.wait()}")


def _check_whole(target: Path) -> int:
    idx = WordIndex.load(target)  # must never raise: old or new, never torn
    assert len(idx) in (1, 1500)
    return len(idx)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_killed_writer_leaves_a_whole_index(tmp_path):
    import random

    rng = random.Random(7)
    mid_save = 0
    for _ in range(40):
        proc = _start_writer(tmp_path, "k")
        time.sleep(rng.uniform(0.0, 0.3))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        mid_save += bool(list(tmp_path.glob(f".{INDEX_FILE}.*.tmp")))  # died while writing
        _check_whole(tmp_path)
        if mid_save >= 3:
            break
    assert mid_save >= 3, "no kill landed during a save"
    WordIndex.build([("x.py", "x")]).save(tmp_path)
    assert not list(tmp_path.glob(f".{INDEX_FILE}.*.tmp"))  # a crashed writer's leftovers are cleaned


def test_concurrent_writer_processes(tmp_path):
    procs = [_start_writer(tmp_path, "p1"), _start_writer(tmp_path, "p2")]
    try:
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            _check_whole(tmp_path)  # readers take no lock and always see a whole file
    finally:
        for p in procs:
            p.kill()
            p.wait()
    _check_whole(tmp_path)


# --- debounced persistence ---------------------------------------------------------


def test_scheduler_coalesces_a_burst(tmp_path):
    idx = WordIndex.build(DOCS)
    with PersistScheduler(idx, tmp_path, debounce_ms=150) as saver:
        for i in range(20):
            idx.update(f"burst/{i}.py", f"burst word{i}")
            saver.schedule()
        assert saver.pending and saver.saves == 0
        assert not (tmp_path / INDEX_FILE).exists()
        deadline = time.monotonic() + 10
        while saver.saves == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert saver.saves == 1 and not saver.pending
        assert len(WordIndex.load(tmp_path)) == len(DOCS) + 20
        assert saver.flush() is False  # nothing pending


def test_scheduler_flush_and_immediate(tmp_path):
    idx = WordIndex.build(DOCS)
    saver = PersistScheduler(idx, tmp_path / "a", debounce_ms=60_000)
    saver.schedule()
    assert saver.flush() is True
    assert len(WordIndex.load(tmp_path / "a")) == len(DOCS)
    saver.close()
    with pytest.raises(RuntimeError):
        saver.schedule()
    now = PersistScheduler(idx, tmp_path / "b", debounce_ms=0)
    idx.update("x.py", "x")
    now.schedule()
    assert len(WordIndex.load(tmp_path / "b")) == len(DOCS) + 1
    now.close()


def test_scheduler_settings(monkeypatch, tmp_path):
    idx = WordIndex()
    monkeypatch.setenv("CODELEX_PERSIST_DEBOUNCE_MS", "0")
    assert PersistScheduler(idx, tmp_path).debounce_ms == 0
    monkeypatch.setenv("CODELEX_PERSIST_DEBOUNCE_MS", "250")
    assert PersistScheduler(idx, tmp_path).debounce_ms == 250
    monkeypatch.delenv("CODELEX_PERSIST_DEBOUNCE_MS")
    assert PersistScheduler(idx, tmp_path).debounce_ms == 1500
    monkeypatch.setenv("CODELEX_PERSIST_DEBOUNCE_MS", "soon")
    with pytest.raises(ValueError, match="CODELEX_PERSIST_DEBOUNCE_MS"):
        PersistScheduler(idx, tmp_path)
    with pytest.raises(ValueError):
        PersistScheduler(idx, tmp_path, debounce_ms=-1)
    with pytest.raises(TypeError):
        PersistScheduler("not an index", tmp_path, debounce_ms=0)


def test_scheduler_reports_background_failures(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the index directory should be")
    errors = []
    idx = WordIndex.build(DOCS)
    saver = PersistScheduler(idx, blocker / "sub", debounce_ms=10, on_error=errors.append)
    saver.schedule()
    deadline = time.monotonic() + 10
    while not errors and time.monotonic() < deadline:
        time.sleep(0.02)
    assert errors and isinstance(saver.last_error, OSError)
    with pytest.raises(OSError):
        saver.flush()  # still pending, and a synchronous flush raises
    saver.cancel()
    saver.close()
    assert not saver.pending


def test_abandoned_scheduler_flushes_when_collected(tmp_path):
    import gc

    idx = WordIndex.build(DOCS)
    saver = PersistScheduler(idx, tmp_path, debounce_ms=600_000)
    saver.schedule()
    del saver
    gc.collect()
    assert len(WordIndex.load(tmp_path)) == len(DOCS)


def test_pending_save_is_flushed_at_exit(tmp_path):
    script = textwrap.dedent(
        """
        import sys
        from codelex import PersistScheduler, WordIndex
        idx = WordIndex.build([("a.py", "alpha")])
        saver = PersistScheduler(idx, sys.argv[1], debounce_ms=600_000)
        idx.update("b.py", "beta")
        saver.schedule()
        """
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True, env=_env(), timeout=120)
    assert sorted(WordIndex.load(tmp_path).files) == ["a.py", "b.py"]


def test_fifo_is_refused_without_blocking(tmp_path):
    """Regression (issue 12): opening a FIFO would block until a writer came."""
    import threading

    (tmp_path / "idx").mkdir()
    os.mkfifo(tmp_path / "idx" / "index.clx")
    from codelex.persist.lexical import read_lexical_header as read_header

    for target, fn in ((tmp_path / "idx", WordIndex.load), (tmp_path / "idx" / "index.clx", WordIndex.load),
                       (tmp_path / "idx", read_header)):
        outcome = []

        def call():
            try:
                fn(target)
            except IndexFormatError as exc:
                outcome.append(str(exc))

        t = threading.Thread(target=call, daemon=True)
        t.start()
        t.join(10)
        assert not t.is_alive(), f"{fn.__name__} blocked on a FIFO"
        assert outcome and "not a regular file" in outcome[0], outcome
