"""Type stubs of the compiled core (src/codelex/_core.pyx)."""

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

IS_NATIVE: bool
UNICODE_VERSION: str

def split_identifier(identifier: str | bytes) -> list[str]: ...
def tokenize_line(line: str | bytes) -> list[str]: ...

class Vocabulary:
    def __init__(self) -> None: ...
    def __len__(self) -> int: ...
    def intern(self, token: str | bytes) -> int: ...
    def find(self, token: str | bytes) -> int: ...
    def term(self, tid: int) -> str: ...
    def terms(self) -> list[str]: ...
    def memory_bytes(self) -> int: ...
    def to_arrays(self) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint64]]: ...
    @staticmethod
    def from_arrays(blob: npt.ArrayLike, offsets: npt.ArrayLike) -> Vocabulary: ...

def tokenize_document(
    content: str | bytes, vocab: Vocabulary
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32]]: ...
def build_segment(vocab: Vocabulary, contents: Iterable[str | bytes]) -> dict[str, np.ndarray]: ...

class Hit:
    file: str
    score: float
    hits: int
    start_line: int
    end_line: int
    def __init__(self, file: str, score: float, hits: int, start_line: int, end_line: int = -1) -> None: ...
    def to_dict(self) -> dict[str, object]: ...

class Searcher:
    n_live: float
    total_tokens: float
    def __init__(
        self,
        vocab: Vocabulary,
        arrays: dict[str, np.ndarray],
        doc_len: npt.NDArray[np.uint32],
        df: npt.NDArray[np.uint32],
        path_rank: npt.NDArray[np.uint32],
        n_live: float,
        total_tokens: float,
    ) -> None: ...
    def idf(self, term: int) -> float: ...
    def search(
        self,
        tokens: list[str],
        limit: int,
        allowed: npt.NDArray[np.uint8] | None = None,
        multiplier: npt.NDArray[np.float64] | None = None,
    ) -> list[tuple[int, float, int, int]]: ...
    def search_hits(
        self,
        tokens: list[str],
        limit: int,
        paths: list[str],
        allowed: npt.NDArray[np.uint8] | None = None,
        multiplier: npt.NDArray[np.float64] | None = None,
    ) -> list[Hit]: ...
