"""Files under an index directory that this user's codelex did not write are never trusted.

The attacker is a repository's author: anything committed under ``.codelex/``
becomes the victim's own file on clone, so neither the directory ownership
rule nor the (unkeyed) checksums tell it from the victim's.  A per-user key
does: every file codelex writes carries a MAC of its header under it
(``codelex.persist.trust``).  A forged word index is validated in full or
rebuilt, never read through its own digests; forged caches are rebuilt;
links are not followed; a lock file that is a link is replaced; what a
forged header says never reaches a terminal raw; a deeply nested docs cache
is no cache.  (Security review findings 1, 2, 6, 13, 14 and the docs cache.)
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import codelex
from codelex import Project, WordIndex
from codelex.defaults import INDEX_FILE, LOCK_FILE, STRUCTURE_FILE
from codelex.errors import IndexFormatError

try:  # (absent before the fix: the forgeries below are then plain saves, which is what an attacker wrote)
    from codelex.persist import trust
    from codelex.persist.container import UntrustedIndexError
except ImportError:  # pragma: no cover
    trust = None
    UntrustedIndexError = IndexFormatError

POSIX = os.name == "posix" and hasattr(os, "geteuid")
posix_only = pytest.mark.skipif(not POSIX, reason="links, owners and modes as POSIX has them")
ESCAPE = "\x1b]0;PWNED\x07\x1b[2J"
ENV = dict(os.environ, CODELEX_NO_SERVER="1")


@contextlib.contextmanager
def attacker():
    """Write files as someone else would: under another key (this process's is restored after)."""
    if trust is None:  # pragma: no cover - before the fix there is no key to differ
        yield
        return
    saved = (trust._loaded, trust._key, trust._problem)
    trust._loaded, trust._key, trust._problem = True, b"\xa5" * trust.KEY_BYTES, None
    try:
        yield
    finally:
        trust._loaded, trust._key, trust._problem = saved


def _cli(*args, cwd=None, env=None):
    return subprocess.run([sys.executable, "-c", "from codelex.cli import main; raise SystemExit(main())", *args],
                          capture_output=True, timeout=180, cwd=cwd, env=env or ENV)


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "a.py").write_text("def hello():\n    return greeting_value\n\n\ndef other():\n    return 2\n")
    (root / "b.md").write_text("hello world\n")
    (root / "docs/guide.md").write_text("# Guide\n\n## Hello\nSay hello to the world.\n")
    return root


def _built(tmp_path: Path) -> Path:
    """A tree with its index saved in ``<root>/.codelex`` (by this user)."""
    root = _tree(tmp_path)
    with Project(root) as project:
        project.open()
        project.wait_structure()
        assert project.index_dir == root / ".codelex"
    return root


def _forge_index(directory: Path, **arrays) -> None:
    """Rewrite ``directory``'s index as its author would: arrays replaced, every digest recomputed."""
    from codelex.persist.lexical import load_lexical, save_lexical

    kwargs = {"allow_untrusted": True} if trust is not None else {}
    snapshot = load_lexical(directory, verify=False, **kwargs)
    for name, fn in arrays.items():
        value = np.array(getattr(snapshot, name))
        fn(value)
        setattr(snapshot, name, value)
    snapshot.digests = None
    with attacker():
        save_lexical(snapshot, directory)


# --- the key ---------------------------------------------------------------------------


@pytest.fixture
def own_key(tmp_path, monkeypatch):
    """A key of this test's own (in a fresh cache directory); the process's key is read again after."""
    if trust is None:
        pytest.fail("no per-user key (codelex.persist.trust is missing)")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    trust._reset()
    yield tmp_path / "cache" / "codelex" / "key"
    monkeypatch.undo()
    trust._reset()


@posix_only
def test_the_user_key_is_made_once_owner_only_beside_the_projects(own_key):
    from codelex.persist.layout import user_cache_dir

    key = trust.user_key()
    assert key is not None and len(key) == 32
    assert trust.key_file() == own_key == user_cache_dir().parent / "key"
    assert stat.S_IMODE(os.lstat(own_key).st_mode) == 0o600
    assert stat.S_IMODE(os.lstat(own_key.parent).st_mode) == 0o700
    trust._reset()
    assert trust.user_key() == key  # read again, not made again
    assert not [p for p in own_key.parent.iterdir() if p.name.startswith(".key.")]


@posix_only
@pytest.mark.parametrize("damage", ["link", "open-to-others", "short"])
def test_an_unusable_key_trusts_nothing(own_key, tmp_path, damage):
    trust.user_key()
    if damage == "link":
        elsewhere = tmp_path / "elsewhere"
        elsewhere.write_bytes(own_key.read_bytes())
        elsewhere.chmod(0o600)
        own_key.unlink()
        own_key.symlink_to(elsewhere)
    elif damage == "open-to-others":
        own_key.chmod(0o644)
    else:
        own_key.write_bytes(b"short")
    trust._reset()
    assert trust.user_key() is None and trust.key_problem()
    WordIndex.build([("a.py", "def hello(): pass")]).save(tmp_path / "idx")
    with pytest.raises(UntrustedIndexError, match="no user key"):
        WordIndex.load(tmp_path / "idx", trusted_only=True)
    assert [h.file for h in WordIndex.load(tmp_path / "idx").search("hello")] == ["a.py"]  # validated in full


def test_an_index_written_with_another_key_is_untrusted(tmp_path):
    """Another account or machine (here: another cache directory, so another key) wrote it."""
    writer = textwrap.dedent("""
        import sys
        from codelex import WordIndex
        WordIndex.build([("a.py", "def hello(): return greeting_value"), ("b.md", "hello world")]).save(sys.argv[1])
    """)
    env = dict(ENV, XDG_CACHE_HOME=str(tmp_path / "other-cache"))
    subprocess.run([sys.executable, "-c", writer, str(tmp_path / "idx")], check=True, env=env, timeout=120)
    assert (tmp_path / "other-cache" / "codelex" / "key").exists()
    with pytest.raises(UntrustedIndexError):
        WordIndex.load(tmp_path / "idx", trusted_only=True)
    from codelex.persist.lexical import load_lexical, verify_lexical

    snapshot = load_lexical(tmp_path / "idx", allow_untrusted=True)
    assert snapshot.trusted is False and snapshot.digests is None  # nothing lazily believed
    with pytest.raises(UntrustedIndexError):
        verify_lexical(tmp_path / "idx")
    loaded = WordIndex.load(tmp_path / "idx")  # validated in full, then answers as the index saved
    assert [h.file for h in loaded.search("hello")] == ["a.py", "b.md"]
    assert loaded._live.verified_chunks() == (0, 0)  # no digests were handed to the native core
    WordIndex.load(tmp_path / "idx").save(tmp_path / "idx")  # saved by this user: trusted from now on
    assert load_lexical(tmp_path / "idx").trusted


# --- a forged word index ----------------------------------------------------------------

# Each keeps what the loader compares at open (the last offsets) and lies inside: before the fix, the
# lazily checked load believed the recomputed digests (post_doc, term_ptr and vocab crashed the process;
# post_tf and line_data answered with made-up lines).
_FORGERIES = {
    "post_doc": {"post_doc": lambda a: a.__setitem__(slice(None), 0xFF)},
    "post_doc_one": {"post_doc_min": lambda a: a.__setitem__(-1, a[-1] + 1000)},
    "post_doc_width": {"post_doc_width": lambda a: a.__setitem__(0, 32)},
    "term_ptr": {"term_ptr_rel": lambda a: a.__setitem__(slice(1, -9), 0xFF)},
    "term_ptr_min": {"term_ptr_rel_min": lambda a: a.__setitem__(slice(None), 0x7FFFFFF0)},
    "line_ckpt": {"line_ckpt_rel": lambda a: a.__setitem__(0, 5)},
    "line_data": {"line_data": lambda a: a.__setitem__(slice(None), 0xFF)},
    "post_tf": {"post_tf": lambda a: a.__setitem__(slice(None), 200)},
    "vocab": {"vocab_block_rel": lambda a: a.__setitem__(slice(0, -1), 0x7FFFFFF0)},
    "vocab_blocks": {"vocab_blocks": lambda a: a.__setitem__(slice(None), 0xFF)},
    "paths": {"path_offsets": lambda a: a.__setitem__(slice(1, -1), 10**9)},
}

_LOAD_AND_SEARCH = textwrap.dedent("""
    import sys
    from codelex import WordIndex
    from codelex.errors import IndexFormatError
    try:
        index = WordIndex.load(sys.argv[1])
        hits = [h.file for q in ("hello", "greeting_value", "world", "other") for h in index.search(q)]
        index.update("a.py", "def hello(): pass")
        index.merge()
        print("loaded", hits)
    except IndexFormatError as exc:
        print("refused", exc)
""")


@pytest.mark.parametrize("forgery", sorted(_FORGERIES))
def test_a_forged_word_index_is_refused_or_validated_never_a_crash(tmp_path, forgery):
    root = _built(tmp_path)
    _forge_index(root / ".codelex", **_FORGERIES[forgery])
    r = subprocess.run([sys.executable, "-c", _LOAD_AND_SEARCH, str(root / ".codelex")], capture_output=True,
                       text=True, timeout=120, env=ENV)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])  # (a crash: -11)
    assert r.stdout.startswith("refused corrupt index"), r.stdout  # validated in full: every lie is found


def test_a_committed_forged_index_never_crashes_the_cli_and_is_rebuilt(tmp_path):
    """The review's reproduction: a forged index.clx with every digest recomputed, in the checkout."""
    root = _built(tmp_path)
    _forge_index(root / ".codelex", post_doc=_FORGERIES["post_doc"]["post_doc"])
    verify = _cli("index", "--verify", "--root", str(root))
    assert verify.returncode == 2, (verify.returncode, verify.stdout, verify.stderr)
    assert b"untrusted" in verify.stderr and b"not signed with this user's key" in verify.stderr
    search = _cli("search", "hello", "--root", str(root))
    assert search.returncode == 0, (search.returncode, search.stderr[-2000:])
    assert b"a.py" in search.stdout and b"b.md" in search.stdout
    _forge_index(root / ".codelex", post_doc=_FORGERIES["post_doc"]["post_doc"])
    build = _cli("index", "--root", str(root))
    assert build.returncode == 0, (build.returncode, build.stderr[-2000:])
    assert b"built from scratch: the saved index was not written by this user" in build.stdout
    assert _cli("index", "--verify", "--root", str(root)).returncode == 0  # what the build saved is this user's


def test_a_project_rebuilds_an_untrusted_index_instead_of_adopting_it(tmp_path):
    """A forgery that is structurally valid would still lie (here: hide a.py); a project never adopts it."""
    root = _built(tmp_path)

    def hide_first_document(a):  # every posting of document 0 now names the last document instead
        a[a == 0] = a.max()

    _forge_index(root / ".codelex", post_doc=hide_first_document)
    with Project(root, build_structure=False) as project:
        project.open()
        assert project.last_report.mode == "full" and project.last_report.reason == "untrusted-index"
        assert "a.py" in [h.file for h in project.search("greeting_value").results]
    with Project(root, build_structure=False) as project:
        project.open()
        assert project.last_report.mode == "incremental"  # the rebuilt index is this user's


# --- caches -------------------------------------------------------------------------------


def test_a_forged_structure_store_never_reaches_outline(tmp_path):
    from codelex.persist.structure import load_structure, save_structure

    root = _built(tmp_path)
    directory = root / ".codelex"
    snapshot = load_structure(directory)
    names = snapshot.arrays["name_blob"]
    assert b"hello" in names.tobytes()
    snapshot.arrays["name_blob"] = np.frombuffer(names.tobytes().replace(b"hello", b"EVILZ"), dtype=np.uint8)
    with attacker():
        save_structure(snapshot, directory)
    with pytest.raises(UntrustedIndexError):
        load_structure(directory)
    with Project(root) as project:
        project.open()
        project.wait_structure()
        names = [d.name for d in project.outline("a.py").definitions]
    assert "hello" in names and "EVILZ" not in names


def test_forged_listing_graph_embeddings_and_docs_caches_are_refused(tmp_path):
    from codelex.docs import DocsIndex
    from codelex.persist.embeddings import load_embeddings, save_embeddings
    from codelex.persist.graph import (COUNTS_FILE, load_graph_counts, load_graph_prior, load_graph_refs,
                                       save_graph_counts, save_graph_refs)
    from codelex.persist.listing import load_listing, save_listing

    root = _built(tmp_path)
    directory = root / ".codelex"
    DocsIndex.for_project(root)
    record = load_listing(directory)
    assert record is not None
    keys = np.arange(1, 4, dtype=np.uint64)
    vectors = np.eye(3, dtype=np.float32)
    save_embeddings(directory, "model", keys, vectors)
    assert load_embeddings(directory, "model") is not None
    with attacker():
        save_listing(record, directory)
        save_graph_refs({"a.py": (1, 2, [["python", "os", 0, []]])}, "rules", directory, {"a.py": 3})
        save_graph_counts({"a.py": 9}, "rules", directory, "f1:forged")
        save_embeddings(directory, "model", keys, vectors)
        (directory / "docs.clx").unlink()  # (an unchanged tree's store is not rewritten: force it)
        DocsIndex.for_project(root)
    assert load_listing(directory) is None
    assert load_graph_refs(directory, "rules") is None and load_graph_prior(directory, "rules") is None
    assert load_graph_counts(directory, "rules", COUNTS_FILE) is None
    with pytest.raises(UntrustedIndexError):
        load_embeddings(directory, "model")
    from codelex.persist.docs import load_docs

    assert (directory / "docs.clx").exists() and load_docs(directory) is None  # the attacker's: never read
    assert [h.section.heading for h in DocsIndex.for_project(root).search("hello")]  # rebuilt, answers
    assert load_docs(directory) is not None


def test_a_legacy_or_garbage_docs_cache_is_no_cache(tmp_path):
    """A docs.json of an older version (deeply nested, as the JSON cache's harness found) is neither read nor kept;
    garbage where the store should be is no store."""
    root = _built(tmp_path)
    legacy = root / ".codelex" / "docs.json"
    legacy.write_bytes(b"[" * 200_000 + b"]" * 200_000 + b"\n{}")
    for garbage in (b"[" * 200_000, b"CODELEX\x00" + b"\x00" * 16 + b"{" * 100_000):
        (root / ".codelex" / "docs.clx").write_bytes(garbage)
        r = _cli("docs", "hello", "--root", str(root))
        assert r.returncode == 0, r.stderr[-2000:]
        assert b"Traceback" not in r.stderr and b"RecursionError" not in r.stderr
        assert b"guide.md" in r.stdout
    assert not legacy.exists()


def test_deep_nesting_in_a_container_header_is_a_named_error(tmp_path):
    from codelex.persist.container import _PREFIX, MAGIC, verify_container_file

    import xxhash

    blob = b"[" * 200_000 + b"]" * 200_000
    data = _PREFIX.pack(MAGIC, 2, len(blob), xxhash.xxh3_64_intdigest(blob)) + blob
    (tmp_path / "x.clx").write_bytes(data)
    with pytest.raises(IndexFormatError):
        verify_container_file(tmp_path / "x.clx")


# --- links, owners, the lock -----------------------------------------------------------------


@posix_only
def test_a_linked_index_file_is_neither_loaded_nor_written_through(tmp_path):
    from codelex.persist.layout import probe_index

    root = _built(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    WordIndex.build([("victim.py", "def private_victim_secret(): pass")]).save(elsewhere)
    before = (elsewhere / INDEX_FILE).read_bytes()
    (root / ".codelex" / INDEX_FILE).unlink()
    (root / ".codelex" / INDEX_FILE).symlink_to(elsewhere / INDEX_FILE)
    assert probe_index(root / ".codelex") == (None, "a symbolic link")
    with pytest.raises(UntrustedIndexError, match="symbolic link"):
        WordIndex.load(root / ".codelex")
    with Project(root, build_structure=False) as project:
        project.open()
        assert project.search("private_victim_secret").results == []
    assert not (root / ".codelex" / INDEX_FILE).is_symlink()  # the save replaced the link, not its target
    assert (elsewhere / INDEX_FILE).read_bytes() == before


@posix_only
def test_a_linked_structure_store_is_not_followed(tmp_path):
    from codelex.persist.structure import load_structure

    root = _built(tmp_path)
    elsewhere = tmp_path / "elsewhere.clx"
    os.replace(root / ".codelex" / STRUCTURE_FILE, elsewhere)
    (root / ".codelex" / STRUCTURE_FILE).symlink_to(elsewhere)
    with pytest.raises(UntrustedIndexError, match="symbolic link"):
        load_structure(root / ".codelex")


@posix_only
@pytest.mark.parametrize("kind", ["link", "directory", "fifo", "dangling-link"])
def test_a_bad_lock_file_is_replaced_and_a_linked_one_never_truncates_its_target(tmp_path, kind):
    directory = tmp_path / "idx"
    directory.mkdir(mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious victim data\n")
    lock = directory / LOCK_FILE
    if kind == "link":
        lock.symlink_to(victim)
    elif kind == "dangling-link":
        lock.symlink_to(tmp_path / "would-be-created")
    elif kind == "directory":
        (lock / "inside").mkdir(parents=True)
    else:
        os.mkfifo(lock)
    index = WordIndex.build([("a.py", "def hello(): pass")])
    index.save(directory)  # (filelock up to 3.20.0 truncated a linked target; a later one refused: no save, ever)
    assert victim.read_text() == "precious victim data\n"
    assert not (tmp_path / "would-be-created").exists()
    st = os.lstat(lock)
    assert stat.S_ISREG(st.st_mode) and st.st_size == 0
    assert [h.file for h in WordIndex.load(directory).search("hello")] == ["a.py"]


@posix_only
def test_the_lock_still_excludes_writers(tmp_path):
    from codelex.persist.container import directory_lock

    directory = tmp_path / "idx"
    directory.mkdir(mode=0o700)
    with directory_lock(directory):
        with pytest.raises(TimeoutError):
            with directory_lock(directory, timeout=0.2):
                pass
    with directory_lock(directory, timeout=0.2):
        pass


@pytest.mark.skipif(not POSIX or os.geteuid() != 0, reason="another user's file needs root to make")
def test_an_index_file_owned_by_another_user_is_refused(tmp_path):
    from codelex.persist.layout import probe_index

    WordIndex.build([("a.py", "def hello(): pass")]).save(tmp_path)
    os.chown(tmp_path / INDEX_FILE, 65534, 65534)
    assert probe_index(tmp_path)[1].startswith("owned by another user")
    with pytest.raises(UntrustedIndexError, match="another user"):
        WordIndex.load(tmp_path)


# --- what a forged header says never reaches a terminal raw -----------------------------------


def _forge_header(directory: Path, **fields) -> None:
    """Rewrite the index header with ``fields`` (values the attacker chose), digests recomputed."""
    import struct

    import xxhash

    file = directory / INDEX_FILE
    data = bytearray(file.read_bytes())
    magic, version, hlen, _ = struct.unpack_from("<8sIIQ", data)
    header = json.loads(bytes(data[24:24 + hlen]))
    header.update(fields)
    header.pop("mac", None)
    blob = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    data_start = min(a["offset"] for a in header["arrays"])
    assert 24 + len(blob) <= data_start
    data[24:data_start] = blob + b"\x00" * (data_start - 24 - len(blob))
    struct.pack_into("<8sIIQ", data, 0, magic, version, len(blob), xxhash.xxh3_64_intdigest(blob))
    file.write_bytes(data)


@pytest.mark.parametrize("field", ["unicode_version", "line_checkpoint", "file_size"])
def test_escape_sequences_in_a_forged_header_never_reach_the_terminal_raw(tmp_path, field):
    root = _built(tmp_path)
    _forge_header(root / ".codelex", **{field: ESCAPE})
    for args in (("index",), ("search", "hello"), ("index", "--verify"), ("status",)):
        r = _cli(*args, "--root", str(root))
        assert r.returncode in (0, 1, 2), (args, r.returncode, r.stderr[-2000:])  # (status: 1 when stale)
        for stream in (r.stdout, r.stderr):
            assert b"\x1b" not in stream and b"\x07" not in stream, (args, stream[-2000:])
        _forge_header(root / ".codelex", **{field: ESCAPE})  # (a build replaced it)
    try:
        WordIndex.load(root / ".codelex")
    except IndexFormatError as exc:
        assert "\x1b" not in str(exc) and "\x07" not in str(exc)


def test_an_unreadable_index_reason_is_escaped_where_it_is_printed(tmp_path, monkeypatch):
    """Defense in depth: a reason that quotes a value the file held is escaped by `codelex index`."""
    from codelex.project import lifecycle

    root = _built(tmp_path)
    monkeypatch.setattr(lifecycle, "load_saved", lambda state: (None, f"unreadable-index: {ESCAPE}"))
    from codelex.cli import main

    import io

    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["index", "--root", str(root)]) == 0
    assert "\x1b" not in out.getvalue() and "could not be read (\\x1b]0;PWNED" in out.getvalue()
