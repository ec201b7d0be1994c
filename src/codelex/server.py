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

The client side imports only the C modules beneath the standard library's
``socket`` and ``json`` (``_socket``, ``_json``): the interpreter's start
is then most of a served command's time, where ``socket`` and ``json``
would add about as much again.  The server side imports ``socket``,
``json`` and the rest as it starts.

Security: the socket lives in a directory only its user may enter
(``$XDG_RUNTIME_DIR/codelex``, else ``<tmp>/codelex-<uid>``; refused when it
is owned by someone else or open to others), is itself owner-only, and the
server checks each peer's uid where the platform tells it (``SO_PEERCRED``).
Its name (and its lock's) carries the version and a digest of the
installation (:func:`installation`: the interpreter, its ``sys.prefix`` and
where codelex and its compiled core lie), and every request and answer
carries both: a client in one virtualenv never reaches a server started from
another, whose packages (an embedding model, say) may differ.  The server
exits after :data:`IDLE_TIMEOUT_S` without requests; once told to stop it
takes no new command (a client that reaches it then works in-process).

Whenever the server is absent, of another version or fails, the command
line works in-process as before (and starts a server for the next time,
unless ``CODELEX_NO_SERVER`` is set).
"""

from __future__ import annotations

import os
import sys
import time

# (socket, json, pathlib, threading, io and struct load with the server only: the client side stays minimal)
try:
    import _socket  # (the C module beneath socket: its socket objects are the ones socket.socket extends)
except ImportError:  # pragma: no cover - every CPython and PyPy has it
    _socket = None  # type: ignore[assignment]
try:
    from _json import encode_basestring_ascii as _quote
    from _json import make_scanner as _make_scanner
except ImportError:  # pragma: no cover - an interpreter without json's C part: json itself, then
    _quote = _make_scanner = None  # type: ignore[assignment]

from codelex.defaults import VERSION

__all__ = ["IDLE_TIMEOUT_S", "Server", "freshness", "installation", "run_remote", "server_enabled", "socket_path",
           "spawn_server"]

#: The server exits after this long without a request.
IDLE_TIMEOUT_S = 900.0
#: Environment variable that keeps the command line in-process (no client, no server start).
NO_SERVER_ENV = "CODELEX_NO_SERVER"
#: Commands the server runs for clients: ``code`` and ``related`` keep their embedding model loaded there, and
#: embed missing vectors in its background; ``docs`` keeps each root's documentation index in memory;
#: ``outline``, ``show`` and ``status`` read its warm project (a second each in a fresh process).
SERVED_COMMANDS = frozenset({"search", "code", "related", "docs", "outline", "show", "status"})
_MAX_REQUEST = 1 << 20
#: The client's environment variables a request carries (the server's own environment is whoever started it).
_CLIENT_ENV = ("NO_COLOR", "TERM", "CODELEX_EMBEDDER")
_CONNECT_TIMEOUT_S = 0.5
#: While a command runs, the server sends a ``working`` line this often...
HEARTBEAT_S = 0.5
#: ...and a client that hears nothing for this long (a stopped or wedged server) gives up on it.
SILENCE_TIMEOUT_S = 10.0
#: The longest a client waits for one answer, heartbeats or not.
ANSWER_TIMEOUT_S = 900.0
#: A stopping server waits this long at most for the commands under way before it closes their projects.
DRAIN_S = 30.0


def server_enabled() -> bool:
    """Whether the command line may use (and start) a server: POSIX, and not disabled by the environment."""
    return _socket is not None and hasattr(_socket, "AF_UNIX") and os.name == "posix" \
        and not os.environ.get(NO_SERVER_ENV)


class _Decoding:
    """What ``_json.make_scanner`` reads of a decoder: ``json.loads``' defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float  # ("NaN", "Infinity", "-Infinity")


_scanner = None


def _dumps(value) -> str:
    """``json.dumps(value)`` of str, bool, int, None, list and dict values (ASCII text, as ``ensure_ascii``
    makes it), without importing :mod:`json`.

    Raises
    ------
    TypeError
        For any other value.
    """
    quote = _quote
    if quote is None:  # pragma: no cover
        import json

        return json.dumps(value)
    if isinstance(value, str):
        return quote(value)
    if value is None or value is True or value is False:
        return "null" if value is None else "true" if value else "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(map(_dumps, value)) + "]"
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("keys must be str")
        return "{" + ", ".join(f"{quote(k)}: {_dumps(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot encode {type(value).__name__}")


def _loads(data: bytes):
    """``json.loads(data)`` without importing :mod:`json` (but for an error's message).

    Raises
    ------
    ValueError
        When ``data`` is not one JSON value in UTF-8.
    """
    global _scanner
    if _scanner is None:
        if _make_scanner is not None:
            _scanner = _make_scanner(_Decoding())
        else:  # pragma: no cover
            import json

            _scanner = json.JSONDecoder().scan_once
    text = data.decode("utf-8", "surrogatepass").strip(" \t\n\r")
    try:
        value, end = _scanner(text, 0)
    except StopIteration:
        raise ValueError("not JSON") from None
    except RecursionError:
        raise ValueError("JSON nested too deep") from None
    if end != len(text):
        raise ValueError("extra data after the JSON value")
    return value


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


_installation: str | None = None


def installation() -> str:
    """A digest of the interpreter and installation this process runs codelex from: the interpreter (its real
    path: ``python``, ``python3`` and ``python3.11`` of one virtualenv are one), ``sys.prefix`` (a virtualenv's
    own), the version, where the ``codelex`` package lies and its compiled core (size and mtime, when it lies
    beside it).  Two virtualenvs, or a reinstall, give two servers."""
    global _installation
    if _installation is None:
        import zlib  # (a C module: the client side stays light)

        here = os.path.dirname(os.path.abspath(__file__))
        parts = [os.path.realpath(sys.executable) if sys.executable else "", sys.prefix,
                 sys.implementation.cache_tag or "", VERSION, here]
        try:
            from importlib.machinery import EXTENSION_SUFFIXES

            st = os.stat(os.path.join(here, "_native", "lexical" + EXTENSION_SUFFIXES[0]))
            parts.append(f"{st.st_size}:{st.st_mtime_ns}")
        except (OSError, IndexError, ImportError):
            pass  # (an editable install keeps its core elsewhere: the package's place stands for it)
        data = "\0".join(parts).encode("utf-8", "surrogateescape")
        # (eight hex digits: a Unix socket's whole path must fit in about 100 bytes)
        _installation = f"{zlib.crc32(data) ^ zlib.adler32(data):08x}"
    return _installation


def socket_path() -> str | None:
    """Where this installation's server listens, or None when there is no safe place for it."""
    directory = socket_dir()
    return os.path.join(directory, f"server-{VERSION}-{installation()}.sock") if directory is not None else None


def _lock_path(sock: str) -> str:
    """The lock a live server holds for as long as it runs (one per installation): its socket's name, ``.lock``."""
    return sock[: -len(".sock")] + ".lock"


def holder_pid() -> int | None:
    """The pid of the server that holds this installation's lock (alive, answering or not), else None."""
    import fcntl

    path = socket_path()
    if path is None:
        return None
    try:
        fd = os.open(_lock_path(path), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:  # held: read who holds it
            text = os.read(fd, 32).decode("ascii", "replace").strip()
            return int(text) if text.isdigit() else -1
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


class Unresponsive(OSError):
    """A server holds this installation's socket but did not answer in time (stopped, or wedged)."""


# --- client ---------------------------------------------------------------------------


class _Lines:
    """Lines read from a socket (whose timeout bounds each ``recv``)."""

    def __init__(self, conn, limit: int = 1 << 30) -> None:
        self.conn, self.limit, self.buffer = conn, limit, b""

    def next(self) -> bytes | None:
        """The next line without its newline; None at the end of the stream or past the size limit."""
        while True:
            nl = self.buffer.find(b"\n")
            if nl >= 0:
                line, self.buffer = self.buffer[:nl], self.buffer[nl + 1:]
                return line
            if len(self.buffer) > self.limit:
                return None
            chunk = self.conn.recv(1 << 16)
            if not chunk:
                return None
            self.buffer += chunk


def _recv_line(conn, limit: int = 1 << 30) -> bytes | None:
    return _Lines(conn, limit).next()


def request(payload: dict, timeout: float | None = None, on_progress=None) -> dict | None:
    """Send one request to this installation's server; its answer, or None when there is no usable server.

    Every wait is bounded: the connection by :data:`_CONNECT_TIMEOUT_S`, the
    answer by ``timeout`` (default :data:`ANSWER_TIMEOUT_S`, counted again
    from each heartbeat whose progress line moved: a long ``code --wait``
    that is making progress is not a wedged server) and by
    :data:`SILENCE_TIMEOUT_S` without a heartbeat.  ``on_progress(text)``
    receives each new progress line a heartbeat carries (a bar the command
    draws, ``\r``-led, for the client's stderr).

    Raises
    ------
    Unresponsive
        When a server accepted the request but fell silent or ran out of time.
    """
    path = socket_path()
    if path is None:
        return None
    payload = dict(payload, install=installation())
    allowed = ANSWER_TIMEOUT_S if timeout is None else timeout
    deadline = time.monotonic() + allowed
    shown = None
    try:
        conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    except (OSError, AttributeError):
        return None
    try:  # (a _socket.socket is no context manager)
        try:
            conn.settimeout(_CONNECT_TIMEOUT_S)
            conn.connect(path)
            conn.settimeout(SILENCE_TIMEOUT_S)
            conn.sendall(_dumps(payload).encode("utf-8", "surrogateescape") + b"\n")
        except (OSError, ValueError):
            return None  # no server listening (or it went away): in-process
        lines = _Lines(conn)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Unresponsive("the codelex server did not answer in time")
            try:
                conn.settimeout(min(SILENCE_TIMEOUT_S, left))
                line = lines.next()
            except TimeoutError:
                raise Unresponsive(f"the codelex server fell silent for {min(SILENCE_TIMEOUT_S, left):.0f} s") \
                    from None
            except OSError:
                return None
            if line is None:
                return None
            try:
                answer = _loads(line)
            except ValueError:
                return None
            if not isinstance(answer, dict) or answer.get("version") != VERSION \
                    or answer.get("install") != installation():
                return None
            if answer.get("op") != "working":
                return answer
            line = answer.get("progress")
            if isinstance(line, str) and line != shown:
                shown = line
                deadline = time.monotonic() + allowed
                if on_progress is not None:
                    on_progress(line)
    finally:
        conn.close()


def freshness(root) -> str:
    """Who keeps the root fresh: a running server's watcher, or stat checks at each command."""
    if server_enabled():
        from codelex.defaults import VERSION

        try:
            answer = request({"version": VERSION, "op": "ping"}, timeout=5)
        except Unresponsive:
            return f"checked by stat at each command (the codelex server, pid {holder_pid()}, does not answer)"
        if answer is not None and str(root) in answer.get("roots", []):
            state = answer.get("watch", {}).get(str(root))
            how = "watched by" if state == "watching" else "stat-checked by"
            return f"{how} the codelex server (pid {answer.get('pid')}); searches go through it"
        if answer is not None:
            return f"checked by stat at each command (the codelex server, pid {answer.get('pid')}, has not " \
                   f"opened this root yet)"
    return "checked by stat at each command (no codelex server running)"


def run_remote(argv: list[str]) -> int | None:
    """Run a command line on the server: its exit status (output already written), or None to run in-process."""
    try:
        cwd = os.getcwd()
    except OSError:
        return None
    err_tty = sys.stderr.isatty()
    payload = {"version": VERSION, "op": "run", "argv": argv, "cwd": cwd, "tty": sys.stdout.isatty(),
               "stderr_tty": err_tty, "env": {k: os.environ[k] for k in _CLIENT_ENV if k in os.environ}}
    drawn = []

    def draw(line: str) -> None:  # the command's progress, shown here as it would be in-process
        if err_tty:  # a bar, redrawn in place
            sys.stderr.write(line)
            sys.stderr.flush()
            drawn.append(True)
        elif line.endswith("\n") and not line.startswith("\r"):  # a plain line (a log's), once
            sys.stderr.write(line)
            sys.stderr.flush()

    try:
        answer = request(payload, on_progress=draw)
    except Unresponsive as exc:
        pid = holder_pid()
        who = f" (pid {pid})" if pid and pid > 0 else ""
        sys.stderr.write(f"codelex: {exc}{who}; working in-process (`codelex serve --stop` or kill it)\n")
        return None
    if drawn:
        sys.stderr.write("\r\x1b[2K")
    if answer is not None and answer.get("op") == "refused" and answer.get("reason") == "stopping":
        sys.stderr.write("codelex: the server is stopping; working in-process\n")
        return None
    if answer is None or answer.get("op") != "done":
        return None
    out, err = answer.get("stdout", ""), answer.get("stderr", "")
    if out:
        try:
            sys.stdout.write(out)
            sys.stdout.flush()
        except BrokenPipeError:  # `codelex search x | head -0`: the reader has gone, as with rg, quietly
            quiet_stdout()
            return 0
    if err:
        sys.stderr.write(err)
    code = answer.get("status")
    return code if isinstance(code, int) else 2


def quiet_stdout() -> None:
    """Point standard output at the null device (its reader has gone): nothing written later, the interpreter's
    last flush included, can fail on the closed pipe."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, sys.stdout.fileno())
        finally:
            os.close(null)
    except (OSError, ValueError, AttributeError):
        pass


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


class ProgressLine:
    """A stream a served command draws its progress on: it keeps the last line, which the heartbeats carry
    to the client (a bar when its stderr is a terminal, else a plain line now and then: each shown once)."""

    def __init__(self) -> None:
        self.line: str | None = None

    def write(self, text: str) -> int:
        self.line = text[-4096:]  # (a bar is one short line; a heartbeat stays small whatever is written)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


class Server:
    """Listens on :func:`socket_path` until idle for ``idle_timeout`` seconds (see the module docstring)."""

    def __init__(self, runner, idle_timeout: float = IDLE_TIMEOUT_S) -> None:
        import threading

        # runner(argv, cwd=, tty=, env=, pool=, stderr_tty=, progress_stream=) -> exit status (the CLI's run_served)
        from codelex.project.pool import ProjectPool

        self.runner = runner
        self.idle_timeout = idle_timeout
        self.pool = ProjectPool()  # one opened, watched project per (root, size cap), as MCP's
        self.run_lock = threading.Lock()  # commands write to a per-request capture of stdout/stderr
        self.last_activity = time.monotonic()
        self.stopping = False
        self.path: str | None = None
        self.bound: tuple[int, int] | None = None  # (st_dev, st_ino) of the socket this server created
        self.lock_fd: int | None = None
        self.requests = 0
        self.active = 0  # connections being handled (a stopping server lets them finish)
        self.counting = threading.Lock()
        self.refusal: str | None = None  # why bind() found no place to listen

    def _take_lock(self, path: str) -> bool:
        """Hold this version's server lock for the life of the process; False when another server holds it."""
        import fcntl

        try:
            fd = os.open(_lock_path(path), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self.lock_fd = fd
        return True

    def bind(self):
        """The listening socket, or None when another server runs (answering or not) or no safe place exists.

        One lock decides which of several servers starting at once runs; only
        its holder removes a socket left by a dead server, and a server only
        ever removes the socket it created.
        """
        path = socket_path()
        if path is None:
            self.refusal = "no private directory for its socket ($XDG_RUNTIME_DIR/codelex or <tmp>/codelex-<uid>)"
            return None
        if not self._take_lock(path):
            pid = holder_pid()
            who = f" (pid {pid})" if pid and pid > 0 else ""
            self.refusal = f"a server{who} already serves this installation ({sys.executable})"
            return None
        try:
            os.unlink(path)  # a dead server's socket (whoever held the lock before us is gone)
        except FileNotFoundError:
            pass
        except OSError as exc:
            self.refusal = f"cannot remove a dead server's socket {path}: {exc.strerror or exc}"
            return None
        import socket

        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(path)
        except OSError as exc:
            sock.close()
            self.refusal = f"cannot listen on {path}: {exc.strerror or exc}"
            return None
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        st = os.lstat(path)
        self.bound = (st.st_dev, st.st_ino)
        sock.listen(16)
        self.path = path
        return sock

    def stop(self) -> None:
        """Take no new command: the socket goes at once (a client then works in-process); the commands under
        way finish (within :data:`DRAIN_S`) before the projects close."""
        self.stopping = True
        self._unlink_own_socket()

    def _unlink_own_socket(self) -> None:
        if self.path is None or self.bound is None:
            return
        try:
            st = os.lstat(self.path)
            if (st.st_dev, st.st_ino) == self.bound:
                os.unlink(self.path)
        except OSError:
            pass

    def serve_forever(self) -> int:
        import socket

        sock = self.bind()
        if sock is None:
            sys.stderr.write(f"codelex: not serving: {self.refusal}\n")
            return 1
        _log_to_own_stderr()
        sock.settimeout(1.0)
        try:
            while not self.stopping:
                try:
                    conn, _ = sock.accept()
                except socket.timeout:
                    if time.monotonic() - self.last_activity > self.idle_timeout and not self.active:
                        break
                    continue
                except OSError:
                    break
                with self.counting:
                    self.active += 1
                _thread(self._handle, conn)
        finally:
            self.stopping = True
            sock.close()
            self._unlink_own_socket()
            deadline = time.monotonic() + DRAIN_S
            while self.active and time.monotonic() < deadline:  # commands under way finish before the projects close
                time.sleep(0.02)
            self.pool.close()
            if self.lock_fd is not None:
                os.close(self.lock_fd)  # (releases the lock: the next server may start)
                self.lock_fd = None
        return 0

    def _peer_ok(self, conn) -> bool:
        import socket
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

    def _handle(self, conn) -> None:
        try:
            self._handle_one(conn)
        finally:
            with self.counting:
                self.active -= 1

    def _handle_one(self, conn) -> None:
        import json

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
            answer = self._answer_with_heartbeats(conn, payload)
            try:
                conn.sendall(json.dumps(answer).encode("utf-8", "surrogateescape") + b"\n")
            except OSError:
                pass
            self.last_activity = time.monotonic()

    def _answer_with_heartbeats(self, conn, payload) -> dict:
        """:meth:`answer`, computed in this thread while another sends the client a ``working`` line every
        :data:`HEARTBEAT_S` (so it can tell a long build from a server that stopped); none is sent after this
        returns, so the answer is the last line."""
        import json
        import threading

        progress = ProgressLine()
        sending = threading.Lock()
        finished = threading.Event()
        done = []  # (under ``sending``: once it holds True, no heartbeat goes out)

        def heartbeats() -> None:
            while not finished.wait(HEARTBEAT_S):
                beat = {"version": VERSION, "install": installation(), "op": "working"}
                if progress.line is not None:
                    beat["progress"] = progress.line
                with sending:
                    if done:
                        return
                    try:
                        conn.sendall(json.dumps(beat).encode("utf-8", "surrogateescape") + b"\n")
                    except OSError:
                        pass  # the client went away; the command still finishes (its effects, e.g. a build, are kept)
                self.last_activity = time.monotonic()

        _thread(heartbeats)
        try:
            return self.answer(payload, progress)
        except Exception:  # (a command's own failures are answered by _run: this is the server's)
            return {"version": VERSION, "install": installation(), "op": "done", "status": 2, "stdout": "",
                    "stderr": "codelex: the server failed to answer\n"}
        finally:
            with sending:
                done.append(True)
            finished.set()

    def answer(self, payload, progress: ProgressLine | None = None) -> dict:
        """The answer to one request (a dict with ``version`` and ``op``); a command's progress bar goes to
        ``progress``, whose last line each heartbeat carries."""
        base = {"version": VERSION, "install": installation()}
        if not isinstance(payload, dict) or payload.get("version") != VERSION:
            return dict(base, op="refused", reason="another codelex version")
        if payload.get("install") != installation():
            return dict(base, op="refused", reason="another installation")
        op = payload.get("op")
        if op == "ping":
            watching = self.pool.watch_states()
            return dict(base, op="pong", pid=os.getpid(), requests=self.requests, roots=sorted(watching),
                        watch=watching, python=sys.executable, prefix=sys.prefix, stopping=self.stopping)
        if op == "stop":
            self.stop()
            return dict(base, op="stopping")
        if self.stopping:  # (accepted before the socket went: the client works in-process)
            return dict(base, op="refused", reason="stopping")
        if op != "run":
            return dict(base, op="refused", reason=f"unknown op {op!r}")
        argv, cwd, tty, env = payload.get("argv"), payload.get("cwd"), payload.get("tty"), payload.get("env") or {}
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv) or not isinstance(cwd, str) \
                or not isinstance(env, dict):
            return dict(base, op="refused", reason="malformed request")
        self.requests += 1
        with self.run_lock:
            status, out, err = self._run(argv, cwd, bool(tty), env, payload.get("stderr_tty") is True,
                                         progress or ProgressLine())
        return dict(base, op="done", status=status, stdout=out, stderr=err)

    def _run(self, argv: list[str], cwd: str, tty: bool, env: dict, stderr_tty: bool = False,
             progress: ProgressLine | None = None) -> tuple[int, str, str]:
        import io

        out, err = io.StringIO(), io.StringIO()
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        try:
            status = self.runner(argv, cwd=cwd, tty=tty, env=env, pool=self.pool, stderr_tty=stderr_tty,
                                 progress_stream=progress or ProgressLine())
        except SystemExit as exc:  # argparse's usage errors
            status = exc.code if isinstance(exc.code, int) else 2
        except BaseException as exc:  # the server must outlive any command
            err.write(f"codelex: the server failed: {type(exc).__name__}: {exc}\n")
            status = 2
        finally:
            sys.stdout, sys.stderr = saved
        return status, out.getvalue(), err.getvalue()


def _log_to_own_stderr() -> None:
    """Send codelex's log records to this process's own standard error, whatever ``sys.stderr`` is then.

    A request's output is captured by swapping ``sys.stderr`` while it runs; without a handler of its
    own, a warning logged by a background thread (a watcher, a build) meanwhile would land in that
    client's answer.
    """
    import logging

    logger = logging.getLogger("codelex")
    if not any(getattr(h, "codelex_server", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.__stderr__ if sys.__stderr__ is not None else open(os.devnull, "w"))
        handler.setLevel(logging.WARNING)
        handler.codelex_server = True  # type: ignore[attr-defined]  (our mark on a logging handler)
        logger.addHandler(handler)
        logger.propagate = False


def _thread(target, *args) -> None:
    """Run ``target(*args)`` on a new (daemon) thread without waiting for it to start.

    ``threading.Thread.start`` waits until the new thread runs: a wakeup of an
    idle processor, which costs milliseconds on a virtual machine, twice a
    request before this (a served command's whole work is about one).
    """
    import _thread as threads

    threads.start_new_thread(target, args)


def serve(runner, idle_timeout: float = IDLE_TIMEOUT_S) -> int:
    """Run a server in this process until it is idle, stopped, or another one is found running.

    ``runner(argv, cwd=, tty=, env=, pool=)`` runs one client command line
    (the CLI's ``run_served``) and returns its exit status.
    """
    return Server(runner, idle_timeout).serve_forever()
