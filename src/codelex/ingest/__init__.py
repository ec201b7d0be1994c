"""The ingest stage: which files of a tree to index (listing, ignore files, admission rules) and reading them.

Two steps, so that a refresh can stat without reading:
:func:`list_files` decides from paths and ``lstat`` alone, and
:func:`read_files` reads the chosen files on a thread pool, re-checking each
one as it is opened (size cap, binary sniff, generated-file header).  Every
file left out is counted by reason in :attr:`WalkResult.skipped`.
"""

from codelex.ingest.listing import ListingRecord, SourceFile, WalkResult, list_files
from codelex.ingest.reading import Document, read_file, read_files
from codelex.ingest.rules import CONTENT_SKIPS, content_skip_reason, path_skip_reason

__all__ = [
    "CONTENT_SKIPS",
    "Document",
    "ListingRecord",
    "SourceFile",
    "WalkResult",
    "content_skip_reason",
    "list_files",
    "path_skip_reason",
    "read_file",
    "read_files",
]
