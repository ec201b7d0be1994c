"""The package's layering: no import cycles, no module reading another's private names, oracles apart.

Imports are read from the source (every ``import`` statement, at module
level or inside a function, except under ``if TYPE_CHECKING:``), so a lazy
import cannot hide a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import codelex

REPO = Path(__file__).resolve().parents[1]
# The sources of the checkout when the tests run from one, else the installed package.
PACKAGE = REPO / "src" / "codelex" if (REPO / "src" / "codelex").is_dir() else Path(codelex.__file__).parent


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST):
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _targets(node) -> list[tuple[str, str | None]]:
    """``(module, imported name or None)`` of an import statement, codelex only."""
    out = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] == "codelex":
                out.append((alias.name, None))
    elif node.module and node.level == 0 and node.module.split(".")[0] == "codelex":
        for alias in node.names:
            sub = f"{node.module}.{alias.name}"
            out.append((sub, None) if sub in MODULES or _is_extension(sub) else (node.module, alias.name))
    return out


def _is_extension(name: str) -> bool:
    return name.startswith("codelex._native.") and name.rsplit(".", 1)[1] in ("text", "lexical")


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for name, path in MODULES.items():
        for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            for target, _ in _targets(node):
                if target != name:
                    graph[name].add(target)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        path.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return path[path.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        path.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def stage_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "codelex"


def test_no_import_cycle_between_modules():
    assert _cycle(_graph()) is None


def test_no_import_cycle_between_stages():
    stages: dict[str, set[str]] = {}
    for module, targets in _graph().items():
        if module == "codelex":  # the root only re-exports the public API
            continue
        s = stage_of(module)
        stages.setdefault(s, set()).update(stage_of(t) for t in targets if stage_of(t) != s)
    assert _cycle(stages) is None, stages


def test_nothing_imports_the_root_package_or_the_oracles():
    for module, targets in _graph().items():
        if module != "codelex":
            assert "codelex" not in targets, f"{module} imports the codelex root (import the defining module)"
        if not module.startswith("codelex._reference"):
            assert not any(t.startswith("codelex._reference") for t in targets), f"{module} imports an oracle"


def _defined_private_names(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__slots__"
                                                  for t in node.targets):
            for elt in getattr(node.value, "elts", []):
                if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                    names.add(elt.value)
    return {n for n in names if n.startswith("_")}


#: Documented public APIs that happen to start with an underscore.
PUBLIC_UNDERSCORED = frozenset({"_exit", "_asdict", "_replace", "_fields"})


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__")) \
        and name not in PUBLIC_UNDERSCORED


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_reads_another_modules_private_names(module):
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    own = _defined_private_names(tree)
    problems = []
    for node in _import_nodes(tree):
        for target, name in _targets(node):
            if name is not None and _private(name):
                problems.append(f"imports {name} from {target}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in own:
            problems.append(f"reads .{node.attr} (line {node.lineno})")
    assert not problems, problems


def test_every_stage_folder_has_a_line_in_architecture_md():
    text = REPO / "ARCHITECTURE.md"
    if not text.is_file():
        pytest.skip("ARCHITECTURE.md not available (tests run outside the checkout)")
    doc = text.read_text(encoding="utf-8")
    for folder in sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()):
        assert f"`{folder}/`" in doc, folder
    for folder in sorted(p.name for p in (REPO / "csrc").iterdir() if p.is_dir()):
        assert f"`csrc/{folder}/`" in doc, folder
