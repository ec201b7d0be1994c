"""Realistic query lists: hand-written natural queries, identifier pieces
sampled from the corpus with a fixed seed, and filtered variants."""

from __future__ import annotations

import random
import re

NATURAL = [
    "parse config", "http request", "read file", "socket timeout", "json decode", "thread pool",
    "unicode error", "temporary directory", "date format", "email message", "zip archive", "sql cursor",
    "regular expression", "hash digest", "exit code", "abstract base class", "event loop",
    "signal handler", "path join", "locale encoding", "memory allocation", "device driver", "lock free queue",
]
FILTERED = [
    "lang:python -file:test socket timeout", "file:asyncio/ event loop", "-file:test json decode",
    "ext:py path join", "file:email/ message parser", "lang:python file:http/ request",
    "-file:test -file:idlelib thread lock", "file:xml/ element tree", "file:unittest/ mock patch",
    "lang:python file:concurrent/ future",
]

_IDENT = re.compile(rb"\b[A-Za-z_][A-Za-z0-9_]{5,}\b")


def sampled(docs: list[tuple[str, bytes]], n: int = 40, seed: int = 0) -> list[str]:
    """Identifier queries sampled from the corpus: an identifier or its words."""
    import codelex

    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        _, data = docs[rng.randrange(len(docs))]
        idents = _IDENT.findall(data)
        if not idents:
            continue
        ident = rng.choice(idents).decode()
        pieces = codelex.split_identifier(ident)[1:4] or codelex.split_identifier(ident)
        if not pieces:
            continue
        out.append(ident if rng.random() < 0.4 else " ".join(pieces[:3]))
    return out


def query_list(docs: list[tuple[str, bytes]]) -> list[str]:
    return NATURAL + FILTERED + sampled(docs)
