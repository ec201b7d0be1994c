"""Issue 27: every read of a file in the checkout goes through ``codelex.safefs``.

A FIFO never blocks a read (it is refused at once), and no path reaches a
file through a symbolic link, whether the path comes from an argument, the
index or a cache.
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from codelex import Project
from codelex.errors import UnsafePathError

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and symbolic links (POSIX)")


def _bounded(fn, seconds: float = 10.0):
    """``fn()`` on a daemon thread: its result, or a failure when it blocks (a FIFO opened for reading)."""
    out: dict = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # handed to the test's thread
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked (a FIFO was opened for reading)"
    if "error" in out:
        raise out["error"]
    return out["value"]


@pytest.fixture
def hostile(tmp_path: Path):
    """A root whose ``linkdir`` was a real directory (indexed, outlined) and is now a link to a tree outside."""
    root = tmp_path / "repo"
    (root / "linkdir").mkdir(parents=True)
    (root / "linkdir/secret.py").write_text("def secret():\n    return 'inside'\n")
    (root / "app.py").write_text("import linkdir.secret\n\ndef app():\n    return 1\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("def secret():\n    return 'OUTSIDE'\n")
    with Project(root) as project:
        project.open()
        assert project.wait_structure(60)
        assert "'inside'" in project.read_symbol("linkdir/secret.py", "secret").text
    shutil.rmtree(root / "linkdir")
    os.symlink(outside, root / "linkdir")
    return root


@pytest.mark.timeout(60)
def test_best_line_text_refuses_a_fifo_and_a_symlinked_directory(tmp_path):
    from codelex.render import best_line_text

    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src/ok.py").write_text("first\n  second  \n")
    os.mkfifo(root / "src/f3.py")  # an indexed file replaced by a FIFO just before a search
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.py").write_text("secret line\n")
    os.symlink(outside, root / "link")
    assert best_line_text(root, "src/ok.py", 2) == "second"
    assert _bounded(lambda: best_line_text(root, "src/f3.py", 1)) == ""
    assert best_line_text(root, "link/x.py", 1) == ""
    assert best_line_text(root, "../outside/x.py", 1) == ""


@pytest.mark.timeout(60)
def test_import_graph_reader_refuses_a_fifo_and_symlinks(tmp_path):
    from codelex.graph import read_from

    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/a.py").write_text("import os\n")
    os.mkfifo(root / "go.mod")  # a manifest the resolver reads
    os.mkfifo(root / "pkg/b.py")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "package.json").write_text('{"name": "secret"}')
    os.symlink(outside, root / "web")
    os.symlink(outside / "package.json", root / "package.json")
    read = read_from(str(root), 1 << 20)
    assert read("pkg/a.py") == "import os\n"
    assert _bounded(lambda: read("go.mod")) is None
    assert _bounded(lambda: read("pkg/b.py")) is None
    assert read("web/package.json") is None and read("package.json") is None
    assert read_from(str(root), 3)("pkg/a.py") is None  # past the cap


@pytest.mark.timeout(120)
def test_outline_and_read_symbol_never_read_through_a_symlinked_directory(hostile):
    """Regression: a structure cached for ``linkdir/secret.py`` let both read the file outside the root."""
    with Project(hostile) as project:
        for call in (lambda: project.outline("linkdir/secret.py"),
                     lambda: project.read_symbol("linkdir/secret.py", "secret"),
                     lambda: project.outline(hostile / "linkdir/secret.py")):
            with pytest.raises(UnsafePathError):
                call()
        assert project.read_symbol("app.py", "app").text.startswith("def app")


@pytest.mark.timeout(120)
def test_outline_and_read_symbol_refuse_a_fifo_at_once(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "app.py").write_text("def app():\n    return 1\n")
    os.mkfifo(root / "f3.py")
    with Project(root, build_structure=False) as project:
        for call in (lambda: project.outline("f3.py"), lambda: project.read_symbol("f3.py", "x")):
            with pytest.raises((ValueError, FileNotFoundError)):
                _bounded(call)
        with pytest.raises(FileNotFoundError):
            project.outline("nope.py")
        with pytest.raises(UnsafePathError):
            project.outline("../outside.py")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("path_handles", [True, False], ids=["O_PATH", "openat-walk"])
def test_nothing_outside_or_non_regular_is_ever_opened(tmp_path, monkeypatch, path_handles):
    """A FIFO behind a symlinked directory (or inside the root) is refused before it is opened: a writer
    waiting on it stays blocked, and the refusal says 'symbolic link', not whether the file exists."""
    import codelex.safefs as safefs

    if not path_handles:
        if not safefs._CAN_WALK:
            pytest.skip("no openat on this platform")
        monkeypatch.setattr(safefs, "_O_PATH", 0)
    elif not (safefs._O_PATH and os.path.isdir("/proc/self/fd")):
        pytest.skip("O_PATH and /proc are Linux's")
    root = tmp_path / "repo"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    os.mkfifo(outside / "pipe")
    os.mkfifo(root / "pipe")
    os.symlink(outside, root / "linkdir")
    woken = []
    writers = []

    def writer(fifo: Path) -> None:
        fd = os.open(fifo, os.O_WRONLY)  # blocks until a reader opens the FIFO
        woken.append(fifo)
        os.close(fd)

    for fifo in (outside / "pipe", root / "pipe"):
        t = threading.Thread(target=writer, args=(fifo,), daemon=True)
        t.start()
        writers.append(t)
    try:
        with pytest.raises(UnsafePathError):
            _bounded(lambda: safefs.open_file(root, "linkdir/pipe"))
        with pytest.raises(UnsafePathError):
            _bounded(lambda: safefs.open_file(root, "linkdir/absent.py"))  # the same answer as for the pipe
        with pytest.raises(safefs.NotRegularFileError):
            _bounded(lambda: safefs.open_file(root, "pipe"))
        for t in writers:
            t.join(0.3)
        assert woken == []  # neither FIFO was opened
    finally:
        for fifo in (outside / "pipe", root / "pipe"):  # release the writers
            fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
            os.close(fd)
        for t in writers:
            t.join(5)


@pytest.mark.timeout(120)
def test_search_reads_no_file_through_a_link_nor_a_fifo(tmp_path):
    """Issue 39: search reads files for the ranking (the names of a file the structure has not caught up with,
    the lines of candidate near-copies): an indexed file now behind a symlinked directory, or now a FIFO, is
    refused through the admission's safe read, never opened (a writer waiting on the FIFO stays blocked)."""
    root = tmp_path / "repo"
    (root / "linkdir").mkdir(parents=True)
    text = "def secret_value():\n    return 'inside'\n" + "".join(f"# note {i}\n" for i in range(30))
    (root / "linkdir/secret.py").write_text(text)
    (root / "copy.py").write_text(text)
    outside = tmp_path / "outside"
    outside.mkdir()
    woken = []

    def writer(fifo: Path) -> None:
        fd = os.open(fifo, os.O_WRONLY)  # blocks until a reader opens the FIFO
        woken.append(fifo)
        os.close(fd)

    with Project(root, import_graph=False) as project:
        project.open()
        assert project.wait_structure(60)
        shutil.rmtree(root / "linkdir")
        os.mkfifo(outside / "secret.py")
        os.symlink(outside, root / "linkdir")
        (root / "copy.py").unlink()
        os.mkfifo(root / "copy.py")
        writers = [threading.Thread(target=writer, args=(f,), daemon=True) for f in (outside / "secret.py",
                                                                                      root / "copy.py")]
        for t in writers:
            t.start()
        try:
            hits = _bounded(lambda: project.search("secret value", limit=10).results)
            assert {h.file for h in hits} == {"linkdir/secret.py", "copy.py"}  # (the index's, until refreshed)
            for t in writers:
                t.join(0.3)
            assert woken == []
        finally:
            for fifo in (outside / "secret.py", root / "copy.py"):
                fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
                os.close(fd)


def test_tightening_an_index_directory_never_follows_a_link_in_it(tmp_path):
    """Issue 39: an index directory's loosened modes are made owner-only on open; a link planted in it to a file
    elsewhere leaves that file's mode alone."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "app.py").write_text("def app():\n    return 1\n")
    elsewhere = tmp_path / "shared.txt"
    elsewhere.write_text("not codelex's")
    elsewhere.chmod(0o644)
    with Project(root, import_graph=False) as project:
        project.open()
    os.symlink(elsewhere, root / ".codelex" / "planted.clx")
    (root / ".codelex" / "index.clx").chmod(0o644)
    with Project(root, import_graph=False) as project:
        project.open()
    assert (root / ".codelex" / "index.clx").stat().st_mode & 0o077 == 0
    assert elsewhere.stat().st_mode & 0o777 == 0o644
