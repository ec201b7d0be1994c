"""Makes ``codelex._reference`` (the test oracles) importable for the benchmarks.

The wheel leaves the oracles out; after a non-editable ``pip install .`` they are taken from the
source tree beside this directory. Import this module before ``codelex._reference``.
"""

from pathlib import Path

import codelex

try:
    import codelex._reference  # noqa: F401
except ImportError:
    codelex.__path__.append(str(Path(__file__).resolve().parents[1] / "src" / "codelex"))
