"""Persistence: the container format, the word index's format, index-directory layout, debounced saves.

This package knows nothing of the classes it stores: the word index crosses
it as a :class:`~codelex.persist.lexical.LexicalSnapshot` (``WordIndex.export_snapshot``
/ ``WordIndex.from_snapshot``), and the scheduler saves anything with a
``save(path)`` method.  The submodules are imported on demand (they pull in
xxhash and filelock), so ``import codelex`` stays light.
"""
