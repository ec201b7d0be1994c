"""Corruption: truncate and flip every on-disk member; each damaged file must be refused or rebuilt, never believed.

Usage::

    python hardening/corrupt.py                 # every member, every byte of the small fixture's files
    python hardening/corrupt.py --project 40    # and 40 damaged copies per member opened by a Project

Members: the word index (``index.clx``), the structure store
(``structure.clx``), an embedding store (``embeddings/*.clx``), the listing
and import-graph caches (``listing.clx``, ``graph.clx``, ``graph-counts.clx``) and the docs store
(``docs.clx``).  For each, every truncation length and one flipped bit in
every byte (sampled above 8 KiB) is tried against its loader: the outcome
is *detected* (a named error, or None/empty for a cache: it is rebuilt),
*harmless* (the same answers as the intact file: the byte was padding) or
*wrong* (different answers; a failure).  ``--project`` then opens damaged
copies through :class:`codelex.Project` and checks that search, docs search
and outlines answer exactly as with intact files (a transparent rebuild).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

FIXTURE = {
    "src/app.py": 'def parse_config(path):\n    """Read the config file."""\n    return open(path).read()\n\n'
                  "class Router:\n    def add_route(self, path, handler):\n        self.routes[path] = handler\n",
    "src/util.py": "from src.app import parse_config\n\ndef load_user(path):\n    return parse_config(path)\n",
    "src/a.ts": 'import { check } from "./b"\nexport function handler(user) { return check(user) }\n',
    "src/b.ts": "export const check = (user) => user.password\n",
    "main.go": 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("parse config") }\n',
    "docs/guide.md": "# Guide\n\n## Parse config\nHow to parse the config file.\n\n## Users\nRegister a user.\n",
    "README.md": "# Demo\nParse config files and route users.\n",
}
QUERIES = ("parse config", "user", "route handler", "check password", "lang:python path", "file:src load")
MODEL = "corruption-model"


def make_fixture(root: Path) -> Path:
    """The fixture tree with every member saved in ``root/.codelex``; returns that directory."""
    from codelex import Project
    from codelex.docs import DocsIndex
    from codelex.persist.embeddings import save_embeddings

    for path, text in FIXTURE.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    with Project(root) as project:
        project.open()
        project.wait_structure()
        project.importers("src/app.py", timeout=60)
        from codelex.graph.extract import EXTRACTION_RULES
        from codelex.persist.graph import save_graph_counts

        # (the counts alone, as a process that followed edits saves them)
        save_graph_counts({"src/app.py": 3, "src/db.py": 1}, EXTRACTION_RULES, root / ".codelex",
                          project.index.files_digest())
    DocsIndex.for_project(root)
    rng = np.random.default_rng(3)
    keys = np.unique(rng.integers(0, 2**62, size=300, dtype=np.int64)).astype(np.uint64)
    save_embeddings(root / ".codelex", MODEL, keys, rng.standard_normal((len(keys), 8)).astype(np.float32))
    return root / ".codelex"


def _digest(value):
    """A comparable form of what a loader returned (arrays by their bytes)."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return tuple((f.name, _digest(getattr(value, f.name))) for f in dataclasses.fields(value)
                     if f.name != "container")
    if isinstance(value, dict):
        return tuple(sorted((str(k), _digest(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_digest(v) for v in value)
    return repr(value)


def loaders(root: Path, directory: Path) -> dict:
    """member name -> (file, load(directory) -> comparable answer; raises or returns None when refused)."""
    import codelex
    from codelex.docs import DocsIndex
    from codelex.graph.extract import EXTRACTION_RULES
    from codelex.persist.docs import load_docs
    from codelex.persist.embeddings import embeddings_file, load_embeddings
    from codelex.persist.graph import COUNTS_FILE, load_graph_counts, load_graph_prior, load_graph_refs
    from codelex.persist.listing import load_listing
    from codelex.persist.structure import load_structure

    def word_index(d):
        index = codelex.WordIndex.load(d)
        out = [[(h.file, h.score.hex(), h.start_line) for h in index.search(q, limit=10, ranking=r)]
               for q in QUERIES for r in codelex.RANKINGS]
        index.verify()
        return out

    def structure(d):
        snap = load_structure(d)
        snap.validate()
        return _digest(snap)

    def docs(d):
        return [(h.section.path, h.section.heading, h.section.start_line, h.score)
                for q in QUERIES for h in DocsIndex.for_project(root, index_dir=d).search(q)]

    def structure_lazy(d):  # (as a project reads it: each file's rows checked when first read)
        from codelex.structure.store import decode

        snap = load_structure(d, lazy=True)
        return _digest([decode(snap, row) for row in range(snap.n_files)])

    # The two readers of graph.clx answer apart (the prior's never reads the references): each refuses or is exact.
    def graph_refs(d):
        return _none_or(load_graph_refs(d, EXTRACTION_RULES))

    def graph_prior(d):
        return _none_or(load_graph_prior(d, EXTRACTION_RULES))

    return {
        "index.clx": (directory / "index.clx", word_index),
        "structure.clx": (directory / "structure.clx", structure),
        "structure.clx (lazy)": (directory / "structure.clx", structure_lazy),
        "embeddings": (embeddings_file(directory, MODEL), lambda d: _none_or(load_embeddings(d, MODEL))),
        "listing.clx": (directory / "listing.clx", lambda d: _none_or(load_listing(d))),
        "graph.clx": (directory / "graph.clx", graph_refs),
        "graph.clx (prior)": (directory / "graph.clx", graph_prior),
        "graph-counts.clx": (directory / COUNTS_FILE,
                             lambda d: _none_or(load_graph_counts(d, EXTRACTION_RULES, COUNTS_FILE))),
        "docs.clx": (directory / "docs.clx", docs),
        "docs.clx (store)": (directory / "docs.clx", lambda d: _none_or(load_docs(d))),
    }


def _none_or(value):
    return None if value is None else _digest(value)


def damaged_copies(raw: bytes, rng: random.Random, limit: int = 8192):
    """(description, bytes) for every truncation and one flipped bit per byte (sampled above ``limit``)."""
    n = len(raw)
    cuts = range(n) if n <= limit else sorted(rng.sample(range(n), limit))
    for cut in cuts:
        yield "truncated", raw[:cut]
    spots = range(n) if n <= limit else sorted(rng.sample(range(n), limit))
    for at in spots:
        buf = bytearray(raw)
        buf[at] ^= 1 << rng.randrange(8)
        yield "flipped", bytes(buf)


def run_loaders(seed: int = 0, limit: int = 8192) -> list[dict]:
    from codelex.errors import IndexFormatError

    rng = random.Random(seed)
    work = Path(tempfile.mkdtemp(prefix="codelex-corrupt-"))
    directory = make_fixture(work)
    rows = []
    for member, (file, load) in loaders(work, directory).items():
        clean = load(directory)
        assert clean is not None, member
        raw = file.read_bytes()
        counts = {"member": member, "bytes": len(raw), "cases": 0, "detected": 0, "harmless": 0, "wrong": 0,
                  "crashed": 0, "examples": []}
        for how, data in damaged_copies(raw, rng, limit):
            counts["cases"] += 1
            file.write_bytes(data)
            try:
                got = load(directory)
            except IndexFormatError:
                counts["detected"] += 1
                continue
            except Exception as exc:  # noqa: BLE001 - an unnamed error is a finding
                counts["crashed"] += 1
                if len(counts["examples"]) < 3:
                    counts["examples"].append(f"{how} at {len(data)}: {type(exc).__name__}: {exc}")
                continue
            finally:
                file.write_bytes(raw)
            if got is None:
                counts["detected"] += 1  # a cache refused: rebuilt by its owner
            elif got == clean:
                counts["harmless" if member != "docs.clx" else "detected"] += 1  # docs: re-parsed, same answers
            else:
                counts["wrong"] += 1
                if len(counts["examples"]) < 3:
                    counts["examples"].append(f"{how} ({len(data)} bytes): answers changed")
        rows.append(counts)
    shutil.rmtree(work, ignore_errors=True)
    return rows


def run_project(per_member: int, seed: int = 0) -> list[dict]:
    """Damaged copies opened through a Project: search, docs and outlines answer as with intact files."""
    from codelex import Project
    from codelex.docs import DocsIndex

    rng = random.Random(seed)
    work = Path(tempfile.mkdtemp(prefix="codelex-corrupt-project-"))
    directory = make_fixture(work)

    def answers() -> tuple:
        with Project(work) as project:
            project.open()
            project.wait_structure()
            project.importers("src/app.py", timeout=60)  # ranked with the graph itself, not a cache of it
            hits = [[(h.file, h.score.hex(), h.start_line, h.symbol) for h in _answered(project, q).results]
                    for q in QUERIES]
            outline = [(d.name, d.start_line, d.end_line) for d in project.outline("src/app.py").definitions]
        docs = [(h.section.path, h.score) for q in QUERIES for h in DocsIndex.for_project(work).search(q)]
        return hits, outline, docs

    clean = answers()
    rows = []
    for member, (file, _) in loaders(work, directory).items():
        if member == "embeddings":
            continue  # (no embedder in this check; its loader is covered above)
        raw = file.read_bytes()
        row = {"member": member, "cases": 0, "same": 0, "different": 0, "errors": 0, "examples": []}
        cases = list(damaged_copies(raw, rng))
        for how, data in rng.sample(cases, min(per_member, len(cases))):
            row["cases"] += 1
            file.write_bytes(data)
            try:
                got = answers()
            except Exception as exc:  # noqa: BLE001
                row["errors"] += 1
                row["examples"].append(f"{how} ({len(data)} bytes): {type(exc).__name__}: {exc}")
                got = None
            if got == clean:
                row["same"] += 1
            elif got is not None:
                row["different"] += 1
                row["examples"].append(f"{how} ({len(data)} bytes): answers changed")
            # Whatever the project did with the damaged file (rebuilt, rewritten), restore the intact one.
            file.write_bytes(raw)
        rows.append(row)
    shutil.rmtree(work, ignore_errors=True)
    return rows


def _answered(project, query: str):
    """A search's answer; a damaged chunk found by this very query makes the project drop the index and
    rebuild it in the background (answering "building" meanwhile): wait for that rebuild and ask again."""
    import time

    deadline = time.monotonic() + 60
    result = project.search(query)
    while not result.available and time.monotonic() < deadline:
        time.sleep(0.02)
        result = project.search(query)
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=8192, help="sample offsets above this file size")
    ap.add_argument("--project", type=int, default=0, help="damaged copies per member opened by a Project")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rows = run_loaders(args.seed, args.limit)
    project_rows = run_project(args.project, args.seed) if args.project else []
    bad = sum(r["wrong"] + r["crashed"] for r in rows) + sum(r["different"] + r["errors"] for r in project_rows)
    if args.json:
        print(json.dumps({"loaders": rows, "project": project_rows}, indent=1))
        return 1 if bad else 0
    print("| member | bytes | cases | detected | harmless | wrong | unnamed error |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    for r in rows:
        print(f"| {r['member']} | {r['bytes']:,} | {r['cases']:,} | {r['detected']:,} | {r['harmless']:,} | "
              f"{r['wrong']} | {r['crashed']} |")
    if project_rows:
        print("\n| member (opened by a Project) | cases | same answers | different | errors |")
        print("|---|--:|--:|--:|--:|")
        for r in project_rows:
            print(f"| {r['member']} | {r['cases']} | {r['same']} | {r['different']} | {r['errors']} |")
    for r in rows + project_rows:
        for e in r["examples"]:
            print(f"{r['member']}: {e}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
