"""Type stubs of codelex._native.lexical (lexical.pyx): the live word index and BM25."""

from collections.abc import Iterable, Sequence
from typing import TypeVar

import numpy as np
import numpy.typing as npt

LINE_CHECKPOINT: int

from codelex._native.text import Vocabulary

_Row = TypeVar("_Row", bound=tuple)
# A federation's statistics: live documents, body tokens, (dir, name, defs) tokens, dfs.
_GlobalStats = tuple[int, int, tuple[int, int, int], npt.ArrayLike]

FIELD_NAMES: tuple[str, str, str, str]
FIELD_PREFIXES: tuple[str, str, str, str]

class FieldRanking:
    @property
    def k1(self) -> float: ...
    @property
    def weights(self) -> tuple[float, float, float, float]: ...
    @property
    def bs(self) -> tuple[float, float, float, float]: ...
    @property
    def def_boost(self) -> float: ...
    @property
    def name_boost(self) -> float: ...
    def __init__(
        self,
        k1: float,
        weights: tuple[float, float, float, float],
        bs: tuple[float, float, float, float],
        def_boost: float,
        name_boost: float,
    ) -> None: ...
    def native_params(self) -> dict[str, object]: ...

def encode_paths(paths: list[str]) -> tuple[bytes, npt.NDArray[np.uint64]]: ...

_DocBlocks = tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint32], npt.NDArray[np.uint8], npt.NDArray[np.uint32]]

def pack_doc_blocks(values: npt.ArrayLike) -> _DocBlocks: ...
def read_doc_blocks(
    packed: _DocBlocks, n: int, positions: Iterable[int], ranges: Iterable[tuple[int, int, int]]
) -> tuple[list[int], list[int], list[int]]: ...

class SegmentBatch:
    @property
    def vocab(self) -> Vocabulary: ...
    @property
    def sizes(self) -> list[int]: ...
    @property
    def n_docs(self) -> int: ...

class BatchBuilder:
    @property
    def vocab(self) -> Vocabulary: ...
    def __init__(self) -> None: ...
    def build(
        self,
        contents: list[str | bytes],
        paths: list[str],
        definitions: list[list[tuple[str, int]] | None] | None = None,
    ) -> SegmentBatch: ...

class LiveIndex:
    @property
    def vocab(self) -> Vocabulary: ...
    @property
    def generation(self) -> int: ...
    @property
    def n_slots(self) -> int: ...
    @property
    def n_live(self) -> int: ...
    def __init__(self, vocab: Vocabulary) -> None: ...
    def install_batches(self, batches: list[SegmentBatch], paths: list[str], mtime_ns: list[int]) -> None: ...
    def install(
        self,
        arrays: dict[str, np.ndarray],
        path_blob: npt.NDArray[np.uint8],
        path_off: npt.NDArray[np.uint64],
        mtime_ns: npt.NDArray[np.int64],
        size: npt.NDArray[np.uint64],
        digests: dict[str, npt.NDArray[np.uint64]] | None = None,
    ) -> None: ...
    def verify(self) -> None: ...
    def verified_chunks(self) -> tuple[int, int]: ...
    def add_slot(self, path: str, mtime_ns: int, size: int) -> int: ...
    def put(
        self,
        slot: int,
        content: str | bytes,
        mtime_ns: int,
        path: str,
        definitions: list[tuple[str, int]] | None = None,
    ) -> int: ...
    def remove(self, slot: int) -> bool: ...
    def set_line_starts_max(self, n: int) -> None: ...
    def needs_merge(self, ratio: float, min_postings: int) -> bool: ...
    def merge(self) -> npt.NDArray[np.uint32]: ...
    def merge_state(self) -> tuple[int, bool]: ...
    def alive(self, slot: int) -> bool: ...
    def find_slot(self, path: str) -> int: ...
    @property
    def dead_base_docs(self) -> int: ...
    def prepare_edits(self) -> bool: ...
    @property
    def warmup_state(self) -> str: ...
    def doc_len(self, slot: int) -> int: ...
    def file_info(self, slot: int) -> tuple[int, int]: ...
    def live_slots(self) -> npt.NDArray[np.uint32]: ...
    def file_table(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint64], npt.NDArray[np.bool_]]: ...
    def counts(self) -> dict[str, int]: ...
    def term_stats(self, words: list[str]) -> tuple[int, int, tuple[int, int, int], npt.NDArray[np.int64]]: ...
    def export(
        self,
    ) -> tuple[
        dict[str, np.ndarray], npt.NDArray[np.uint8], npt.NDArray[np.uint64], npt.NDArray[np.int64],
        npt.NDArray[np.uint64],
    ]: ...
    def search(
        self,
        tokens: list[str],
        limit: int,
        generation: int,
        k1: float,
        b: float,
        allowed: npt.NDArray[np.uint8] | None = None,
        multiplier: npt.NDArray[np.float64] | None = None,
        multiplier_max: float = ...,
        exhaustive: bool = False,
        prune_min_postings: int = 4096,
    ) -> list[tuple[int, float, int, int]] | None: ...
    def search_hits(
        self,
        tokens: list[str],
        limit: int,
        paths: Sequence[str] | None,
        generation: int,
        k1: float,
        b: float,
        allowed: npt.NDArray[np.uint8] | None = None,
        multiplier: npt.NDArray[np.float64] | None = None,
        multiplier_max: float = ...,
        exhaustive: bool = False,
        prune_min_postings: int = 4096,
        row_type: type[_Row] = ...,
        global_stats: _GlobalStats | None = None,
    ) -> list[_Row] | None: ...
    def search_fields(
        self,
        terms: list[str | tuple[str, float, bool]],
        limit: int,
        paths: Sequence[str] | None,
        generation: int,
        ranking: FieldRanking,
        n_query_tokens: int,
        allowed: npt.NDArray[np.uint8] | None = None,
        multiplier: npt.NDArray[np.float64] | None = None,
        multiplier_max: float = ...,
        exhaustive: bool = False,
        prune_min_postings: int = 4096,
        row_type: type[_Row] = ...,
        global_stats: _GlobalStats | None = None,
    ) -> list[_Row] | None: ...
