"""The only door to the compiled core (``csrc/``): its binding modules, loaded loudly.

- :mod:`codelex._native.text`: tokenizer and vocabulary (``csrc/text``);
- :mod:`codelex._native.lexical`: the live word index and BM25 (``csrc/lexical``, ``csrc/score``);
- :mod:`codelex._native.dense`: exact top-k by dot product (``csrc/dense``);
- :mod:`codelex._native.ingest`: batch lstat (``csrc/ingest``).

A silent fallback to the pure-Python reference would hide a broken install
behind a 100x slowdown, so there is none: a missing extension is an
ImportError that says how to fix it.
"""

try:
    from codelex._native import dense, ingest, lexical, text
except ImportError as exc:  # pragma: no cover - exercised only on broken installs
    raise ImportError(
        "codelex's compiled extension (codelex._native) could not be imported: "
        f"{exc}. Reinstall a wheel for this platform (pip install --force-reinstall codelex) "
        "or build from source with a C++17 compiler (pip install .)."
    ) from exc

from codelex.errors import IndexFormatError

IS_NATIVE = text.IS_NATIVE
UNICODE_VERSION: str = text.UNICODE_VERSION
#: Bytes per lazily verified chunk, and the native digests of an array's chunks (see csrc/storage/checked.hpp).
CHECK_CHUNK: int = text.CHECK_CHUNK
chunk_digests = text.chunk_digests



class _NativeErrors:
    """Turn the core's corruption report (a chunk that fails its digest) into :class:`codelex.IndexFormatError`.

    The core throws ``CorruptIndex`` (csrc/storage/checked.hpp), which the
    binding surfaces as a ``RuntimeError`` whose message starts with
    ``corrupt index:``; any other error passes through unchanged.  (A plain
    class, not a generator: it wraps every search, so it must cost nothing.)
    """

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, tb) -> bool:
        if kind is not None and issubclass(kind, RuntimeError) and str(exc).startswith("corrupt index:"):
            raise IndexFormatError(str(exc)) from None
        return False


_NATIVE_ERRORS = _NativeErrors()


def native_errors() -> _NativeErrors:
    """A context manager that turns the core's ``corrupt index:`` ``RuntimeError`` into :class:`codelex.IndexFormatError`."""
    return _NATIVE_ERRORS


__all__ = ["CHECK_CHUNK", "IS_NATIVE", "UNICODE_VERSION", "chunk_digests", "dense", "ingest", "lexical",
           "native_errors", "text"]
