"""Hostile trees: the walk and the build must complete, report skips by reason, in bounded time and memory.

Usage::

    python hardening/hostile.py                  # every case
    python hardening/hostile.py --case symlink-loops --case long-path

Each case builds its tree in a scratch directory, then opens it with
:class:`codelex.Project` in a fresh process (so that the peak RSS is the
case's own) and reports the build time, peak RSS, files indexed, skips by
reason and pruned directories by reason, and a search that must answer.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES: dict = {}


def case(name: str):
    def register(fn):
        CASES[name] = fn
        return fn

    return register


@case("symlink-loops")
def symlink_loops(root: Path) -> dict:
    (root / "src/deep").mkdir(parents=True)
    (root / "src/app.py").write_text("def parse_config(): pass\n")
    os.symlink(".", root / "src/self")  # a directory that contains itself
    os.symlink("..", root / "src/deep/up")  # and one that climbs back
    os.symlink(root / "src", root / "src/deep/abs")  # absolute, into the tree
    os.symlink("/", root / "src/rootfs")  # out of the tree entirely
    os.symlink("missing.py", root / "src/dangling.py")
    os.symlink("app.py", root / "src/alias.py")  # a file link: not followed (no double counting)
    os.symlink("loop_b", root / "loop_a")
    os.symlink("loop_a", root / "loop_b")
    return {"query": "parse config", "expect": "src/app.py"}


@case("100k-files-one-dir")
def many_files(root: Path) -> dict:
    d = root / "flat"
    d.mkdir()
    for i in range(100_000):
        (d / f"f{i:06d}.py").write_text(f"def handler_{i}(): return {i}\n")
    return {"query": "handler_99999", "expect": "flat/f099999.py"}


@case("permission-denied")
def permission_denied(root: Path) -> dict:
    (root / "open").mkdir()
    (root / "open/ok.py").write_text("def parse_config(): pass\n")
    (root / "closed").mkdir()
    (root / "closed/secret.py").write_text("def secret(): pass\n")
    (root / "unreadable.py").write_text("def hidden(): pass\n")
    os.chmod(root / "closed", 0)
    os.chmod(root / "unreadable.py", 0)
    return {"query": "parse config", "expect": "open/ok.py",
            "note": "as root the kernel grants access anyway" if os.geteuid() == 0 else None}


@case("invalid-utf8-names")
def invalid_names(root: Path) -> dict:
    base = os.fsencode(root)
    (root / "src").mkdir()
    for raw in (b"bad\xff.py", b"caf\xe9.py", b"\xed\xa0\x80surrogate.py", b"ok.py"):
        with open(os.path.join(base, b"src", raw), "wb") as f:
            f.write(b"def parse_config(): pass\n")
    os.mkdir(os.path.join(base, b"dir\xfe"))
    with open(os.path.join(base, b"dir\xfe", b"inner.py"), "wb") as f:
        f.write(b"def inner_handler(): pass\n")
    return {"query": "inner handler", "expect": None}


@case("vanishing-files")
def vanishing(root: Path) -> dict:
    (root / "churn").mkdir()
    for i in range(20_000):
        (root / "churn" / f"f{i}.py").write_text(f"def churn_{i}(): pass\n" * 20)
    (root / "stable.py").write_text("def parse_config(): pass\n")
    return {"query": "parse config", "expect": "stable.py", "mutate": "churn"}


@case("minified-512k-line")
def minified(root: Path) -> dict:
    rng = random.Random(1)
    line = ";".join(f"var a{rng.randrange(10**6)}=function(b){{return b+{i}}}" for i in range(20_000))
    (root / "bundle.min.js").write_text(line[: 512 * 1024 - 1] + "\n")
    (root / "app.js").write_text("function parseConfig() {}\n")
    return {"query": "parse config", "expect": "app.js"}


@case("million-distinct-tokens")
def million_tokens(root: Path) -> dict:
    (root / "words.py").write_text("\n".join(f"tok{i:07d}x = {i}" for i in range(1_000_000)) + "\n")
    (root / "app.py").write_text("def parse_config(): pass\n")
    return {"query": "tok0999999x", "expect": "words.py", "max_bytes": None}


@case("long-path")
def long_path(root: Path) -> dict:
    parts = []
    total = len(str(root))
    while total < 3_900:
        part = "d" * 200
        parts.append(part)
        total += len(part) + 1
    deep = root.joinpath(*parts[:-1])
    os.makedirs(deep)
    name = "x" * max(1, min(200, 4_000 - len(str(deep)) - 5)) + ".py"
    (deep / name).write_text("def parse_config(): pass\n")
    return {"query": "parse config", "expect": None, "path_chars": len(str(deep / name))}


_CHILD = r"""
import json, os, resource, sys, threading, time
from pathlib import Path
from codelex import Project
root, index_dir, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
stop = threading.Event()
def churn():  # delete and truncate files while the walk and the build run
    import random
    rng = random.Random(0)
    d = Path(root) / spec["mutate"]
    names = sorted(os.listdir(d))
    for n in rng.sample(names, len(names) // 2):
        if stop.is_set():
            break
        p = d / n
        try:
            if rng.random() < 0.5:
                p.unlink()
            else:
                p.write_text("")
        except OSError:
            pass
if spec.get("mutate"):
    threading.Thread(target=churn, daemon=True).start()
kwargs = {"max_bytes": spec["max_bytes"]} if "max_bytes" in spec else {}
t = time.perf_counter()
with Project(root, index_dir=index_dir, build_structure=False, import_graph=False, **kwargs) as p:
    p.open()
    seconds = time.perf_counter() - t
    stop.set()
    r = p.last_report
    hits = p.search(spec["query"]).results
    out = {"status": p.status, "reason": p.status_reason, "seconds": round(seconds, 2),
           "files": r.files if r else None, "skipped": dict(r.skipped) if r else {},
           "pruned": dict(r.pruned_dirs) if r else {}, "top": hits[0].file if hits else None,
           "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}
print(json.dumps(out))
"""


def run_case(name: str, scratch: Path) -> dict:
    root = scratch / name
    if root.exists():
        _rmtree(root)
    root.mkdir(parents=True)
    t = time.perf_counter()
    spec = CASES[name](root)
    made = time.perf_counter() - t
    index_dir = scratch / f"{name}.index"
    shutil.rmtree(index_dir, ignore_errors=True)
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(root), str(index_dir), json.dumps(spec)],
                          capture_output=True, text=True, timeout=900)
    result = {"case": name, "tree_s": round(made, 1)}
    if proc.returncode != 0:
        result.update(ok=False, error=proc.stderr.strip().splitlines()[-1:] or ["exit %d" % proc.returncode])
    else:
        got = json.loads(proc.stdout.splitlines()[-1])
        result.update(got)
        result["ok"] = got["status"] == "ready" and (spec.get("expect") is None or got["top"] == spec["expect"])
    for k in ("note", "path_chars"):
        if spec.get(k):
            result[k] = spec[k]
    _rmtree(root)
    shutil.rmtree(index_dir, ignore_errors=True)
    return result


def _short(text: str, width: int = 48) -> str:
    return text if len(text) <= width else text[:20] + "…" + text[-(width - 21):]


def _rmtree(path: Path) -> None:
    for dirpath, dirnames, _ in os.walk(path):
        for d in dirnames:
            try:
                os.chmod(os.path.join(dirpath, d), 0o755, follow_symlinks=False)
            except (OSError, NotImplementedError):
                pass
    shutil.rmtree(path, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", action="append", choices=list(CASES))
    ap.add_argument("--scratch", default=None, help="where to build the trees (default: a temporary directory)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    scratch = Path(args.scratch or tempfile.mkdtemp(prefix="codelex-hostile-"))
    results = [run_case(name, scratch) for name in (args.case or CASES)]
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        print("| case | build (s) | peak RSS (MiB) | files | skipped by reason | pruned dirs by reason | answer | ok |")
        print("|---|--:|--:|--:|---|---|---|---|")
        for r in results:
            skipped = ", ".join(f"{k} {v:,}" for k, v in sorted(r.get("skipped", {}).items())) or "—"
            pruned = ", ".join(f"{k} {v:,}" for k, v in sorted(r.get("pruned", {}).items())) or "—"
            print(f"| {r['case']} | {r.get('seconds', '—')} | {r.get('rss_mb', '—')} | {r.get('files', '—')} | "
                  f"{skipped} | {pruned} | {_short(r.get('top') or '—')} | {'yes' if r['ok'] else 'NO: ' + str(r.get('error'))} |")
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
