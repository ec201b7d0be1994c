"""``codelex serve``: the one-shot command line answered by a warm, watched server."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.surfaces.test_cli import _command

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX") or os.name != "posix", reason="Unix sockets")


def _env(runtime: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "CODELEX_NO_SERVER"}
    env.update(XDG_RUNTIME_DIR=str(runtime), **extra)
    return env


def run(*args, env, cwd=None, timeout=120):
    return subprocess.run([*_command(), *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=timeout)


@pytest.fixture
def served(tmp_path: Path):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src/auth.py").write_text("def authenticate_user(name):\n    return lookup(name)\n")
    (root / "src/db.py").write_text("def connect_database():\n    pass\n")
    env = _env(runtime)
    proc = subprocess.Popen([*_command(), "serve", "--idle-timeout", "60"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while run("serve", "--status", env=env).returncode != 0:
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "the server never came up"
        time.sleep(0.1)
    yield root, env, runtime
    run("serve", "--stop", env=env)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_served_search_matches_in_process(served):
    root, env, _ = served
    local_env = dict(env, CODELEX_NO_SERVER="1")
    for args in (("authenticate", "--json"), ("authenticate", "-l"), ("connect database", "--vimgrep"),
                 ("authenticate", "--color", "never", "-q"), ("zzzqqq", "-l")):
        remote = run("search", *args, "--root", root, env=env)
        local = run("search", *args, "--root", root, env=local_env)
        assert remote.returncode == local.returncode, (args, remote.stderr, local.stderr)
        if "--json" in args:  # the same answer; only the index's timestamp may differ
            remote_doc, local_doc = json.loads(remote.stdout), json.loads(local.stdout)
            assert remote_doc["results"] == local_doc["results"] and remote_doc["query"] == local_doc["query"]
        else:
            assert remote.stdout == local.stdout, args
    status = json.loads(run("serve", "--status", env=env).stdout)
    assert status["requests"] >= 5 and str(root.resolve()) in status["roots"]


def test_served_search_sees_edits_and_relative_paths(served):
    root, env, _ = served
    assert "no codelex server running" in run("status", "--root", root,
                                               env=dict(env, CODELEX_NO_SERVER="1")).stdout
    assert "has not opened this root" in run("status", "--root", root, env=env).stdout
    assert run("search", "authenticate", "-l", cwd=root / "src", env=env).stdout.split() == ["auth.py"]
    # (no index nor git above src/: src/ itself is the project discovered there)
    assert "watched by the codelex server" in run("status", "--root", root / "src", env=env).stdout
    (root / "src/new.py").write_text("def quetzalcoatl():\n    pass\n")
    deadline = time.monotonic() + 10
    while run("search", "quetzalcoatl", "-l", cwd=root / "src", env=env).stdout.split() != ["new.py"]:
        assert time.monotonic() < deadline, "the served index never saw the new file"
        time.sleep(0.05)


def test_errors_come_back_as_one_line(served):
    root, env, _ = served
    r = run("search", "lang:klingon x", "--root", root, env=env)
    assert r.returncode == 2 and "Unknown lang" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = run("search", "x", "--root", root / "missing", env=env)
    assert r.returncode == 2 and "not a directory" in r.stderr


@pytest.mark.timeout(240)
def test_served_search_follows_configuration_changes(served, tmp_path):
    """Regression (issue 27): the server kept the settings it first read, and a FIFO hung every root."""
    root, env, _ = served

    def served_files():
        r = run("search", "authenticate connect", "-l", "--root", root, env=env, timeout=60)
        return r.returncode, sorted(r.stdout.split()), r.stderr.strip().splitlines()

    assert served_files()[1] == ["src/auth.py", "src/db.py"]
    (root / ".codelexignore").write_text("src/db.py\n")
    assert served_files()[1] == ["src/auth.py"]
    (root / "pyproject.toml").write_text('[tool.codelex]\nignore = ["[z-a]"]\n')
    status, _, err = served_files()
    assert status == 2 and err == [f"codelex: {root / 'pyproject.toml'}: ignore: bad pattern '[z-a]': "
                                   "bad character range z-a"]
    (root / "pyproject.toml").write_text('[tool.codelex]\ninclude = ["src/db.py"]\n')
    (root / ".codelexignore").unlink()
    assert served_files()[1] == ["src/db.py"]
    (root / "pyproject.toml").unlink()
    os.mkfifo(root / ".codelex.toml")
    status, _, err = served_files()
    assert status == 2 and err == [f"codelex: {root / '.codelex.toml'}: not a regular file"]
    other = tmp_path / "other"
    other.mkdir()
    (other / "main.py").write_text("def authenticate_other():\n    pass\n")
    r = run("search", "authenticate", "-l", "--root", other, env=env, timeout=60)
    assert r.stdout.split() == ["main.py"], r.stderr  # the same server goes on serving other roots
    (root / ".codelex.toml").unlink()
    assert served_files()[1] == ["src/auth.py", "src/db.py"]


def test_socket_is_private(served):
    _, env, runtime = served
    directory = runtime / "codelex"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    sockets = list(directory.glob("server-*.sock"))
    assert len(sockets) == 1 and stat.S_IMODE(sockets[0].stat().st_mode) == 0o600


def test_unsafe_socket_directories_are_never_used(tmp_path, monkeypatch):
    from codelex import server

    runtime, fallback = tmp_path / "run", tmp_path / "tmp"
    (runtime / "codelex").mkdir(parents=True)
    fallback.mkdir()
    os.chmod(runtime / "codelex", 0o755)  # readable by others: not private
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("TMPDIR", str(fallback))
    assert server.socket_dir() == str(fallback / f"codelex-{os.getuid()}")
    os.chmod(fallback / f"codelex-{os.getuid()}", 0o770)
    assert server.socket_dir() is None and server.socket_path() is None
    assert server.run_remote(["search", "x"]) is None  # the command line then works in-process


def test_client_of_another_version_falls_back(served, monkeypatch):
    root, env, runtime = served
    from codelex import server

    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert server.request({"version": "0.0.0-other", "op": "ping"})["op"] == "refused"
    monkeypatch.setattr(server, "VERSION", "0.0.0-other")
    assert os.path.basename(server.socket_path()) == f"server-0.0.0-other-{server.installation()}.sock"
    assert server.run_remote(["search", "x", "--root", str(root)]) is None  # no server of that version


@pytest.mark.timeout(180)
def test_a_stopped_server_is_never_waited_on(served):
    import signal

    root, env, runtime = served
    pid = json.loads(run("serve", "--status", env=env).stdout)["pid"]
    os.kill(pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        r = run("search", "authenticate", "-l", "--root", root, env=env, timeout=90)
        assert r.returncode == 0 and r.stdout.split() == ["src/auth.py"], r.stderr
        warning = [line for line in r.stderr.splitlines() if "server" in line]
        assert len(warning) == 1 and f"pid {pid}" in warning[0] and "in-process" in warning[0], r.stderr
        assert time.monotonic() - started < 60
        status = run("serve", "--status", env=env, timeout=60)
        assert status.returncode == 2 and "does not answer" in status.stderr and str(pid) in status.stderr
        assert "no server is running" not in status.stderr
    finally:
        os.kill(pid, signal.SIGCONT)
    assert run("search", "authenticate", "-l", "--root", root, env=env).stderr == ""


@pytest.mark.timeout(120)
def test_racing_servers_leave_one_live_socket(tmp_path):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = _env(runtime)
    procs = [subprocess.Popen([*_command(), "serve", "--idle-timeout", "30"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for _ in range(4)]
    try:
        losers = []
        deadline = time.monotonic() + 60
        while len(losers) < 3:
            losers = [p for p in procs if p.poll() is not None]
            assert time.monotonic() < deadline, "more than one server kept running"
            time.sleep(0.1)
        time.sleep(0.5)
        (winner,) = [p for p in procs if p.poll() is None]
        assert all(p.returncode == 1 for p in losers)
        status = run("serve", "--status", env=env)
        assert status.returncode == 0 and json.loads(status.stdout)["pid"] == winner.pid
        assert len(list((runtime / "codelex").glob("server-*.sock"))) == 1
    finally:
        run("serve", "--stop", env=env)
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()


def test_a_server_starting_in_the_race_window_never_unlinks_the_live_socket(tmp_path, monkeypatch):
    from codelex import server

    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setattr(server, "request", lambda *a, **k: None)  # both saw no server answering: the race
    first, second = server.Server(lambda *a, **k: 0), server.Server(lambda *a, **k: 0)
    live = first.bind()
    assert live is not None
    inode = os.lstat(server.socket_path()).st_ino
    try:
        assert second.bind() is None
        assert os.lstat(server.socket_path()).st_ino == inode  # still the live server's socket
        assert server.holder_pid() == os.getpid()
        second._unlink_own_socket()
        assert os.path.exists(server.socket_path())
    finally:
        live.close()
        first._unlink_own_socket()
        os.close(first.lock_fd)
    assert server.holder_pid() is None and not os.path.exists(server.socket_path())


@pytest.mark.timeout(120)
def test_the_server_never_waits_for_a_save(tmp_path, monkeypatch):
    """Regression (review finding 8): a served command opened (or refreshed) its project synchronously, save
    included, under the server's run lock: a held `.codelex/index.lock` stalled every root's commands for the
    lock's timeout.  Builds now run on the project's thread and a command waits only for their publication."""
    import threading

    from codelex import WordIndex
    from codelex.project.pool import ProjectPool

    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src/auth.py").write_text("def authenticate_user(name):\n    return lookup(name)\n")
    release, entered = threading.Event(), threading.Event()
    real_save = WordIndex.save

    def held_save(self, directory, *args, **kwargs):  # as a save that waits on another writer's lock
        entered.set()
        release.wait(90)
        return real_save(self, directory, *args, **kwargs)

    monkeypatch.setattr(WordIndex, "save", held_save)
    pool = ProjectPool()  # the server's pool
    try:
        started = time.monotonic()
        project = pool.project(root, {})
        assert project.status == "ready" and entered.wait(30)
        assert [h.file for h in project.search("authenticate").results] == ["src/auth.py"]
        (root / "src/quetzal.py").write_text("def quetzalcoatl():\n    pass\n")
        deadline = time.monotonic() + 20
        while not pool.project(root, {}).search("quetzalcoatl").results:
            assert time.monotonic() < deadline, "the edit never reached the served index"
            time.sleep(0.05)
        assert time.monotonic() - started < 30  # (a save waited for would have taken 90 s)
        assert not release.is_set()
    finally:
        release.set()
        pool.close()


@pytest.mark.timeout(180)
def test_served_code_keeps_the_model_and_embeds_in_the_background(served, tmp_path, make_static_model):
    root, env, _ = served
    model = tmp_path / "tiny"
    make_static_model().save_pretrained(str(model))
    args = ("code", "authenticate user", "--root", root, "--embedder", f"model2vec:{model}", "--json")
    first = run(*args, env=env)
    assert first.returncode == 0, first.stderr
    doc = json.loads(first.stdout)
    # Answered at once, lexically, while the server loads the model and embeds the chunks in its background.
    assert doc["results"][0]["path"] == "src/auth.py" and doc["mode"] in ("lexical", "hybrid")
    deadline = time.monotonic() + 60
    while doc["mode"] != "hybrid":
        assert time.monotonic() < deadline, f"the server never embedded the chunks: {doc['hint']}"
        time.sleep(0.1)
        doc = json.loads(run(*args, env=env).stdout)
    assert doc["embedded"] == doc["chunks"] > 0
    # The server saved the vectors: a one-shot command finds every chunk embedded, and answers the same.
    local = run(*args, env=dict(env, CODELEX_NO_SERVER="1"))
    assert local.returncode == 0, local.stderr
    assert json.loads(local.stdout)["results"] == doc["results"]
    # related and the human output go through the server too (a relative model folder is the client's).
    r = run("related", "src/auth.py:1", "--embedder", "model2vec:tiny", "--root", root, "--json", env=env,
            cwd=tmp_path)
    assert r.returncode in (0, 1) and json.loads(r.stdout)["available"] is True, r.stderr
    r = run("code", "authenticate user", "--embedder", f"model2vec:{model}", "--color", "never", cwd=root, env=env)
    assert r.returncode == 0 and r.stdout.startswith("  1. src/auth.py:1-2") and "; hybrid" in r.stderr, r.stderr
    status = json.loads(run("serve", "--status", env=env).stdout)
    assert status["requests"] >= 4 and str(root.resolve()) in status["roots"]


def test_heartbeats_carry_a_served_commands_progress_bar():
    """`code --wait` in the server: the bar it draws reaches the client with the heartbeats."""
    from codelex import server
    from codelex.defaults import VERSION

    def runner(argv, *, progress_stream, stderr_tty, **_):
        assert stderr_tty is True
        progress_stream.write("\r\x1b[2Kembedding [###...] 10/30 chunks, 5/s, 4 s left")
        time.sleep(3 * server.HEARTBEAT_S)
        return 0

    ours, theirs = socket.socketpair()
    with ours, theirs:
        answer = server.Server(runner)._answer_with_heartbeats(ours, {
            "version": VERSION, "install": server.installation(), "op": "run", "argv": ["code", "x", "--wait"],
            "cwd": "/", "tty": False, "stderr_tty": True})
        ours.shutdown(socket.SHUT_WR)
        beats = [json.loads(line) for line in theirs.makefile().read().splitlines()]
    assert answer["op"] == "done" and answer["status"] == 0
    assert beats and all(b["op"] == "working" for b in beats)
    assert beats[-1]["progress"].endswith("10/30 chunks, 5/s, 4 s left")


def _second_installation(tmp_path: Path) -> str:
    """Another interpreter installation of this codelex: a virtualenv (its own ``sys.prefix`` and executable)
    that imports codelex from this one's site directories."""
    import site

    env_dir = tmp_path / "other-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=120)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    ours = [p for p in site.getsitepackages() + [os.path.dirname(os.path.dirname(os.path.abspath(
        __import__("codelex").__file__)))] if os.path.isdir(p)]
    Path(purelib, "codelex_tests_parent.pth").write_text(
        "import site; " + "; ".join(f"site.addsitedir({p!r})" for p in ours) + "\n")
    return str(python)


@pytest.mark.timeout(240)
def test_two_installations_get_two_servers(tmp_path):
    """Issue 39: the socket was keyed by the version only, so one virtualenv's server answered another's commands
    with its own packages.  Each installation now has its own server, and says which interpreter it serves."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = _env(runtime)
    other = _second_installation(tmp_path)
    ours_cmd, other_cmd = [sys.executable, "-m", "codelex"], [other, "-m", "codelex"]
    procs = [subprocess.Popen([*cmd, "serve", "--idle-timeout", "60"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE) for cmd in (ours_cmd, other_cmd)]
    try:
        statuses = []
        for cmd, proc in zip((ours_cmd, other_cmd), procs):
            deadline = time.monotonic() + 60
            while True:
                r = subprocess.run([*cmd, "serve", "--status"], capture_output=True, text=True, env=env, timeout=60)
                if r.returncode == 0:
                    break
                assert proc.poll() is None, proc.stderr.read()
                assert time.monotonic() < deadline, "a server never came up"
                time.sleep(0.1)
            statuses.append(json.loads(r.stdout))
        assert statuses[0]["pid"] == procs[0].pid and statuses[1]["pid"] == procs[1].pid
        assert statuses[0]["python"] == sys.executable and statuses[1]["python"] == other
        assert statuses[0]["install"] != statuses[1]["install"]
        assert len(list((runtime / "codelex").glob("server-*.sock"))) == 2
    finally:
        for cmd in (ours_cmd, other_cmd):
            subprocess.run([*cmd, "serve", "--stop"], capture_output=True, env=env, timeout=60)
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()


def test_a_request_of_another_installation_is_refused():
    from codelex import server
    from codelex.defaults import VERSION

    answer = server.Server(lambda *a, **k: 0).answer({"version": VERSION, "install": "0" * 16, "op": "ping"})
    assert answer["op"] == "refused" and answer["reason"] == "another installation"


def test_a_stopping_server_takes_no_new_command(tmp_path, monkeypatch):
    """Issue 39: a server told to stop accepted one more command and answered "indexing <root> closed: None"."""
    from codelex import server
    from codelex.defaults import VERSION

    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    ran = []
    srv = server.Server(lambda *a, **k: ran.append(a) or 0)
    sock = srv.bind()
    try:
        base = {"version": VERSION, "install": server.installation()}
        assert srv.answer(dict(base, op="stop"))["op"] == "stopping"
        assert not os.path.exists(server.socket_path())  # new clients find no server: they work in-process
        late = srv.answer(dict(base, op="run", argv=["search", "x"], cwd="/", tty=False))
        assert late == dict(base, op="refused", reason="stopping") and not ran
    finally:
        sock.close()
        os.close(srv.lock_fd)


@pytest.mark.timeout(300)
def test_search_stop_index_search_never_meets_a_closing_server(served):
    root, env, _ = served
    for _ in range(6):
        first = run("search", "authenticate", "-l", "--root", root, env=env)
        run("serve", "--stop", env=env)
        index = run("index", "--root", root, env=env)
        second = run("search", "authenticate", "-l", "--root", root, env=env)
        for r in (first, index, second):
            assert r.returncode == 0 and "closed" not in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert first.stdout.split() == second.stdout.split() == ["src/auth.py"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("where", ["served", "in-process"])
def test_a_closed_pipe_ends_quietly(served, where):
    """`codelex search … | head -0`: exit 0 and nothing on stderr, served or not (as `rg | head`)."""
    root, env, _ = served
    for i in range(400):  # an answer well past a pipe's buffer, so the write meets the closed pipe
        (root / "src" / f"auth_{i:03d}.py").write_text(f"def authenticate_{i}(name):  # {'x' * 300}\n")
    if where == "in-process":
        env = dict(env, CODELEX_NO_SERVER="1")
    script = f"{' '.join(map(repr, _command()))} search authenticate --root {str(root)!r} -n 500 --vimgrep " \
             '| head -c 0; echo "status=${PIPESTATUS[0]}"'
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert "status=0" in r.stdout and "Traceback" not in r.stderr and "BrokenPipe" not in r.stderr, r.stderr
