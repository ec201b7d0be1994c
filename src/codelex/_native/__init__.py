"""The only door to the compiled core (``csrc/``): its binding modules, loaded loudly.

- :mod:`codelex._native.text`: tokenizer and vocabulary (``csrc/text``);
- :mod:`codelex._native.lexical`: the live word index and BM25 (``csrc/lexical``, ``csrc/score``);
- :mod:`codelex._native.dense`: exact top-k by dot product (``csrc/dense``).

A silent fallback to the pure-Python reference would hide a broken install
behind a 100x slowdown, so there is none: a missing extension is an
ImportError that says how to fix it.
"""

try:
    from codelex._native import dense, lexical, text
except ImportError as exc:  # pragma: no cover - exercised only on broken installs
    raise ImportError(
        "codelex's compiled extension (codelex._native) could not be imported: "
        f"{exc}. Reinstall a wheel for this platform (pip install --force-reinstall codelex) "
        "or build from source with a C++17 compiler (pip install .)."
    ) from exc

IS_NATIVE = text.IS_NATIVE
UNICODE_VERSION: str = text.UNICODE_VERSION

__all__ = ["IS_NATIVE", "UNICODE_VERSION", "dense", "lexical", "text"]
