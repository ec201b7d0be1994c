"""The import graph: extraction and resolution per language, exact importer counts, upkeep per edit."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codelex import WordIndex
from codelex.graph import ImportRef, extract_imports, from_mapping


def counts(files: dict[str, str]) -> dict[str, int]:
    return from_mapping(files).centrality()


# --- Python ---------------------------------------------------------------------------


def test_python_absolute_relative_packages_and_src_layout():
    files = {
        "src/pkg/__init__.py": "from .core import run\n",
        "src/pkg/core.py": "import os\nfrom . import util\nfrom .util import helper\n",
        "src/pkg/util.py": "def helper(): pass\n",
        "src/pkg/sub/__init__.py": "",
        "src/pkg/sub/deep.py": "from ..core import run\nfrom .. import util\nimport pkg.util\n",
        "ns/mod.py": "x = 1\n",  # a namespace package: no __init__.py
        "app.py": '"""Usage:\n\n    import nonexistent\n"""\nimport pkg.sub.deep\nfrom pkg import core, util\n'
                  "import ns.mod\nimport numpy as np\n",
    }
    g = from_mapping(files)
    assert g.imports("app.py") == ["ns/mod.py", "src/pkg/core.py", "src/pkg/sub/deep.py", "src/pkg/util.py"]
    assert g.imports("src/pkg/core.py") == ["src/pkg/util.py"]
    assert g.imports("src/pkg/sub/deep.py") == ["src/pkg/core.py", "src/pkg/util.py"]
    assert g.imports("src/pkg/__init__.py") == ["src/pkg/core.py"]
    assert g.centrality() == {"src/pkg/util.py": 3, "src/pkg/core.py": 3, "src/pkg/sub/deep.py": 1,
                              "ns/mod.py": 1}
    assert g.importers("src/pkg/util.py") == ["app.py", "src/pkg/core.py", "src/pkg/sub/deep.py"]
    assert g.unresolved == 2  # os, numpy (the docstring's example is not code)


# --- JavaScript / TypeScript ----------------------------------------------------------


def test_js_ts_relative_index_extensions_tsconfig_and_workspaces():
    files = {
        "tsconfig.json": '{\n  // comments and trailing commas are allowed\n  "compilerOptions": {"baseUrl": ".",'
                         ' "paths": {"@app/*": ["src/app/*"],},},\n}\n',
        "src/app/store.ts": "export const store = 1\n",
        "src/components/index.tsx": "export * from './button'\n",
        "src/components/button.tsx": "import { store } from '@app/store'\n",
        "src/util.js": "module.exports = {}\n",
        "src/esm.ts": "export const x = 1\n",
        "src/main.ts": "import React from 'react'\nimport { Button } from './components'\n"
                       "const u = require('./util')\nconst lazy = import('./components/button')\n"
                       "import './esm.js'\nimport type { T } from '@app/store'\n// import './never'\n"
                       "import { shared } from '@org/shared'\n",
        "packages/shared/package.json": '{"name": "@org/shared", "main": "lib/index.js"}\n',
        "packages/shared/lib/index.js": "exports.shared = 1\n",
    }
    g = from_mapping(files)
    assert g.imports("src/main.ts") == ["packages/shared/lib/index.js", "src/app/store.ts",
                                        "src/components/button.tsx", "src/components/index.tsx", "src/esm.ts",
                                        "src/util.js"]
    assert g.imports("src/components/button.tsx") == ["src/app/store.ts"]
    assert g.centrality()["src/app/store.ts"] == 2 and g.centrality()["src/components/button.tsx"] == 2
    assert g.unresolved == 1  # react


def test_a_manifest_nested_too_deeply_is_skipped_not_a_failed_graph():
    """Regression (review finding 10): a deeply nested package.json made the import graph fail (a RecursionError
    from json, logged with its traceback); that manifest is skipped, the rest resolves."""
    deep = '{"name": "@org/deep", "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    files = {
        "packages/deep/package.json": deep,
        "packages/deep/index.js": "exports.deep = 1\n",
        "tsconfig.json": '{"compilerOptions": ' + "{" * 50_000 + "}" * 50_000 + "}\n",
        "packages/shared/package.json": '{"name": "@org/shared", "main": "lib/index.js"}\n',
        "packages/shared/lib/index.js": "exports.shared = 1\n",
        "src/main.js": "import { shared } from '@org/shared'\nimport { deep } from '@org/deep'\nimport './util'\n",
        "src/util.js": "module.exports = {}\n",
    }
    g = from_mapping(files)
    assert g.imports("src/main.js") == ["packages/shared/lib/index.js", "src/util.js"]


# --- Go -------------------------------------------------------------------------------


def test_go_module_packages(tmp_path):
    files = {
        "go.mod": "module example.com/shop\n\ngo 1.21\n",
        "cmd/server/main.go": 'package main\n\nimport (\n\t"fmt"\n\tcart "example.com/shop/internal/cart"\n'
                              '\t"example.com/shop/pkg/money"\n)\n',
        "internal/cart/cart.go": 'package cart\n\nimport "example.com/shop/pkg/money"\n',
        "internal/cart/items.go": "package cart\n",
        "internal/cart/cart_test.go": 'package cart\n\nimport "testing"\n',
        "pkg/money/money.go": "package money\n",
    }
    g = from_mapping({k: v for k, v in files.items()})
    # every non-test file of an imported package counts as imported
    assert g.imports("cmd/server/main.go") == ["internal/cart/cart.go", "internal/cart/items.go",
                                               "pkg/money/money.go"]
    assert g.centrality() == {"internal/cart/cart.go": 1, "internal/cart/items.go": 1, "pkg/money/money.go": 2}
    assert g.unresolved == 2  # fmt, testing


# --- Rust -----------------------------------------------------------------------------


def test_rust_mod_tree_use_paths_and_workspace_crates():
    files = {
        "Cargo.toml": "[workspace]\nmembers = [\"core\", \"app\"]\n",
        "core/Cargo.toml": '[package]\nname = "shop-core"\nversion = "0.1.0"\n',
        "core/src/lib.rs": "pub mod money;\npub mod cart;\nmod inline { fn x() {} }\n",
        "core/src/money.rs": "pub struct Money;\n",
        "core/src/cart/mod.rs": "mod items;\nuse crate::money::Money;\nuse super::money;\n",
        "core/src/cart/items.rs": "use super::super::money::Money;\nuse self::helper::x;\n",
        "app/Cargo.toml": '[package]\nname = "app"\n',
        "app/src/main.rs": "use shop_core::{cart, money::Money};\nuse std::collections::HashMap;\n",
    }
    g = from_mapping(files)
    assert g.imports("core/src/lib.rs") == ["core/src/cart/mod.rs", "core/src/money.rs"]
    assert g.imports("core/src/cart/mod.rs") == ["core/src/cart/items.rs", "core/src/money.rs"]
    assert g.imports("core/src/cart/items.rs") == ["core/src/money.rs"]
    assert g.imports("app/src/main.rs") == ["core/src/cart/mod.rs", "core/src/money.rs"]
    assert g.centrality()["core/src/money.rs"] == 4


# --- Java / Kotlin --------------------------------------------------------------------


def test_java_and_kotlin_packages_and_wildcards():
    files = {
        "src/main/java/com/shop/Cart.java": "package com.shop;\n\nimport com.shop.model.Item;\nimport java.util.List;\n",
        "src/main/java/com/shop/model/Item.java": "package com.shop.model;\n",
        "src/main/java/com/shop/model/Price.java": "package com.shop.model;\n",
        "src/main/kotlin/com/shop/App.kt": "package com.shop\n\nimport com.shop.model.*\n"
                                           "import static_not_really\nimport com.shop.Cart\n",
        "src/test/java/com/shop/CartTest.java": "package com.shop;\n\nimport static com.shop.Cart.total;\n",
    }
    g = from_mapping(files)
    assert g.imports("src/main/kotlin/com/shop/App.kt") == [
        "src/main/java/com/shop/Cart.java", "src/main/java/com/shop/model/Item.java",
        "src/main/java/com/shop/model/Price.java"]
    assert g.imports("src/test/java/com/shop/CartTest.java") == ["src/main/java/com/shop/Cart.java"]
    assert g.centrality()["src/main/java/com/shop/model/Item.java"] == 2


# --- C / C++ --------------------------------------------------------------------------


def test_c_includes_relative_then_include_dirs():
    files = {
        "include/lib/api.h": "#pragma once\n",
        "src/util.h": "#pragma once\n",
        "src/main.c": '#include <stdio.h>\n#include "util.h"\n#include <lib/api.h>\n#include "lib/api.h"\n'
                      '  #  include "missing.h"\n',
        "src/deep/x.cpp": '#include "../util.h"\n',
    }
    g = from_mapping(files)
    assert g.imports("src/main.c") == ["include/lib/api.h", "src/util.h"]
    assert g.imports("src/deep/x.cpp") == ["src/util.h"]
    assert g.centrality() == {"src/util.h": 2, "include/lib/api.h": 1}
    assert g.unresolved == 2  # stdio.h, missing.h


# --- extraction details and upkeep ----------------------------------------------------


def test_extraction_is_as_written():
    assert extract_imports("a.py", "from . import (x,\n  y as z)\n") == [ImportRef("py", "", 1, ("x", "y"))]
    assert extract_imports("a.rs", "use a::{b, c::{d, e}};") == [ImportRef("rs-use", "a::b"),
                                                                  ImportRef("rs-use", "a::c::d"),
                                                                  ImportRef("rs-use", "a::c::e")]
    assert extract_imports("a.md", "import x") == []


def test_edits_move_counts_exactly():
    files = {"a.py": "import c\n", "b.py": "x = 1\n", "c.py": "y = 2\n"}
    g = from_mapping(dict(files))
    assert g.centrality() == {"c.py": 1}
    g.update("b.py", "import c\nimport a\n")
    assert g.centrality() == {"c.py": 2, "a.py": 1}
    g.update("a.py", "x = 0\n")
    assert g.centrality() == {"c.py": 1, "a.py": 1}
    g.update("d.py", "import a\n")  # a new file
    assert g.importers("a.py") == ["b.py", "d.py"]
    g.remove("c.py")
    assert g.centrality() == {"a.py": 2} and g.unresolved == 1  # b's `import c` no longer resolves
    g.update("c.py", "")
    assert g.centrality() == {"a.py": 2, "c.py": 1}  # and resolves again once c exists


def test_the_more_imported_of_two_equal_files_ranks_first():
    docs = [("lib/alpha.py", "def parse_config(): pass\n"), ("lib/beta.py", "def parse_config(): pass\n")]
    plain = WordIndex.build(docs).search("parse config")
    assert {h.file for h in plain} == {"lib/alpha.py", "lib/beta.py"}
    assert plain[0].score == plain[1].score
    files = dict(docs) | {f"app{i}.py": "from lib import beta\n" for i in range(3)}
    centrality = from_mapping(files).centrality()
    assert centrality == {"lib/beta.py": 3}
    boosted = WordIndex.build(docs).search("parse config", centrality=centrality)
    assert boosted[0].file == "lib/beta.py" and boosted[0].score > boosted[1].score


def test_prior_counts_directories_hubs_and_go_packages():
    files = {
        # three importers in one directory count once; two directories count twice
        "util.py": "", "a/x.py": "import util\n", "a/y.py": "import util\n", "a/z.py": "import util\n",
        "b/w.py": "import util\n",
        # a Rust module hub gets no count, the leaf it re-exports keeps its own
        "Cargo.toml": '[package]\nname = "c"\n', "src/lib.rs": "mod net;\nmod leaf;\n",
        "src/net/mod.rs": "pub mod tcp;\n", "src/net/tcp.rs": "", "src/leaf.rs": "use crate::net::tcp;\n",
        "src/other.rs": "use crate::net;\n",
        # a JS index file likewise
        "web/lib/index.ts": "export * from './a'\n", "web/lib/a.ts": "", "web/app.ts": "import x from './lib'\n",
        # a Go package of four files imported from four directories: 4 / 4 = 1 each
        "go.mod": "module m\n", **{f"p/f{i}.go": "package p\n" for i in range(4)}, "p/p_test.go": "package p\n",
        **{f"c{i}/main.go": 'package main\nimport "m/p"\n' for i in range(4)},
        "q/q.go": "package q\n", **{f"d{i}/main.go": 'package main\nimport "m/q"\n' for i in range(3)},
    }
    g = from_mapping(files)
    raw, prior = g.centrality(), g.prior_counts()
    assert raw["util.py"] == 4 and prior["util.py"] == 2
    assert raw["src/net/mod.rs"] == 2 and "src/net/mod.rs" not in prior
    assert prior["src/net/tcp.rs"] == 2 and "src/lib.rs" not in prior  # from src/net/mod.rs and src/leaf.rs
    assert raw["web/lib/index.ts"] == 1 and "web/lib/index.ts" not in prior and prior["web/lib/a.ts"] == 1
    assert raw["p/f0.go"] == 4 and all(prior[f"p/f{i}.go"] == 1 for i in range(4)) and "p/p_test.go" not in raw
    assert raw["q/q.go"] == 3 and prior["q/q.go"] == 3
    assert g.centrality_map() is g.centrality_map()  # cached until the graph changes
    before = g.centrality_map()
    g.update("b/w.py", "")
    assert g.centrality_map() is not before and g.prior_counts()["util.py"] == 1


@pytest.mark.parametrize("bad", [b"\xff\xfe", "import \x00weird", "from", "#include", "use ::;", "mod ;"])
def test_hostile_text_never_raises(bad):
    text = bad.decode("utf-8", "surrogateescape") if isinstance(bad, bytes) else bad
    for name in ("a.py", "a.ts", "a.go", "a.rs", "A.java", "a.c"):
        from_mapping({name: text, "b.py": ""}).stats()


def test_project_graph_api_centrality_and_edits(tmp_path):
    from codelex import Project

    root = tmp_path / "repo"
    (root / "lib").mkdir(parents=True)
    (root / "lib/__init__.py").write_text("")
    (root / "lib/alpha.py").write_text("def parse_config(): pass\n")
    (root / "lib/beta.py").write_text("def parse_config(): pass\n")
    for i in range(3):
        (root / f"app{i}.py").write_text("from lib import beta\n")
    with Project(root, build_structure=False) as project:
        project.open()
        assert project.importers("lib/beta.py") == ["app0.py", "app1.py", "app2.py"]
        assert project.imports(root / "app0.py") == ["lib/beta.py"]
        assert project.graph_status["state"] == "ready" and project.graph_status["resolved"] == 3
        hits = project.search("parse config").results
        assert [h.file for h in hits[:2]] == ["lib/beta.py", "lib/alpha.py"]  # the imported one first
        assert hits[0].score > hits[1].score
        plain = project.search("parse config", centrality={}).results  # the switch: no prior
        assert plain[0].score == plain[1].score
        project.on_edit("app0.py", "from lib import alpha\n")
        project.on_edit("app3.py", "import lib.alpha\n")
        assert project.importers("lib/alpha.py") == ["app0.py", "app3.py"]
        assert project.importers("lib/beta.py") == ["app1.py", "app2.py"]
        (root / "app1.py").unlink()
        project.on_edit("app1.py")
        assert project.importers("lib/beta.py") == ["app2.py"]
        hits = project.search("parse config").results
        assert hits[0].file == "lib/alpha.py"
    with Project(root, build_structure=False, import_graph=False) as project:
        project.open()
        assert project.graph_status["state"] == "off"
        hits = project.search("parse config").results
        assert hits[0].score == hits[1].score


def test_graph_cache_reuses_unchanged_files(tmp_path):
    import os
    import time as _time

    from codelex import Project

    root = tmp_path / "repo"
    root.mkdir()
    (root / "core.py").write_text("x = 1\n")
    (root / "a.py").write_text("import core\n")
    (root / "b.py").write_text("y = 2\n")
    with Project(root, build_structure=False) as project:
        project.open()
        assert project.importers("core.py") == ["a.py"]
        assert project.graph_status["reused"] == 3  # extracted while the build read the files: none read twice
    assert (root / ".codelex" / "graph.clx").is_file()
    with Project(root, build_structure=False) as project:
        project.open()
        assert project.importers("core.py") == ["a.py"]
        assert project.graph_status["reused"] == 3  # nothing read again
    (root / "b.py").write_text("import core\n")
    later = _time.time() + 5
    os.utime(root / "b.py", (later, later))
    with Project(root, build_structure=False) as project:
        project.open()
        assert project.importers("core.py") == ["a.py", "b.py"]  # the changed file was extracted again
        assert project.graph_status["reused"] == 2
    (root / ".codelex" / "graph.clx").write_bytes(b"garbage")
    with Project(root, build_structure=False) as project:
        project.open()
        assert project.importers("core.py") == ["a.py", "b.py"] and project.graph_status["reused"] == 0


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=['"', "'", "\n", "a", "#", "\\"], max_size=60))
def test_triple_quoted_spans_match_the_lazy_regex(text):
    from codelex.graph.extract import triple_quoted_spans

    expected = [m.span() for m in re.finditer(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'', text)]
    assert list(triple_quoted_spans(text)) == expected


def test_collector_pause_nests_and_restores():
    import gc

    from codelex.runtime import collector_paused

    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # was off before: stays off
    finally:
        gc.enable()


def test_go_imports_are_read_from_the_head_only():
    text = ('package main\n\n// a comment\nimport (\n\t"fmt"\n\tstr "strings"\n)\nimport "os"\n\n'
            'func main() {\n\tsrc := `\nimport "fake/inside/a/raw/string"\n`\n\tfmt.Println(src)\n}\n')
    assert [r.spec for r in extract_imports("main.go", text)] == ["os", "fmt", "strings"]



def test_saved_prior_ranks_a_later_process_and_one_shot_commands(tmp_path, two_equal_files):
    import os
    import subprocess
    import sys

    from codelex import Project

    root = tmp_path / "repo"
    two_equal_files(root)
    with Project(root, build_structure=False, import_graph="saved") as project:
        project.open()
        # Nothing saved yet: the first search derives the counts and saves them (issue 30: one query, one answer)
        hits = project.search("parse config").results
        assert hits[0].file == "lib/beta.py" and hits[0].score > hits[1].score
    with Project(root, build_structure=False) as project:
        project.open()
        assert project.importers("lib/beta.py") == ["app0/main.py", "app1/main.py", "app2/main.py"]
        assert project.search("parse config").results[0].file == "lib/beta.py"
        # an explicit empty map turns the graph's prior off
        off = project.search("parse config", centrality={}).results
        assert off[0].score == off[1].score
    with Project(root, build_structure=False, import_graph="saved") as project:
        project.open()
        hits = project.search("parse config").results
        assert hits[0].file == "lib/beta.py" and hits[0].score > hits[1].score
        assert project.graph_status["state"] == "off"  # ranked with the saved counts; no graph built
    with Project(root, build_structure=False, import_graph=False) as project:
        project.open()
        hits = project.search("parse config").results
        assert hits[0].score == hits[1].score
    env = dict(os.environ, CODELEX_NO_SERVER="1")
    cli = [sys.executable, "-m", "codelex", "search", "--root", str(root), "parse config"]
    out = subprocess.run([*cli, "-l"], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0 and out.stdout.splitlines()[0] == "lib/beta.py"
    both = subprocess.run([*cli, "--json"], capture_output=True, text=True, env=env, timeout=120)
    plain = subprocess.run([*cli, "--json", "--no-import-graph"], capture_output=True, text=True, env=env,
                           timeout=120)
    import json

    scores = [r["score"] for r in json.loads(both.stdout)["results"]]
    flat = [r["score"] for r in json.loads(plain.stdout)["results"]]
    assert scores[0] > scores[1] and flat[0] == flat[1]


def test_import_graph_argument_is_checked(tmp_path):
    from codelex import Project

    with pytest.raises(ValueError, match="import_graph"):
        Project(tmp_path, import_graph="yes")
