"""The .pyi stubs of the native modules match the built extension (names, parameters, defaults).

An equivalent of mypy's stubtest for what matters here: every public name
of a binding module is declared in its stub and vice versa, and every
function and method has the same parameter names, kinds and defaults.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

import codelex._native

NATIVE_DIR = Path(codelex._native.__file__).parent
MODULES = ["text", "lexical", "dense", "ingest"]


def _stub(name: str) -> ast.Module:
    path = NATIVE_DIR / f"{name}.pyi"
    assert path.is_file(), f"no stub for codelex._native.{name}"
    return ast.parse(path.read_text(encoding="utf-8"))


def _public_runtime(obj) -> set[str]:
    out = set()
    for n in dir(obj):
        if n.startswith("_"):
            continue
        value = getattr(obj, n)
        if inspect.ismodule(value):
            continue  # imports (numpy)
        out.add(n)
    return out


def _stub_names(body) -> dict[str, ast.AST]:
    names = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
    return names


_KIND = {
    "posonlyargs": inspect.Parameter.POSITIONAL_ONLY,
    "args": inspect.Parameter.POSITIONAL_OR_KEYWORD,
    "kwonlyargs": inspect.Parameter.KEYWORD_ONLY,
}


def _stub_params(fn: ast.FunctionDef, drop_self: bool) -> list[tuple[str, object, object]]:
    a = fn.args
    out = []
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for arg, default in zip(positional, defaults):
        kind = _KIND["posonlyargs"] if arg in a.posonlyargs else _KIND["args"]
        out.append((arg.arg, kind, default))
    if a.vararg:
        out.append((a.vararg.arg, inspect.Parameter.VAR_POSITIONAL, None))
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        out.append((arg.arg, _KIND["kwonlyargs"], default))
    if a.kwarg:
        out.append((a.kwarg.arg, inspect.Parameter.VAR_KEYWORD, None))
    if drop_self and out and out[0][0] == "self":
        out = out[1:]
    return out


def _compare(where: str, runtime, fn: ast.FunctionDef, is_method: bool) -> None:
    try:
        sig = inspect.signature(runtime)
    except (TypeError, ValueError):
        pytest.fail(f"{where}: no runtime signature")
    params = list(sig.parameters.values())
    if is_method and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list):
        if params and params[0].name == "self":
            params = params[1:]
        drop_self = True
    else:
        drop_self = False
    if [p.kind for p in params] == [inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD]:
        return  # a cdef class's __init__: the signature is not introspectable
    stub = _stub_params(fn, drop_self)
    assert [(p.name, p.kind) for p in params] == [(n, k) for n, k, _ in stub], where
    for p, (_, _, default) in zip(params, stub):
        has_default = p.default is not inspect.Parameter.empty
        assert has_default == (default is not None), f"{where}: default of {p.name}"
        if default is not None and not (isinstance(default, ast.Constant) and default.value is Ellipsis):
            assert p.default == ast.literal_eval(default), f"{where}: default of {p.name}"


@pytest.mark.parametrize("name", MODULES)
def test_stub_matches_extension(name):
    module = importlib.import_module(f"codelex._native.{name}")
    assert module.__file__.endswith((".so", ".pyd")), module.__file__
    declared = _stub_names(_stub(name).body)
    assert set(declared) == _public_runtime(module), name
    for attr, node in declared.items():
        runtime = getattr(module, attr)
        if isinstance(node, ast.FunctionDef):
            _compare(f"{name}.{attr}", runtime, node, is_method=False)
        elif isinstance(node, ast.ClassDef):
            members = _stub_names(node.body)
            public = {m for m in members if not m.startswith("_")}
            assert public == _public_runtime(runtime), f"{name}.{attr}"
            for m, mnode in members.items():
                assert hasattr(runtime, m), f"{name}.{attr}.{m}"
                if isinstance(mnode, ast.FunctionDef) and not any(
                        isinstance(d, ast.Name) and d.id == "property" for d in mnode.decorator_list):
                    _compare(f"{name}.{attr}.{m}", getattr(runtime, m), mnode, is_method=True)
