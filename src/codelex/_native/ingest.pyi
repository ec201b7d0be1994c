"""Type stubs of codelex._native.ingest (ingest.pyx): batch lstat."""

import os

import numpy as np
import numpy.typing as npt

MISSING: int
FILE: int
DIRECTORY: int
SYMLINK: int
OTHER: int
ERROR: int
SUPPORTED: bool

def stat_paths(
    root: str | os.PathLike[str], paths: list[str], threads: int = 2
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.uint8]]: ...
