"""Concurrency soak: readers search while a writer updates, removes and merges, for a fixed time.

Usage::

    python hardening/soak.py --seconds 600 --readers 3

Two parts run one after the other, each for half the time:

- ``index``: a :class:`codelex.WordIndex`; the writer applies updates,
  removals and merges and, after each, records the answers of the query set
  (version k).  Every reader's result must equal the answers of some version
  between the last one published before its search began and the first one
  after it ended (a linearizable read).  Every 200 versions the writer's
  answers are compared with a fresh build of the same documents.
- ``project``: a :class:`codelex.Project` with per-edit upkeep (files
  written, then ``on_edit``); readers run file search, chunk search and
  hybrid search (a tiny static embedder); afterwards the answers equal
  those of a fresh project over the same files.

Reported: operations, reads, errors, inconsistent reads, and the process RSS
over time (growth between the first quarter and the end).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import resource
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

WORDS = [f"w{i}" for i in range(300)] + ["parse", "config", "getUserByID", "route", "handler", "user", "password"]
QUERIES = ["parse config", "getUserByID", "w1 w2", "w17", "route handler", "lang:python user", "file:src w5",
           "-file:test password"]


def _rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize() / 2**20
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _doc(rng: random.Random) -> str:
    return "\n".join(" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 10))) for _ in range(rng.randint(1, 30)))


def _key(hits) -> str:
    return hashlib.blake2b(repr([(h.file, h.score.hex(), h.start_line) for h in hits]).encode(),
                           digest_size=12).hexdigest()


def _run(writer, reader, readers: int, seconds: float, stop: threading.Event) -> tuple[list[float], float]:
    """Run the writer and the readers for ``seconds``, sampling the RSS; ``(rss samples, elapsed)``."""
    threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader, args=(i,)) for i in range(readers)]
    rss = [_rss_mb()]
    started = time.perf_counter()
    for t in threads:
        t.start()
    while time.perf_counter() - started < seconds:
        time.sleep(min(1.0, seconds / 20))
        rss.append(_rss_mb())
    stop.set()
    for t in threads:
        t.join()
    return rss, time.perf_counter() - started


def soak_index(seconds: float, readers: int, seed: int = 0) -> dict:
    import codelex

    rng = random.Random(seed)
    paths = [f"{'src' if i % 4 else 'tests'}/m{i % 40}/f{i}.{('py', 'ts', 'go')[i % 3]}" for i in range(3000)]
    docs = {p: _doc(rng) for p in paths[:2000]}
    index = codelex.WordIndex.build(list(docs.items()))
    index.merge_ratio, index.merge_min_postings = 0.05, 1000  # the writer's updates also trigger merges
    # version -> answers; versions far behind the readers are dropped (the harness's memory stays flat).
    answers: dict[int, dict[str, str]] = {0: {q: _key(index.search(q, limit=10)) for q in QUERIES}}
    published = [0]
    checked = {"reads": 0, "inconsistent": 0, "unchecked": 0}
    check_lock = threading.Lock()
    stop = threading.Event()
    errors: list[str] = []
    counts = {"updates": 0, "removes": 0, "merges": 0, "fresh_checks": 0, "fresh_mismatches": 0}

    def writer() -> None:
        wrng = random.Random(seed + 1)
        try:
            while not stop.is_set():
                r = wrng.random()
                path = wrng.choice(paths)
                if r < 0.6:
                    docs[path] = _doc(wrng)
                    index.update(path, docs[path])
                    counts["updates"] += 1
                elif r < 0.9:
                    index.remove(path)
                    docs.pop(path, None)
                    counts["removes"] += 1
                else:
                    index.merge()
                    counts["merges"] += 1
                version = published[0] + 1
                answers[version] = {q: _key(index.search(q, limit=10)) for q in QUERIES}
                published[0] = version
                answers.pop(version - 2000, None)
                if version % 200 == 0:
                    fresh = codelex.WordIndex.build(list(docs.items()))
                    counts["fresh_checks"] += 1
                    if any(_key(fresh.search(q, limit=10)) != answers[version][q] for q in QUERIES):
                        counts["fresh_mismatches"] += 1
        except Exception as exc:  # noqa: BLE001
            errors.append(f"writer: {type(exc).__name__}: {exc}")

    def reader(i: int) -> None:
        rrng = random.Random(seed + 10 + i)
        try:
            while not stop.is_set():
                q = rrng.choice(QUERIES)
                before = published[0]
                key = _key(index.search(q, limit=10))
                after = published[0]
                # The op after `after` may already have been applied: wait for its answers (briefly).
                deadline = time.perf_counter() + 5
                while published[0] < after + 1 and not stop.is_set() and time.perf_counter() < deadline:
                    time.sleep(0.0005)
                window = [answers.get(k) for k in range(before, after + 2)]
                with check_lock:
                    checked["reads"] += 1
                    if any(w is not None and w[q] == key for w in window):
                        continue
                    if any(w is None for w in window):
                        checked["unchecked"] += 1
                    else:
                        checked["inconsistent"] += 1
        except Exception as exc:  # noqa: BLE001
            errors.append(f"reader {i}: {type(exc).__name__}: {exc}")

    rss, elapsed = _run(writer, reader, readers, seconds, stop)
    quarter = rss[max(1, len(rss) // 4)]
    return {"part": "index", "seconds": round(elapsed, 1), "versions": published[0],
            **counts, "reads": checked["reads"], "inconsistent_reads": checked["inconsistent"],
            "unchecked_reads": checked["unchecked"], "errors": len(errors),
            "error_examples": errors[:3], "rss_start_mb": round(rss[0]), "rss_quarter_mb": round(quarter),
            "rss_end_mb": round(rss[-1]), "rss_max_mb": round(max(rss))}


def soak_project(seconds: float, readers: int, seed: int = 0) -> dict:
    import numpy as np

    from codelex import Project
    from codelex.dense import StaticModelEmbedder

    embedder = StaticModelEmbedder(_static_model())
    rng = random.Random(seed)
    root = Path(tempfile.mkdtemp(prefix="codelex-soak-"))
    paths = [f"src/m{i % 10}/f{i}.py" for i in range(300)]
    for p in paths[:200]:
        (root / p).parent.mkdir(parents=True, exist_ok=True)
        (root / p).write_text(_py(rng))
    stop = threading.Event()
    errors: list[str] = []
    counts = {"edits": 0, "deletes": 0, "file_searches": 0, "chunk_searches": 0, "hybrid_searches": 0}
    project = Project(root, debounce_ms=50)
    project.open()
    project.wait_structure()
    project.code_search("parse config", embedder=embedder, wait=True)

    def writer() -> None:
        wrng = random.Random(seed + 1)
        try:
            while not stop.is_set():
                p = wrng.choice(paths)
                if wrng.random() < 0.8:
                    (root / p).parent.mkdir(parents=True, exist_ok=True)
                    (root / p).write_text(_py(wrng))
                    counts["edits"] += 1
                else:
                    (root / p).unlink(missing_ok=True)
                    counts["deletes"] += 1
                project.on_edit(str(root / p))
                time.sleep(0.002)
        except Exception as exc:  # noqa: BLE001
            errors.append(f"writer: {type(exc).__name__}: {exc}")

    def reader(i: int) -> None:
        rrng = random.Random(seed + 10 + i)
        try:
            while not stop.is_set():
                q = rrng.choice(["parse config", "route handler", "user password check", "w3 w4"])
                kind = rrng.randrange(3)
                if kind == 0:
                    r = project.search(q)
                    counts["file_searches"] += 1
                elif kind == 1:
                    r = project.code_search(q, embedder=False)
                    counts["chunk_searches"] += 1
                else:
                    r = project.code_search(q, embedder=embedder)
                    counts["hybrid_searches"] += 1
                for h in getattr(r, "results", None) or getattr(r, "hits", None) or []:
                    path = getattr(h, "file", None) or h.path
                    assert path.startswith("src/") and h.start_line >= 1, h
        except Exception as exc:  # noqa: BLE001
            import traceback

            errors.append(f"reader {i}: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")

    rss, elapsed = _run(writer, reader, readers, seconds, stop)
    # Quiet now: the project's answers must be a fresh project's over the same files.
    project.sync()  # (unwatched: a stat check of the tree)
    got = [[(h.file, h.score.hex()) for h in project.search(q).results] for q in ("parse config", "route handler")]
    project.close()
    fresh_dir = Path(tempfile.mkdtemp(prefix="codelex-soak-fresh-"))
    with Project(root, index_dir=fresh_dir) as fresh:
        fresh.open()
        want = [[(h.file, h.score.hex()) for h in fresh.search(q).results] for q in ("parse config", "route handler")]
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(fresh_dir, ignore_errors=True)
    quarter = rss[max(1, len(rss) // 4)]
    del np
    return {"part": "project", "seconds": round(elapsed, 1), **counts, "errors": len(errors),
            "error_examples": errors[:3], "final_equals_fresh": got == want, "rss_start_mb": round(rss[0]),
            "rss_quarter_mb": round(quarter), "rss_end_mb": round(rss[-1]), "rss_max_mb": round(max(rss))}


def _py(rng: random.Random) -> str:
    names = ["parse_config", "route_handler", "check_password", "load_user", "register"]
    out = []
    for _ in range(rng.randint(1, 4)):
        out.append(f"def {rng.choice(names)}_{rng.randint(0, 99)}(path, user):\n"
                   f"    # {' '.join(rng.choice(WORDS) for _ in range(6))}\n    return path\n")
    return "\n".join(out)


def _static_model():
    """A tiny deterministic model2vec model (no download): the tests' embedder."""
    import numpy as np
    from model2vec import StaticModel
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.normalizers import Lowercase
    from tokenizers.pre_tokenizers import Whitespace

    words = ["parse", "config", "route", "handler", "check", "password", "load", "user", "register", "path",
             "def", "return", "w3", "w4"]
    vocab = {"[UNK]": 0, "[PAD]": 1, **{w: i + 2 for i, w in enumerate(words)}}
    tok = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = Lowercase()
    tok.pre_tokenizer = Whitespace()
    vectors = np.random.default_rng(0).standard_normal((len(vocab), 16)).astype(np.float32)
    return StaticModel(vectors=vectors, tokenizer=tok, normalize=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--readers", type=int, default=3)
    ap.add_argument("--part", choices=("index", "project"), action="append")
    args = ap.parse_args(argv)
    parts = args.part or ["index", "project"]
    results = []
    for part in parts:
        fn = soak_index if part == "index" else soak_project
        results.append(fn(args.seconds / len(parts), args.readers))
        print(json.dumps(results[-1]), flush=True)
    bad = any(r["errors"] or r.get("inconsistent_reads") or r.get("fresh_mismatches")
              or r.get("final_equals_fresh") is False for r in results)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
