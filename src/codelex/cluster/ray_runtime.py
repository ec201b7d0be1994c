"""The one place codelex reaches Ray: imported only by the cluster commands, so ``import codelex`` stays light."""

from __future__ import annotations

import os

from codelex.errors import ClusterError

__all__ = ["NAMESPACE", "connect", "describe_failure", "ray_module"]

#: The Ray namespace of codelex's named actors (a served store's coordinator).
NAMESPACE = "codelex"
#: How long reaching a named cluster's head may take: Ray itself retries an unreachable one for minutes.
CONNECT_TIMEOUT_S = 10.0


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


def connect(address: str | None = None, *, start_local: bool = True, num_cpus: int | None = None):
    """Join a Ray cluster (once per process); returns the ``ray`` module.

    Parameters
    ----------
    address : str, optional
        ``auto`` (the cluster ``ray start`` started on this machine), ``ray://host:10001`` or
        ``host:6379``; default ``$RAY_ADDRESS``, else as ``start_local`` says.
    start_local : bool, default True
        Without an address, start a private local Ray for this process (a build) instead of requiring a
        running cluster (a server, whose actors must outlive the command, requires one).
    num_cpus : int, optional
        CPUs of a private local Ray.

    Raises
    ------
    codelex.errors.ClusterError
        When Ray is not installed or the cluster cannot be reached.
    """
    ray = ray_module()
    if ray.is_initialized():
        return ray
    address = address or os.environ.get("RAY_ADDRESS") or (None if start_local else "auto")
    kwargs: dict = {"namespace": NAMESPACE, "logging_level": "ERROR", "log_to_driver": False}
    if address is None:
        kwargs.update(include_dashboard=False, num_cpus=num_cpus)
    else:
        _probe(address)
    try:
        ray.init(address=address, **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ClusterError(f"cannot reach a Ray cluster at {address!r} ({first}); start one with "
                           "`ray start --head` or pass --address") from None
    return ray


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
