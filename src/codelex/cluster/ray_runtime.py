"""The one place codelex reaches Ray: imported only by the cluster commands, so ``import codelex`` stays light."""

from __future__ import annotations

import contextlib
import os

from codelex.errors import ClusterError

__all__ = ["NAMESPACE", "connect", "describe_failure", "ray_module"]

#: The Ray namespace of codelex's named actors (a served store's coordinator).
NAMESPACE = "codelex"
#: How long reaching a named cluster's head may take: Ray itself retries an unreachable one for minutes.
CONNECT_TIMEOUT_S = 10.0
#: How long joining a cluster (``ray.init``) may take in all, a private local Ray's start included.
INIT_TIMEOUT_S = 60.0


def _probe(address: str) -> None:
    """ClusterError unless ``host:port`` (or ``ray://host:port``) accepts a TCP connection within
    :data:`CONNECT_TIMEOUT_S` (``auto`` and ``local`` name no host: Ray answers those at once)."""
    import socket

    rest = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = rest.rpartition(":")
    if not sep or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise ClusterError(f"cannot reach a Ray cluster at {address!r} ({exc.strerror or exc}); start one with "
                           "`ray start --head` or pass --address") from None


def ray_module():
    """``ray``, or ClusterError naming the extra to install."""
    try:
        import ray
    except ImportError as exc:
        raise ClusterError(f"cluster commands need Ray: pip install 'codelex[ray]' ({exc})") from None
    return ray


#: A ``ray.init`` abandoned at its bound may still be running: a second one is refused meanwhile.
_pending_init = None


def _failure_line(exc: BaseException) -> str:
    """What went wrong joining a cluster, in one line, naming Ray's own error (``InvalidAuthToken``...)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300]}" if text else type(exc).__name__


def _init_within(ray, timeout: float, kwargs: dict) -> None:
    """``ray.init(**kwargs)``, or ClusterError after ``timeout`` seconds: Ray's own connect has no bound (a
    cluster being stopped keeps it waiting for minutes).  It runs on a daemon thread, abandoned on timeout."""
    import threading

    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            ray.init(**kwargs)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, whatever it is
            outcome.append(exc)

    global _pending_init
    if _pending_init is not None and _pending_init.is_alive():
        raise ClusterError("an earlier attempt to join a Ray cluster is still under way in this process")
    thread = threading.Thread(target=run, name="codelex-ray-init", daemon=True)
    thread.start()
    thread.join(timeout)
    _pending_init = thread
    where = kwargs.get("address") or "a private local Ray"
    if not outcome:
        raise ClusterError(f"Ray did not connect to {where!r} within {timeout:.0f} s (is the cluster stopping "
                           "or overloaded?)")
    exc = outcome[0]
    if exc is None:
        return
    line = _failure_line(exc)
    lowered = line.lower()
    if "auth" in lowered or "token" in lowered:
        raise ClusterError(f"the Ray cluster at {where!r} refused this client's authentication ({line})") from None
    if "version" in lowered and ("mismatch" in lowered or "match" in lowered):
        raise ClusterError(f"the Ray cluster at {where!r} runs another Ray or Python version ({line})") from None
    hint = _token_hint() if isinstance(exc, ConnectionError) and where not in ("auto", "local") else ""
    raise ClusterError(f"cannot connect to the Ray cluster at {where!r} ({line}){hint}") from None


def connect(address: str | None = None, *, start_local: bool = True, num_cpus: int | None = None,
            timeout: float = INIT_TIMEOUT_S):
    """Join a Ray cluster (once per process); returns the ``ray`` module.

    Parameters
    ----------
    address : str, optional
        ``auto`` (the cluster ``ray start`` started on this machine), ``ray://host:10001`` or
        ``host:6379``; default ``$RAY_ADDRESS``, else as ``start_local`` says.
    start_local : bool, default True
        Without an address, start a private local Ray for this process (a build), never joining a cluster
        that happens to run on this machine, instead of requiring a running cluster (a server, whose actors
        must outlive the command, requires one).
    num_cpus : int, optional
        CPUs of a private local Ray (ignored when joining a cluster, whose CPUs are its own).
    timeout : float
        How long joining may take, in seconds (a private Ray's start included).

    Raises
    ------
    codelex.errors.ClusterError
        When Ray is not installed, the cluster cannot be reached within ``timeout``, or it refuses this
        client (authentication, another Ray version): Ray's own error is named.
    """
    ray = ray_module()
    if ray.is_initialized():
        return ray
    address = address or os.environ.get("RAY_ADDRESS") or ("local" if start_local else "auto")
    kwargs: dict = {"address": address, "namespace": NAMESPACE, "logging_level": "ERROR", "log_to_driver": False}
    if address == "local":
        kwargs.update(include_dashboard=False, num_cpus=num_cpus)
    else:
        _probe(address)
    with _neutral_directory():
        if address == "local":
            # (ray.init starts a private Ray's processes from the calling thread only, and bounds that itself)
            try:
                ray.init(**kwargs)
            except Exception as exc:  # noqa: BLE001 - said in one line
                raise ClusterError(f"cannot start a private local Ray ({_failure_line(exc)})") from None
            return ray
        _init_within(ray, timeout, kwargs)
    return ray


@contextlib.contextmanager
def _neutral_directory():
    """Run ``ray.init`` from a directory no checkout controls: Ray puts the driver's working directory on every
    worker's import path (its ``py_driver_sys_path``), and a private Ray's processes start in it, so a
    ``numpy.py`` or ``fsspec.py`` at the top of the tree the command runs in would be imported by the workers.
    """
    from codelex.runtime import neutral_cwd

    here = os.getcwd()
    os.chdir(neutral_cwd())
    try:
        yield
    finally:
        os.chdir(here)


def _token_hint() -> str:
    """What to say when joining a cluster by address failed and token authentication may be why: Ray joins
    by ``auto`` with the local session's token, but by address only with ``RAY_AUTH_MODE=token`` set, and
    then reports a bare "Failed to connect"."""
    if os.environ.get("RAY_AUTH_MODE"):
        return ""
    from pathlib import Path

    token = (os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH")
             or (Path.home() / ".ray" / "auth_token").is_file())
    return ("; if the cluster uses token authentication, set RAY_AUTH_MODE=token (a token is available here)"
            if token else "; if the cluster uses token authentication, set RAY_AUTH_MODE=token and RAY_AUTH_TOKEN")


def describe_failure(exc: BaseException) -> str:
    """One line saying why a Ray task or actor call failed: the task's own exception, or the worker's death."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException) and cause is not exc:
        exc = cause
    name = type(exc).__name__
    text = str(exc).strip().splitlines()
    if name in ("WorkerCrashedError", "ActorDiedError", "ActorUnavailableError", "NodeDiedError",
                "OutOfMemoryError", "TaskCancelledError", "GetTimeoutError"):
        return f"{name}" + (f": {text[0][:200]}" if text else "")
    return f"{name}: {text[-1][:200]}" if text else name
