"""An identifier's references and a file's importers (issue 41), against a brute-force scan of the files."""

from __future__ import annotations

import random
import re

import pytest

from codelex import Project, QueryError

NAMES = ["parse_query", "load_config", "Widget", "render", "getUserByID"]


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    rng = random.Random(41)
    root = tmp_path_factory.mktemp("refs") / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/__init__.py").write_text("")
    (root / "pkg/core.py").write_text("def parse_query(text):\n    return text\n\n\nclass Widget:\n"
                                      "    def render(self):\n        return parse_query('w')\n")
    (root / "pkg/config.py").write_text("from pkg.core import parse_query\n\n\ndef load_config(path):\n"
                                        "    return parse_query(path)\n")
    for i in range(30):
        used = rng.sample(NAMES, rng.randint(0, 3))
        head = "import pkg.core\n" if i % 3 == 0 else "from pkg.config import load_config\n" if i % 3 == 1 else ""
        body = "".join(f"value_{k} = {name}  # uses {name.lower() if k % 2 else name}\n"
                       for k, name in enumerate(used))
        (root / f"pkg/mod_{i:02}.py").write_text(head + "\n" + body + "other_thing = 1\n")
    (root / "web").mkdir()
    (root / "web/user.ts").write_text("export function getUserByID(id: string) {\n  return id\n}\n")
    (root / "web/page.ts").write_text("import { getUserByID } from './user';\n\nconst u = getUserByID('1');\n")
    return root


def _brute_references(root, name):
    word = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])", re.IGNORECASE)
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and ".codelex" not in path.parts:
            lines = [n for n, line in enumerate(path.read_text().splitlines(), 1) if word.search(line)]
            if lines:
                out[path.relative_to(root).as_posix()] = lines
    return out


def test_references_are_every_file_and_line_holding_the_identifier(repo):
    with Project(repo) as project:
        project.open()
        project.wait_structure(60)
        for name in NAMES:
            result = project.references(name, limit=1000, per_file=1000, lines=10**6)
            expected = _brute_references(repo, name)
            assert result.available and result.total >= len(expected) and result.next_offset is None, name
            got = {f.file: sorted(r.line for r in f.lines) for f in result.files}
            assert got == expected, name  # (a candidate holding it only inside a longer identifier: left out)
            definers = [f.file for f in result.files if f.defines]
            assert [f.file for f in result.files][:len(definers)] == definers  # definitions first
        # getUserByID holds the token "user": a candidate, not a use
        user = project.references("user", limit=1000, per_file=1000, lines=10**6)
        assert "web/user.ts" not in {f.file for f in user.files} and user.total > len(user.files)
        parse = project.references("parse_query", limit=1000)
        core = next(f for f in parse.files if f.file == "pkg/core.py")
        assert core.defines and core.lines[0].definition and core.lines[0].line == 1
        pages, offset = [], 0
        while offset is not None:  # pages follow each other without a gap or a repeat
            page = project.references("render", limit=2, offset=offset)
            pages += [f.file for f in page.files]
            offset = page.next_offset
        assert pages == [f.file for f in project.references("render", limit=1000, lines=10**6).files]
        assert project.references("render", paths="pkg/core.py", limit=100).total == 1
        budget = project.references("Widget", limit=1000, per_file=2, lines=5)
        assert sum(len(f.lines) for f in budget.files) <= 5 and all(len(f.lines) <= 2 for f in budget.files)
        assert budget.next_offset is not None  # (the line budget ended the page: more follow)
        for bad in ("", "a b", "x;y", "1abc", "x", "$", "_"):
            with pytest.raises(QueryError):
                project.references(bad)


def test_importers_are_the_files_whose_imports_resolve_to_it(repo):
    with Project(repo) as project:
        project.open()
        result = project.import_sites("pkg/core.py", timeout=60)
        expected = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*.py")
                          if re.search(r"^(import pkg\.core|from pkg\.core import)", p.read_text(), re.M))
        assert result.available and [s.file for s in result.importers] == expected
        for site in result.importers:
            line = (repo / site.file).read_text().splitlines()[site.line - 1]
            assert site.text == line.strip() and "pkg.core" in line
        assert project.import_sites("pkg.core", timeout=60) == result  # the dotted module names the same file
        ts = project.import_sites("web/user.ts", timeout=60)
        assert [(s.file, s.line) for s in ts.importers] == [("web/page.ts", 1)]
        with pytest.raises(FileNotFoundError):
            project.import_sites("pkg/missing.py", timeout=60)


def test_a_minified_import_line_is_clipped(tmp_path):
    root = tmp_path / "min"
    (root / "lib").mkdir(parents=True)
    (root / "lib/core.js").write_text("module.exports = 1;\n")
    (root / "min.js").write_text("var q=require('./lib/core');" + "q+1;" * 20_000 + "\n")
    with Project(root) as project:
        project.open()
        site, = project.import_sites("lib/core.js", timeout=60).importers
        assert site.file == "min.js" and site.line == 1 and len(site.text) <= 160 and site.text.endswith("…")
