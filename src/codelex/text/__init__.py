"""The tokenize stage: identifiers split into index tokens, interned in a vocabulary."""

from codelex.text.tokenize import (
    STOPWORDS,
    Vocabulary,
    scan_definitions,
    split_identifier,
    tokenize_document,
    tokenize_line,
    utf8_length,
)

__all__ = ["STOPWORDS", "Vocabulary", "scan_definitions", "split_identifier", "tokenize_document", "tokenize_line", "utf8_length"]
