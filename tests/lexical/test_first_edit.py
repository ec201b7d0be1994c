"""The first edits after a build, a load or a merge cost what later ones cost (issue 27, finding 15).

No edit derives anything over the whole index: a retired base document's
postings stop counting where df is read (its removal is a bit and a sorted
list), so an edit reads no chunk of the base's postings, and the statistics
stay exact.  What a loaded index's first edits would still touch, the mapped
term dictionary, a native thread readies ahead of them (``prepare_edits``).
These tests check the mechanism, never a time.
"""

from __future__ import annotations

import gc
import random
import subprocess
import sys
import time

import pytest

import codelex
from codelex import WordIndex

LOGICAL_STATS = ("files", "tokens", "postings", "term_doc_pairs", "total_tokens")
QUERIES = ["alpha beta", "parse config", "handler", "shared name", "gamma_7 delta", "render frame", "zeta"]


def corpus(n: int = 400, seed: int = 5) -> dict[str, str]:
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "parse", "config", "handler", "shared_name", "renderFrame", "zeta",
             "omega", "kappa", "lambda_fn", "Sigma", "tau"]
    docs = {}
    for i in range(n):
        lines = [" ".join(rng.choice(words) + (f"_{rng.randrange(50)}" if rng.random() < 0.3 else "")
                          for _ in range(rng.randrange(1, 8))) for _ in range(rng.randrange(1, 12))]
        docs[f"pkg{i % 7}/mod_{i}.py"] = f"def handler_{i}():\n" + "\n".join(lines) + "\n"
    return docs


def wait_warmup(index: WordIndex, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while index._live.warmup_state == "running" and time.monotonic() < deadline:
        time.sleep(0.002)
    return index._live.warmup_state


def assert_same(idx: WordIndex, docs: dict[str, str]) -> None:
    ref = WordIndex.build(list(docs.items()))
    got, want = idx.stats(), ref.stats()
    assert {k: got[k] for k in LOGICAL_STATS} == {k: want[k] for k in LOGICAL_STATS}
    for q in QUERIES:
        for ranking in codelex.RANKINGS:
            assert idx.search(q, limit=30, ranking=ranking) == ref.search(q, limit=30, ranking=ranking), (q, ranking)


@pytest.fixture
def saved(tmp_path):
    docs = corpus()
    WordIndex.build(list(docs.items())).save(tmp_path)
    return docs, tmp_path


def test_edits_after_a_load_read_no_base_chunk(saved):
    """An edit (update or removal of a saved document) reads nothing of the base's postings: no chunk of them is
    verified, as a whole-index derivation (a forward index, df for every term) on the edit path would."""
    docs, d = saved
    idx = WordIndex.load(d)
    verified_at_load, total = idx._live.verified_chunks()
    assert total > verified_at_load + 2
    paths = sorted(docs)
    for i, path in enumerate(paths[:20]):
        docs[path] += f"\nedited_{i} = alpha\n"
        idx.update(path, docs[path])
    idx.remove(paths[20])
    del docs[paths[20]]
    idx.update("new/file.py", "def brand_new(): alpha")
    docs["new/file.py"] = "def brand_new(): alpha"
    assert idx._live.verified_chunks()[0] == verified_at_load  # (a search or stats() reads the base; edits do not)
    assert idx._live.dead_base_docs == 21
    assert_same(idx, docs)


def test_first_edit_after_a_build_or_merge_reads_no_base_either():
    """A built index keeps no forward index, and needs none: its first edit, and the first after a merge,
    touch the edited document only (the memory an edit adds is the delta's, not the index's)."""
    docs = corpus(2000)
    idx = WordIndex.build(list(docs.items()))
    idx.merge_ratio = None
    before = idx.stats()["index_bytes"]
    path = sorted(docs)[3]
    docs[path] = "def changed(): zeta\n"
    idx.update(path, docs[path])
    grown = idx.stats()["index_bytes"] - before
    assert grown < 64 * 1024  # the delta's lists and pages for a one-line document, not per-posting tables
    idx.merge()
    assert idx._live.dead_base_docs == 0
    path = sorted(docs)[4]
    docs[path] += "\nmore = gamma\n"
    idx.update(path, docs[path])
    assert idx._live.dead_base_docs == 1
    assert_same(idx, docs)


def test_df_stays_exact_through_interleaved_edits_and_queries(saved):
    """df of a term with removed base documents is counted when read and cached; the cache is brought up to
    date with the documents removed since, so queries between edits answer exactly like fresh builds."""
    docs, d = saved
    idx = WordIndex.load(d)
    idx.merge_ratio = None
    rng = random.Random(9)
    paths = sorted(docs)
    for step in range(40):
        path = rng.choice(paths)
        if step % 5 == 4 and path in docs:
            idx.remove(path)
            del docs[path]
        else:
            docs[path] = docs.get(path, "") + f"\nalpha handler step_{step} = beta\n"
            idx.update(path, docs[path])
        if step % 4 == 0:
            ref = WordIndex.build(list(docs.items()))
            for q in QUERIES:
                assert idx.search(q, limit=20) == ref.search(q, limit=20), (step, q)
    assert_same(idx, docs)


@pytest.mark.parametrize("ratio", [0.02, 0.1])
def test_merge_decisions_from_bounds_equal_exact_ones(saved, ratio):
    """needs_merge decides from bounds on the removed documents' postings until the threshold lies between
    them; it merges at exactly the edit that an index with exact counts merges at."""
    docs, d = saved
    exact, bounded = WordIndex.load(d), WordIndex.load(d)
    for idx in (exact, bounded):
        idx.merge_ratio = ratio
        idx.merge_min_postings = 0
    rng = random.Random(3)
    merges = 0
    for step, path in enumerate(rng.sample(sorted(docs), 120)):
        docs[path] = f"def rewritten_{step}(): zeta\n"
        exact._live.merge_state()  # counts every base document's postings: its decisions never use bounds
        exact.update(path, docs[path])
        bounded.update(path, docs[path])
        assert exact._live.dead_base_docs == bounded._live.dead_base_docs, step
        merges += exact._live.dead_base_docs == 0
    assert merges > 0
    assert_same(bounded, docs)


def test_per_edit_encoding_equals_the_build_on_long_lines_and_repeats():
    """The per-edit encoder's line dedup (a table sized by a line's terms, not the vocabulary) gives the
    build's postings: a line of 3,000 distinct tokens, repeats, and definitions on lines out of order."""
    long_line = " ".join(f"tok_{i} w{i % 7}" for i in range(3000))
    content = f"def top(): pass\n{long_line}\nalpha alpha alpha beta alpha\n" + "gamma\n" * 5 + long_line + "\n"
    definitions = [("later_name", 5), ("first_name", 2), ("later_name", 5), ("top", 1)]
    base = {f"f{i}.py": f"alpha_{i} beta" for i in range(30)}
    idx = WordIndex.build(list(base.items()))
    idx.update("f3.py", content, definitions=definitions)
    idx.update("new.py", content)
    ref = WordIndex.build([*((p, c) for p, c in base.items() if p != "f3.py"), ("f3.py", content, -1, definitions),
                           ("new.py", content)])
    assert {k: idx.stats()[k] for k in LOGICAL_STATS} == {k: ref.stats()[k] for k in LOGICAL_STATS}
    for q in ["tok 2999", "w3 alpha", "later name", "first name", "gamma", "alpha beta"]:
        assert idx.search(q, limit=10) == ref.search(q, limit=10), q


def test_paths_found_natively_without_decoding_the_saved_table(saved):
    """Edits find a path's slot in the native table: the saved paths are not decoded, nor a dict of them built;
    new paths are appended behind the saved ones and read back right."""
    docs, d = saved
    idx = WordIndex.load(d)
    table = idx._view.table
    some = sorted(docs)[7]
    idx.update(some, docs[some] + "\nalpha\n")
    idx.update("zz/new_one.py", "def fresh_name(): xylophone")
    idx.update("aa/new_two.py", "def other_name(): xylophone")
    assert table.paths._list is None and table._slot_of is None  # nothing decoded or built
    assert "zz/new_one.py" in idx and "aa/new_two.py" in idx and some in idx and "absent.py" not in idx
    assert idx.file_info("aa/new_two.py").size == len("def other_name(): xylophone")
    assert {h.file for h in idx.search("xylophone", limit=10)} == {"zz/new_one.py", "aa/new_two.py"}
    assert idx.files[-2:] == ["zz/new_one.py", "aa/new_two.py"]
    idx.remove("zz/new_one.py")
    assert "zz/new_one.py" not in idx
    idx.update("zz/new_one.py", "back again xylophone")  # a removed path keeps its slot
    assert idx._live.find_slot("zz/new_one.py") == len(docs)
    idx.merge()
    docs.update({some: docs[some] + "\nalpha\n", "zz/new_one.py": "back again xylophone",
                 "aa/new_two.py": "def other_name(): xylophone"})
    assert sorted(idx.files) == sorted(docs)
    assert_same(idx, docs)


def test_prepare_edits_readies_the_dictionary_on_a_native_thread(saved):
    docs, d = saved
    idx = WordIndex.load(d)
    assert idx._live.warmup_state == "none"
    verified_at_load = idx._live.verified_chunks()[0]
    idx.prepare_edits()
    assert wait_warmup(idx) == "done"
    assert idx._live.verified_chunks()[0] == verified_at_load  # the dictionary only, not the postings
    path = sorted(docs)[0]
    docs[path] += "\nwarm = beta\n"
    idx.update(path, docs[path])
    assert_same(idx, docs)


def test_first_update_of_a_loaded_index_starts_the_warmup(saved):
    """An index that receives an edit is expected to receive more: the first update readies the rest."""
    docs, d = saved
    idx = WordIndex.load(d)
    path = sorted(docs)[1]
    idx.update(path, docs[path] + "\nx = 1\n")
    assert idx._live.warmup_state in ("running", "done")
    assert wait_warmup(idx) == "done"
    built = WordIndex.build(list(docs.items()))
    built.update(path, "y = 2")
    assert built._live.warmup_state == "none"  # nothing to ready in a built index


def test_warmup_stops_with_the_index(saved):
    """Destroying the index stops and joins its warm-up thread (no thread outlives it)."""
    _, d = saved
    for _ in range(5):
        idx = WordIndex.load(d)
        idx.prepare_edits()
        del idx
        gc.collect()


def test_interpreter_exit_with_a_running_warmup_is_clean(saved):
    """Exiting while a warm-up runs never aborts, whether the index is collected at exit or still referenced."""
    _, d = saved
    code = (
        "import sys, codelex\n"
        f"keep = codelex.WordIndex.load({str(d)!r})\n"
        "keep.prepare_edits()\n"
        f"other = codelex.WordIndex.load({str(d)!r}); other.prepare_edits()\n"
        "keep.me = keep; del other\n"  # one in a cycle, referenced at exit; one collected at once
        "print('ok')\n"
    )
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == "ok"


def test_corrupt_dictionary_chunk_found_by_the_warmup_is_still_an_error(tmp_path):
    """The warm-up never raises on its thread: a mismatching chunk stays marked, and the edit or search that
    reads it gets the usual IndexFormatError."""
    import numpy as np

    from codelex.errors import IndexFormatError
    from codelex.persist.lexical import load_lexical

    docs = corpus(200)
    WordIndex.build(list(docs.items())).save(tmp_path)
    snapshot = load_lexical(tmp_path, mmap=False)
    blob = np.array(snapshot.vocab_blocks, copy=True)
    blob[len(blob) // 2] ^= 0x55
    snapshot.vocab_blocks = blob
    idx = WordIndex.from_snapshot(snapshot)
    idx.prepare_edits()
    assert wait_warmup(idx) == "stopped"
    with pytest.raises(IndexFormatError):
        idx.verify()
