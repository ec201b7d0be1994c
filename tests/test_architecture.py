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


#: Documented public APIs that happen to start with an underscore.
PUBLIC_UNDERSCORED = frozenset({"_exit", "_asdict", "_replace", "_fields"})


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__")) \
        and name not in PUBLIC_UNDERSCORED


def _own_instances(tree: ast.AST) -> dict[ast.AST, set[str]]:
    """Per function, the names that hold an object of this module's own making: ``self``, ``cls``, and names
    bound there to ``self``, to ``cls(...)`` or to a call of a class this module defines."""
    classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    out = {}
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        names = {"self", "cls"}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                value = node.value
                if (isinstance(value, ast.Name) and value.id == "self") or (
                        isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                        and (value.func.id == "cls" or value.func.id in classes)):
                    names.add(node.targets[0].id)
        out[fn] = names
    return out


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_reads_another_modules_private_names(module):
    """Never ``from x import _y``, and a private attribute is read only on ``self``, ``cls`` or an object of
    this module's own class made or named in the same function (``graph = cls(...)``; ``watcher = self`` for
    a callback), never on any other object: that another module's class happens to define the same
    private name does not make it this module's."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    problems = []
    for node in _import_nodes(tree):
        for target, name in _targets(node):
            if name is not None and _private(name):
                problems.append(f"imports {name} from {target}")
    owners = _own_instances(tree)
    allowed_at: dict[ast.AST, set[str]] = {}
    for fn, names in owners.items():  # (a nested function sees the names of the functions around it)
        for node in ast.walk(fn):
            allowed_at.setdefault(node, set()).update(names)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and _private(node.attr)):
            continue
        base = node.value
        if isinstance(base, ast.Name) and base.id in allowed_at.get(node, ()):
            continue
        if isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id == "super":
            continue
        problems.append(f"reads .{node.attr} of {ast.unparse(base)[:40]} (line {node.lineno})")
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


def _table_rows() -> list[list[str]]:
    """The Python rows of ARCHITECTURE.md's folder table, in order: each row's backticked names."""
    import re

    doc = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = doc.split("## Folders, as the questions they answer", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if line.startswith("| `") and not line.startswith("| `csrc/"):
            first = line.split(" | ", 1)[0]
            rows.append(re.findall(r"`([^`]+)`", first))
    return rows


def _row_of(module: str, rows: list[list[str]]) -> int | None:
    parts = module.split(".")
    names = {f"{parts[1]}/", f"{parts[1]}.py"} if len(parts) > 1 else {"__init__.py"}
    for i, row in enumerate(rows):
        if names & set(row):
            return i
    return None


def test_imports_follow_the_table_of_architecture_md():
    """A module imports only from its own row of ARCHITECTURE.md's folder table or the rows before it, and every
    module has a row: the document states the layering, this test holds the code to it."""
    if not (REPO / "ARCHITECTURE.md").is_file():
        pytest.skip("ARCHITECTURE.md not available (tests run outside the checkout)")
    rows = _table_rows()
    missing = sorted(m for m in MODULES if m != "codelex" and _row_of(m, rows) is None)
    assert not missing, f"modules with no row in ARCHITECTURE.md's table: {missing}"
    upward = []
    for module, targets in _graph().items():
        if module == "codelex":  # the root re-exports the public API of every row
            continue
        here = _row_of(module, rows)
        for target in targets:
            there = _row_of(target, rows) if target != "codelex" else 0
            if there is not None and there > here:
                upward.append(f"{module} (row {here + 1}) imports {target} (row {there + 1})")
    assert not upward, upward
