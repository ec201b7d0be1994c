"""Loads the compiled core, failing loudly when it is missing.

A silent fallback to the pure-Python reference would hide a broken install
behind a 100x slowdown, so there is none.
"""

try:
    from codelex import _core
except ImportError as exc:  # pragma: no cover - exercised only on broken installs
    raise ImportError(
        "codelex's compiled extension (codelex._core) could not be imported: "
        f"{exc}. Reinstall a wheel for this platform (pip install --force-reinstall codelex) "
        "or build from source with a C++17 compiler (pip install .)."
    ) from exc

__all__ = ["_core"]
