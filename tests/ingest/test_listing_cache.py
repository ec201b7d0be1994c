"""The listing cache: a walk's record spares the next walk only while no directory or ignore file changed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import codelex
from codelex._native import ingest as native_ingest
from codelex.ingest import list_files
from codelex.persist.listing import load_listing, save_listing

OLD = 1_600_000_000 * 10**9  # a fixed mtime well in the past (not "racy")


def write(root: Path, rel: str, data: str = "x = 1\n") -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(data, encoding="utf-8")


def age(root: Path) -> None:
    """Give every directory and file an old mtime, as a tree that was not touched for a while."""
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames:
            os.utime(os.path.join(dirpath, name), ns=(OLD, OLD))
    for dirpath, dirnames, filenames in sorted(os.walk(root), key=lambda x: -len(x[0])):
        os.utime(dirpath, ns=(OLD, OLD))


def same(a, b) -> None:
    assert a.files == b.files
    assert dict(a.skipped) == dict(b.skipped)
    assert dict(a.pruned_dirs) == dict(b.pruned_dirs)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write(root, "src/app.py", "def main(): pass\n")
    write(root, "src/pkg/mod.py", "def f(): pass\n")
    write(root, "src/pkg/big.py", "x = 1\n" * 10)
    write(root, "build/out.py")
    write(root, "notes.txt")
    write(root, ".gitignore", "build/\n*.log\n")
    write(root, "src/.gitignore", "skip_*.py\n")
    write(root, "src/skip_me.py")
    age(root)
    return root


def test_an_unchanged_tree_is_listed_from_the_record(tree):
    first = list_files(tree, use_git=False, max_bytes=30)
    assert first.record is not None and not first.cached
    second = list_files(tree, use_git=False, max_bytes=30, previous=first.record)
    assert second.cached
    same(second, first)
    assert [f.path for f in second.files] == ["src/app.py", "src/pkg/mod.py"]
    assert second.skipped["too-large"] == 1


@pytest.mark.parametrize("change", [
    lambda r: write(r, "src/pkg/new.py"),                       # a new file: its directory's mtime moves
    lambda r: os.remove(r / "src/pkg/mod.py"),                  # a removal
    lambda r: os.rename(r / "src/app.py", r / "src/main.py"),   # a rename
    lambda r: write(r, "src/.gitignore", "skip_*.py\napp.py\n"),  # an edited ignore file
    lambda r: os.remove(r / "src/.gitignore"),
    lambda r: write(r, "build/.gitignore", "!out.py\n"),        # inside an ignored directory: no effect
    lambda r: write(r, "newdir/x.py"),                          # a new directory
])
def test_any_change_gives_what_a_fresh_walk_gives(tree, change):
    first = list_files(tree, use_git=False)
    change(tree)
    again = list_files(tree, use_git=False, previous=first.record)
    same(again, list_files(tree, use_git=False))


def test_sizes_are_checked_afresh(tree):
    first = list_files(tree, use_git=False, max_bytes=30)
    p = tree / "src/app.py"
    p.write_text("y = 2\n" * 20, encoding="utf-8")
    os.utime(p, ns=(OLD + 1, OLD + 1))
    again = list_files(tree, use_git=False, max_bytes=30, previous=first.record)
    assert again.cached  # the file changed, not its directory
    same(again, list_files(tree, use_git=False, max_bytes=30))


def test_recent_directories_are_not_trusted(tmp_path):
    write(tmp_path, "a/b.py")
    first = list_files(tmp_path, use_git=False)  # just written: within the racy window
    assert any(m < 0 for _, m in first.record.dirs)
    assert not list_files(tmp_path, use_git=False, previous=first.record).cached


def test_other_options_or_patterns_walk_again(tree):
    first = list_files(tree, use_git=False)
    assert not list_files(tree, use_git=False, ignore=["*.txt"], previous=first.record).cached
    assert list_files(tree, use_git=False, previous=first.record).cached


def test_the_record_round_trips_and_a_damaged_one_is_ignored(tree, tmp_path):
    first = list_files(tree, use_git=False)
    d = tmp_path / "idx"
    save_listing(first.record, d)
    assert load_listing(d) == first.record
    data = bytearray((d / "listing.clx").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (d / "listing.clx").write_bytes(data)
    assert load_listing(d) is None
    assert load_listing(tmp_path / "missing") is None


def test_a_project_reopens_from_the_record_and_sees_new_files(tree, tmp_path):
    idx = tmp_path / "idx"
    with codelex.Project(tree, index_dir=idx, use_git=False) as p:
        p.open()
    assert (idx / "listing.clx").exists()
    with codelex.Project(tree, index_dir=idx, use_git=False) as p:
        p.open()
        assert p.last_report.files == 3
    write(tree, "src/pkg/later.py", "def later_function(): pass\n")
    with codelex.Project(tree, index_dir=idx, use_git=False) as p:
        p.open()
        assert [h.file for h in p.search("later_function").results] == ["src/pkg/later.py"]


@pytest.mark.skipif(not native_ingest.SUPPORTED, reason="batch lstat is POSIX only")
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(st.text(st.characters(blacklist_characters="/\0", blacklist_categories=("Cs",)),
                              min_size=1, max_size=12), max_size=12))
def test_batch_lstat_agrees_with_os_lstat(tmp_path, names):
    import stat as stat_mod

    paths = []
    for i, name in enumerate(names):
        if name in (".", ".."):
            continue
        rel = f"d{i}/{name}"
        try:
            write(tmp_path, rel, "x" * i)
        except OSError:
            continue
        paths.append(rel)
    paths += ["missing/file.py", "d0"]
    mtime, size, kind = native_ingest.stat_paths(tmp_path, paths)
    for rel, m, s, k in zip(paths, mtime.tolist(), size.tolist(), kind.tolist()):
        try:
            st_ = os.lstat(tmp_path / rel)
        except FileNotFoundError:
            assert k == native_ingest.MISSING and m == -1 and s == -1
            continue
        want = native_ingest.FILE if stat_mod.S_ISREG(st_.st_mode) else (
            native_ingest.DIRECTORY if stat_mod.S_ISDIR(st_.st_mode) else k)
        assert (m, k) == (st_.st_mtime_ns, want)
        if k == native_ingest.FILE:
            assert s == st_.st_size


def test_batch_lstat_validates_its_arguments(tmp_path):
    if not native_ingest.SUPPORTED:
        pytest.skip("POSIX only")
    with pytest.raises(TypeError):
        native_ingest.stat_paths(tmp_path, [b"x"])
    with pytest.raises(ValueError):
        native_ingest.stat_paths(tmp_path, ["a\0b"])
    assert [a.tolist() for a in native_ingest.stat_paths(tmp_path, [])] == [[], [], []]


@pytest.mark.skipif(not native_ingest.SUPPORTED, reason="the native batch lstat")
@pytest.mark.parametrize("max_bytes", [30, None, 0])
def test_the_record_listing_in_arrays_equals_the_one_path_at_a_time(tree, monkeypatch, max_bytes):
    first = list_files(tree, use_git=False, max_bytes=max_bytes)
    assert first.record is not None
    os.remove(tree / "src/app.py")  # vanished: a file changed, not a directory (the record still holds)
    (tree / "src/pkg/mod.py").unlink()
    os.mkdir(tree / "src/pkg/mod.py")  # not a file any more
    for d in ("src/pkg/mod.py", "src/pkg", "src"):
        os.utime(tree / d, ns=(OLD, OLD))
    fast = list_files(tree, use_git=False, max_bytes=max_bytes, previous=first.record)
    monkeypatch.setattr(native_ingest, "SUPPORTED", False)
    slow = list_files(tree, use_git=False, max_bytes=max_bytes, previous=first.record)
    assert fast.cached and slow.cached
    same(fast, slow)
    assert fast.skipped["vanished"] == 1 and fast.skipped["not-a-file"] == 1
