"""The ingest stage: which files of a tree to index (listing, ignore files, admission rules) and reading them.

Which files are indexed is decided by one :class:`Admission` (built from a
root's options), asked by the walk, by per-edit upkeep and by a file
watcher alike, with the same reasons for what it leaves out.

Two steps, so that a refresh can stat without reading:
:func:`list_files` decides from paths and ``lstat`` alone, and
:func:`read_files` reads the chosen files on a thread pool, re-checking each
one as it is opened (size cap, binary sniff, generated-file header).  Every
file left out is counted by reason in :attr:`WalkResult.skipped`.
"""

from codelex.ingest.admission import Admission
from codelex.ingest.listing import ListingRecord, SourceFile, WalkResult, files_under, list_files
from codelex.ingest.reading import Document, read_file, read_files
from codelex.ingest.rules import CONTENT_SKIPS, content_skip_reason, path_skip_reason

__all__ = [
    "CONTENT_SKIPS",
    "Admission",
    "Document",
    "ListingRecord",
    "SourceFile",
    "WalkResult",
    "content_skip_reason",
    "files_under",
    "list_files",
    "path_skip_reason",
    "read_file",
    "read_files",
]
