"""semble's own search, run inside semble's venv, for the relevance benchmark (``benchmarks/contender_semble.py``).

    <semble-venv>/bin/python benchmarks/semble_runner.py REQUEST.json RESULT.json

REQUEST: ``{"sets": [{"name", "root", "queries": [str, ...]}], "top_k": int, "alpha": float | null,
"model": path | null}``.  Each ``root`` is a directory holding exactly the corpus files.  The index is
built by ``SembleIndex.from_path`` and searched by ``SembleIndex.search`` (semble's own chunking, BM25,
query boosts and reranking), with ``alpha`` as given (0.0: its lexical pipeline alone).  Without
``model``, a tiny random static model is made here (nothing is downloaded): with ``alpha = 0`` the
vector half is weighed by zero and never changes a ranking.

RESULT: ``{"sets": {name: {"seconds_index": float, "seconds_search": float,
"results": [[[path, start_line, end_line], ...] per query]}}}``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path


def _tiny_model(directory: Path) -> str:
    """A 16-dimensional random model2vec model over a small word-level vocabulary (saved to ``directory``)."""
    import numpy as np
    from model2vec import StaticModel
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = ["[UNK]", "[PAD]"] + [f"w{i}" for i in range(64)]
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    vectors = np.random.default_rng(0).standard_normal((len(words), 16)).astype(np.float32)
    StaticModel(vectors, tokenizer, normalize=True).save_pretrained(str(directory))
    return str(directory)


def main(argv: list[str]) -> int:
    request = json.loads(Path(argv[0]).read_text())
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["SEMBLE_CACHE_LOCATION"] = str(Path(scratch) / "cache")  # never a stale cached index
        from semble import SembleIndex

        model = request.get("model") or _tiny_model(Path(scratch) / "model")
        out = {}
        for item in request["sets"]:
            t = time.perf_counter()
            index = SembleIndex.from_path(item["root"], model_path=model)
            indexed = time.perf_counter() - t
            t = time.perf_counter()
            results = []
            for query in item["queries"]:
                hits = index.search(query, top_k=request.get("top_k", 50), alpha=request.get("alpha", 0.0))
                results.append([[h.chunk.file_path, h.chunk.start_line, h.chunk.end_line] for h in hits])
            out[item["name"]] = {"seconds_index": indexed, "seconds_search": time.perf_counter() - t,
                                 "results": results}
    Path(argv[1]).write_text(json.dumps({"sets": out}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
