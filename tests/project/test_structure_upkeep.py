"""A project's structure: built in the background, saved, reused, kept fresh per edit; outline and read_symbol."""

from __future__ import annotations

from pathlib import Path

import pytest

from codelex import AmbiguousSymbolError, Project, SymbolNotFoundError
from codelex.structure import analyze

pytest.importorskip("tree_sitter")


def make_repo(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src/shapes.py").write_text(
        "class Shape:\n    \"\"\"A shape.\"\"\"\n\n    def area(self):\n        return 0\n\n"
        "    def area_of(self, other):\n        return other.area()\n\n\n"
        "def make_shape(kind):\n    # Build one.\n    return Shape()\n")
    (root / "src/route.go").write_text("package route\n\ntype Router struct{}\n\n"
                                        "func (r *Router) Add(path string) {}\n")
    (root / "src/util.ts").write_text("export const clamp = (x: number) => Math.max(0, x);\n")
    (root / "README.md").write_text("# Shapes\n\nArea of shapes.\n")
    return root


def _fresh(project: Project) -> dict:
    out = {}
    for path in sorted(p.relative_to(project.root).as_posix() for p in project.root.rglob("*")
                       if p.is_file() and ".codelex" not in p.parts):
        out[path] = analyze(path, (project.root / path).read_bytes())
    return out


def _stored(project: Project) -> dict:
    upkeep = project.service.structure
    return {p: upkeep.index.get(p) for p in sorted(upkeep.index.paths())}


def test_built_in_the_background_saved_and_reused(tmp_path):
    root = make_repo(tmp_path / "repo")
    with Project(root) as p:
        p.open()
        assert p.wait_structure(60)
        assert p.structure_status["status"] == "ready"
        assert p.structure_status["stats"]["analyzed"] == 4
        assert (root / ".codelex/structure.clx").is_file()
        assert _stored(p) == _fresh(p)
    with Project(root) as p:
        p.open()
        assert p.wait_structure(60)
        assert p.structure_status["stats"]["analyzed"] == 0  # nothing changed: nothing parsed again
        assert _stored(p) == _fresh(p)


def test_outline_and_read_symbol(tmp_path):
    root = make_repo(tmp_path / "repo")
    with Project(root) as p:
        outline = p.outline("src/shapes.py")
        assert outline.available and outline.language == "python"
        assert [(d.kind, d.qualified_name, d.start_line, d.end_line) for d in outline.definitions] == [
            ("class", "Shape", 1, 8), ("method", "Shape.area", 4, 5), ("method", "Shape.area_of", 7, 8),
            ("function", "make_shape", 11, 13)]
        nested = outline.to_dict()["definitions"]
        assert [d["name"] for d in nested] == ["Shape", "make_shape"]
        assert [c["name"] for c in nested[0]["children"]] == ["area", "area_of"]
        src = p.read_symbol(root / "src/shapes.py", "Shape.area")
        assert (src.start_line, src.end_line) == (4, 5)
        assert src.text == "    def area(self):\n        return 0"
        assert p.read_symbol("src/route.go", "Router.Add").definition.kind == "method"
        assert p.read_symbol("src/shapes.py", "area").definition.qualified_name == "Shape.area"
        with pytest.raises(SymbolNotFoundError) as err:
            p.read_symbol("src/shapes.py", "make_shap")
        assert "make_shape" in err.value.nearest and "nearest" in str(err.value)
        (root / "src/twice.py").write_text("class A:\n    def f(self):\n        pass\n\n\n"
                                           "class B:\n    def f(self):\n        pass\n")
        with pytest.raises(AmbiguousSymbolError) as err:
            p.read_symbol("src/twice.py", "f")
        assert err.value.candidates == (("A.f", 2), ("B.f", 7))
        assert p.read_symbol("src/twice.py", "f", line=7).definition.qualified_name == "B.f"
        assert p.read_symbol("src/twice.py", "B.f").definition.start_line == 7
        docs = p.outline("README.md")
        assert not docs.available and "grammar" in docs.reason
        with pytest.raises(FileNotFoundError):
            p.outline("src/missing.py")
        with pytest.raises(ValueError):
            p.outline(tmp_path / "elsewhere.py")


def test_search_hits_name_their_enclosing_definition(tmp_path):
    root = make_repo(tmp_path / "repo")
    with Project(root) as p:
        p.open()
        hit = next(h for h in p.search("area of other").results if h.file == "src/shapes.py")
        assert (hit.symbol, hit.start_line, hit.end_line) == ("Shape.area_of", 7, 8)
        assert hit.to_dict()["symbol"] == "Shape.area_of"
        readme = next(h for h in p.search("area shapes").results if h.file == "README.md")
        assert readme.symbol is None and readme.end_line == readme.start_line


def test_edits_are_reflected_at_once_and_equal_a_fresh_analysis(tmp_path):
    root = make_repo(tmp_path / "repo")
    with Project(root, debounce_ms=0) as p:
        p.open()
        assert p.wait_structure(60)
        # An edit with content (not yet on disk): asked for at once, it is analyzed at once.
        p.on_edit("src/shapes.py", "def perimeter(shape):\n    return 4\n")
        assert [d.qualified_name for d in p.outline("src/shapes.py").definitions] == ["perimeter"]
        (root / "src/shapes.py").write_text("def perimeter(shape):\n    return 4\n")
        (root / "src/new.py").write_text("class Fresh:\n    pass\n")
        p.on_edit("src/new.py")
        (root / "src/util.ts").unlink()
        p.on_edit("src/util.ts")
        assert "src/util.ts" not in set(p.service.structure.index.paths())
        p.service.structure._drain()  # what the timer does a moment later
        assert _stored(p)["src/new.py"] == analyze("src/new.py", (root / "src/new.py").read_bytes())
        p.refresh()
        assert p.wait_structure(60)
        assert _stored(p) == _fresh(p)


def test_without_the_extra_the_outline_says_so(tmp_path, monkeypatch):
    root = make_repo(tmp_path / "repo")
    import codelex.structure.extract as extract

    def missing(grammar):
        raise ImportError("No module named 'tree_sitter'")

    monkeypatch.setattr(extract, "_parser", missing)
    with Project(root, build_structure=False) as p:
        outline = p.outline("src/shapes.py")
        assert not outline.available and "pip install" in outline.reason
        with pytest.raises(SymbolNotFoundError):
            p.read_symbol("src/shapes.py", "Shape")
