"""``codelex serve``: a per-user background server that keeps warm, watched indexes for one-shot commands.

A one-shot ``codelex search`` pays for starting an interpreter, importing
the native core and numpy, and opening and checking an index, before an
answer that takes microseconds.  The server pays those once: it keeps one
:class:`codelex.Project` per root, opened and followed by a file watcher,
and runs the commands clients send it.  The client side
(:func:`run_remote`) imports nothing but the standard library.

The protocol is one JSON line each way over a Unix socket: the request
carries the codelex version, the command line, the client's current
directory and whether its standard output is a terminal; the answer
carries the exit status and the command's standard output and error.

Security: the socket lives in a directory only its user may enter
(``$XDG_RUNTIME_DIR/codelex``, else ``<tmp>/codelex-<uid>``; refused when it
is owned by someone else or open to others), is itself owner-only, and the
server checks each peer's uid where the platform tells it (``SO_PEERCRED``).
Its name carries the version, so a client of another version never reaches
it.  The server exits after :data:`IDLE_TIMEOUT_S` without requests.

Whenever the server is absent, of another version or fails, the command
line works in-process as before (and starts a server for the next time,
unless ``CODELEX_NO_SERVER`` is set).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time

# (pathlib, threading, io and struct load with the server only: the client side stays minimal)

from codelex.defaults import VERSION

__all__ = ["IDLE_TIMEOUT_S", "Server", "run_remote", "server_enabled", "socket_path", "spawn_server"]

#: The server exits after this long without a request.
IDLE_TIMEOUT_S = 900.0
#: Environment variable that keeps the command line in-process (no client, no server start).
NO_SERVER_ENV = "CODELEX_NO_SERVER"
#: Commands the server runs for clients.
SERVED_COMMANDS = frozenset({"search"})
_MAX_REQUEST = 1 << 20
_CONNECT_TIMEOUT_S = 0.5


def server_enabled() -> bool:
    """Whether the command line may use (and start) a server: POSIX, and not disabled by the environment."""
    return hasattr(socket, "AF_UNIX") and os.name == "posix" and not os.environ.get(NO_SERVER_ENV)


def socket_dir() -> str | None:
    """The user's private directory for the socket (created 0700), or None when none is safe."""
    import stat

    runtime = os.environ.get("XDG_RUNTIME_DIR")
    uid = os.getuid()
    candidates = []
    if runtime and os.path.isabs(runtime):
        candidates.append(os.path.join(runtime, "codelex"))
    candidates.append(os.path.join(os.environ.get("TMPDIR") or "/tmp", f"codelex-{uid}"))
    for directory in candidates:
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            pass
        except OSError:
            continue
        try:
            st = os.lstat(directory)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_uid == uid and not st.st_mode & 0o077:
            return directory
    return None


def socket_path() -> str | None:
    """Where this version's server listens, or None when there is no safe place for it."""
    directory = socket_dir()
    return os.path.join(directory, f"server-{VERSION}.sock") if directory is not None else None


# --- client ---------------------------------------------------------------------------


def _recv_line(conn: socket.socket, limit: int = 1 << 30) -> bytes | None:
    chunks, size = [], 0
    while True:
        chunk = conn.recv(1 << 16)
        if not chunk:
            return None
        nl = chunk.find(b"\n")
        if nl >= 0:
            chunks.append(chunk[:nl])
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return None


def request(payload: dict, timeout: float | None = None) -> dict | None:
    """Send one request to this version's server; its answer, or None when there is no usable server."""
    path = socket_path()
    if path is None:
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(_CONNECT_TIMEOUT_S)
            conn.connect(path)
            conn.settimeout(timeout)
            conn.sendall(json.dumps(payload).encode("utf-8", "surrogateescape") + b"\n")
            line = _recv_line(conn)
    except (OSError, ValueError):
        return None
    if line is None:
        return None
    try:
        answer = json.loads(line)
    except ValueError:
        return None
    return answer if isinstance(answer, dict) and answer.get("version") == VERSION else None


def run_remote(argv: list[str]) -> int | None:
    """Run a command line on the server: its exit status (output already written), or None to run in-process."""
    try:
        cwd = os.getcwd()
    except OSError:
        return None
    payload = {"version": VERSION, "op": "run", "argv": argv, "cwd": cwd, "tty": sys.stdout.isatty(),
               "env": {k: os.environ[k] for k in ("NO_COLOR", "TERM") if k in os.environ}}
    answer = request(payload)
    if answer is None or answer.get("op") != "done":
        return None
    out, err = answer.get("stdout", ""), answer.get("stderr", "")
    if out:
        sys.stdout.write(out)
        sys.stdout.flush()
    if err:
        sys.stderr.write(err)
    code = answer.get("status")
    return code if isinstance(code, int) else 2


def spawn_server() -> None:
    """Start a server in the background (detached; its output goes nowhere) for the next command."""
    import subprocess

    from codelex.runtime import neutral_cwd, python_command

    try:  # isolated, from a neutral directory: the client's directory may be a checkout with a codelex/ of its own
        subprocess.Popen(python_command("codelex.cli:serve_main"), stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                         close_fds=True, cwd=neutral_cwd())
    except OSError:
        pass


# --- server ---------------------------------------------------------------------------


class _Pool:
    """One opened, watched project per (root, size cap): what the CLI's commands use in the server."""

    def __init__(self) -> None:
        import threading

        self.lock = threading.Lock()
        self.projects: dict[tuple, object] = {}

    def project(self, root, options: dict):
        from codelex.project import Project

        key = (root, tuple(sorted(options.items())))
        with self.lock:
            project = self.projects.get(key)
            fresh = project is None or project.status == "closed"
            if fresh:
                project = Project(root, watch=True, **options)
                self.projects[key] = project
        if fresh or project.status != "ready":
            project.open()  # load, check by stat, start watching: once
        elif not project.watching:  # the watcher could not start: check files by stat on every request
            project.refresh()
        return project

    def close(self) -> None:
        with self.lock:
            projects, self.projects = list(self.projects.values()), {}
        for project in projects:
            project.close()


class Server:
    """Listens on :func:`socket_path` until idle for ``idle_timeout`` seconds (see the module docstring)."""

    def __init__(self, runner, idle_timeout: float = IDLE_TIMEOUT_S) -> None:
        import threading

        self.runner = runner  # runner(argv, cwd=, tty=, env=, pool=) -> exit status (the CLI's run_served)
        self.idle_timeout = idle_timeout
        self.pool = _Pool()
        self.run_lock = threading.Lock()  # commands write to a per-request capture of stdout/stderr
        self.last_activity = time.monotonic()
        self.stopping = False
        self.path: str | None = None
        self.requests = 0

    def bind(self) -> socket.socket | None:
        """The listening socket, or None when another server already listens (or no safe place exists)."""
        path = socket_path()
        if path is None:
            return None
        if request({"version": VERSION, "op": "ping"}) is not None:
            return None  # one is running
        try:
            os.unlink(path)  # a dead server's socket
        except FileNotFoundError:
            pass
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(path)
        except OSError:
            sock.close()
            return None
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        sock.listen(16)
        self.path = path
        return sock

    def serve_forever(self) -> int:
        sock = self.bind()
        if sock is None:
            return 1
        sock.settimeout(1.0)
        try:
            while not self.stopping:
                try:
                    conn, _ = sock.accept()
                except socket.timeout:
                    if time.monotonic() - self.last_activity > self.idle_timeout:
                        break
                    continue
                except OSError:
                    break
                _thread(self._handle, conn)
        finally:
            sock.close()
            try:
                if self.path is not None and os.path.exists(self.path):
                    os.unlink(self.path)
            except OSError:
                pass
            self.pool.close()
        return 0

    def _peer_ok(self, conn: socket.socket) -> bool:
        import struct

        so_peercred = getattr(socket, "SO_PEERCRED", None)
        if so_peercred is None:
            return True  # the directory's permissions are the guard where the kernel does not say
        try:
            creds = conn.getsockopt(socket.SOL_SOCKET, so_peercred, struct.calcsize("3i"))
        except OSError:
            return False
        _, uid, _ = struct.unpack("3i", creds)
        return uid == os.getuid()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            self.last_activity = time.monotonic()
            if not self._peer_ok(conn):
                return
            try:
                conn.settimeout(30)
                line = _recv_line(conn, _MAX_REQUEST)
                payload = json.loads(line) if line is not None else None
            except (OSError, ValueError):
                return
            answer = self.answer(payload)
            try:
                conn.sendall(json.dumps(answer).encode("utf-8", "surrogateescape") + b"\n")
            except OSError:
                pass
            self.last_activity = time.monotonic()

    def answer(self, payload) -> dict:
        """The answer to one request (a dict with ``version`` and ``op``)."""
        base = {"version": VERSION}
        if not isinstance(payload, dict) or payload.get("version") != VERSION:
            return dict(base, op="refused", reason="another codelex version")
        op = payload.get("op")
        if op == "ping":
            with self.pool.lock:
                watching = {str(k[0]): p.watch_status["state"] for k, p in self.pool.projects.items()}
            return dict(base, op="pong", pid=os.getpid(), requests=self.requests, roots=sorted(watching),
                        watch=watching)
        if op == "stop":
            self.stopping = True
            return dict(base, op="stopping")
        if op != "run":
            return dict(base, op="refused", reason=f"unknown op {op!r}")
        argv, cwd, tty, env = payload.get("argv"), payload.get("cwd"), payload.get("tty"), payload.get("env") or {}
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv) or not isinstance(cwd, str) \
                or not isinstance(env, dict):
            return dict(base, op="refused", reason="malformed request")
        self.requests += 1
        with self.run_lock:
            status, out, err = self._run(argv, cwd, bool(tty), env)
        return dict(base, op="done", status=status, stdout=out, stderr=err)

    def _run(self, argv: list[str], cwd: str, tty: bool, env: dict) -> tuple[int, str, str]:
        import io

        out, err = io.StringIO(), io.StringIO()
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        try:
            status = self.runner(argv, cwd=cwd, tty=tty, env=env, pool=self.pool)
        except SystemExit as exc:  # argparse's usage errors
            status = exc.code if isinstance(exc.code, int) else 2
        except BaseException as exc:  # the server must outlive any command
            err.write(f"codelex: the server failed: {type(exc).__name__}: {exc}\n")
            status = 2
        finally:
            sys.stdout, sys.stderr = saved
        return status, out.getvalue(), err.getvalue()


def _thread(target, *args) -> None:
    import threading

    threading.Thread(target=target, args=args, daemon=True).start()


def serve(runner, idle_timeout: float = IDLE_TIMEOUT_S) -> int:
    """Run a server in this process until it is idle, stopped, or another one is found running.

    ``runner(argv, cwd=, tty=, env=, pool=)`` runs one client command line
    (the CLI's ``run_served``) and returns its exit status.
    """
    return Server(runner, idle_timeout).serve_forever()
