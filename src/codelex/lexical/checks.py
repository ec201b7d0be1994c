"""Argument checks of the word index's entry points (before anything reaches native code)."""

from __future__ import annotations

from codelex.defaults import WINDOWS

__all__ = ["check_content", "check_definitions", "check_max_bytes", "check_mtime", "check_path"]


def check_path(path: object) -> str:
    """A stored path: a str without NUL (``\\`` becomes ``/`` on Windows)."""
    if not isinstance(path, str):
        raise TypeError(f"path must be str, not {type(path).__name__}")
    if "\x00" in path:
        raise ValueError("path contains a NUL character")
    return path.replace("\\", "/") if WINDOWS else path


def check_content(content: object) -> str | bytes:
    if not isinstance(content, (str, bytes)):
        raise TypeError(f"content must be str or bytes, not {type(content).__name__}")
    return content


def check_mtime(mtime_ns: object) -> int:
    if isinstance(mtime_ns, bool) or not isinstance(mtime_ns, int):
        raise TypeError(f"mtime_ns must be int, not {type(mtime_ns).__name__}")
    if not -(2**63) <= mtime_ns < 2**63:
        raise ValueError("mtime_ns does not fit in 64 bits")
    return mtime_ns


def check_max_bytes(max_bytes: object) -> int | None:
    if max_bytes is None:
        return None
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int):
        raise TypeError(f"max_bytes must be int or None, not {type(max_bytes).__name__}")
    if max_bytes < 0:
        raise ValueError("max_bytes must be >= 0")
    return max_bytes


def check_definitions(definitions: object) -> list[tuple[str, int]] | None:
    """``None`` (the definition scanner decides) or ``(name, line)`` pairs, names str, lines ints >= 1."""
    if definitions is None:
        return None
    if isinstance(definitions, (str, bytes)):
        raise TypeError("definitions must be a sequence of (name, line) pairs")
    out = []
    for item in definitions:
        if not isinstance(item, tuple) or len(item) != 2:
            raise TypeError("definitions must be (name, line) pairs")
        name, line = item
        if not isinstance(name, str):
            raise TypeError(f"a definition name must be str, not {type(name).__name__}")
        if isinstance(line, bool) or not isinstance(line, int):
            raise TypeError(f"a definition line must be an int, not {type(line).__name__}")
        if not 1 <= line < 2**32:
            raise ValueError(f"a definition line must be in [1, 2**32), not {line}")
        out.append((name, line))
    return out
