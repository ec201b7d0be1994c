"""Import references resolved to files of the project, from its file list and build manifests.

A :class:`Resolver` is made from the project's files (root-relative paths)
and a ``read(path) -> str | None`` for the few manifests it needs
(``go.mod``/``go.work``, ``Cargo.toml``, ``tsconfig.json``, ``package.json``)
and for the ``package`` line of Java and Kotlin files.  ``resolve(path,
ref)`` gives the files a reference of ``path`` imports (empty when it is
third-party, a system header or otherwise outside the project).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections import defaultdict
from collections.abc import Callable, Iterable

from codelex.graph.extract import REF_FAMILY, ImportRef, graph_language, jvm_package

__all__ = ["MANIFESTS", "Resolver"]

#: Files whose content changes how imports resolve (an edit of one rebuilds the resolver).
MANIFESTS = frozenset({"go.mod", "go.work", "Cargo.toml", "tsconfig.json", "jsconfig.json", "package.json"})
_JS_EXTS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")


def _strip_json_comments(text: str) -> str:
    """JSON with ``//`` and ``/* */`` comments and trailing commas (tsconfig's dialect) as plain JSON."""
    out, i, n, in_str = [], 0, len(text), False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        else:
            out.append(c)
        i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def _json(text: str | None):
    """A manifest's JSON, or None when it is not JSON (or nested too deeply to parse: that manifest is skipped)."""
    if not text:
        return None
    try:
        return json.loads(_strip_json_comments(text))
    except (ValueError, RecursionError):  # (json recurses once per nested array or object)
        return None


class Resolver:
    """Resolves :class:`ImportRef` s of one project (see the module docstring)."""

    def __init__(self, files: Iterable[str], read: Callable[[str], str | None]) -> None:
        self.files = set(files)
        self._read = read
        by_dir: dict[str, list[str]] = defaultdict(list)
        for f in self.files:
            by_dir[posixpath.dirname(f)].append(f)
        self._by_dir = by_dir
        self._python_modules()
        self._go_modules()
        self._rust_crates()
        self._js_config()
        self._jvm_index()
        self._c_dirs()
        # One resolver per import family (codelex.languages.IMPORT_FAMILIES).
        self._by_family = {"python": self._python, "jsts": self._js,
                           "go": lambda path, ref: self._go_resolve(ref.spec), "rust": self._rust, "jvm": self._jvm,
                           "c": self._c}

    # --- Python ---------------------------------------------------------------

    def _python_modules(self) -> None:
        """Dotted module name -> file, for every source root: the tree's top and each directory that is
        not itself a package (``src/`` layouts; namespace packages have no ``__init__.py`` anywhere)."""
        modules: dict[str, str] = {}
        for f in sorted(self.files, key=lambda p: (p.count("/"), p)):
            if not f.endswith((".py", ".pyi")):
                continue
            stem = f[: -len(".pyi")] if f.endswith(".pyi") else f[:-3]
            parts = stem.split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if not parts or not all(p.isidentifier() for p in parts):
                continue
            for start in range(len(parts)):
                name = ".".join(parts[start:])
                if f.endswith(".pyi") and name in modules and modules[name].endswith(".py"):
                    continue  # the module itself over its stub
                modules.setdefault(name, f)
        self._py = modules

    def _python(self, path: str, ref: ImportRef) -> list[str]:
        if ref.level:
            parts = posixpath.dirname(path).split("/") if posixpath.dirname(path) else []
            if ref.level - 1 > len(parts):
                return []
            base = parts[: len(parts) - (ref.level - 1)]
            stem_parts = base + (ref.spec.split(".") if ref.spec else [])
            found = []
            for name in ref.names:
                target = self._py_path(stem_parts + [name])
                if target:
                    found.append(target)
            target = self._py_path(stem_parts) if stem_parts else None
            if target and (not found or ref.spec):
                found.append(target)
            return found
        if ref.names:  # from a.b import c: the submodule a.b.c, else the module a.b
            found = [t for t in (self._py.get(f"{ref.spec}.{n}") for n in ref.names) if t]
            module = self._py.get(ref.spec)
            if module and (not found or len(found) < len(ref.names)):
                found.append(module)
            return found
        name = ref.spec
        while name:  # import a.b.c names a.b.c (and loads a, a.b): the deepest module that exists
            if name in self._py:
                return [self._py[name]]
            name = name.rpartition(".")[0]
        return []

    def _py_path(self, parts: list[str]) -> str | None:
        stem = "/".join(parts)
        for candidate in (f"{stem}.py", f"{stem}/__init__.py", f"{stem}.pyi", f"{stem}/__init__.pyi"):
            if candidate in self.files:
                return candidate
        return None

    # --- Go -------------------------------------------------------------------

    def _go_modules(self) -> None:
        # go.mod is no source file (not indexed): look for one in every directory holding Go files and above.
        dirs: set[str] = set()
        for f in self.files:
            if f.endswith(".go"):
                d = posixpath.dirname(f)
                while d not in dirs:
                    dirs.add(d)
                    if not d:
                        break
                    d = posixpath.dirname(d)
        mods: list[tuple[str, str]] = []
        for d in sorted(dirs):
            text = self._read(posixpath.join(d, "go.mod") if d else "go.mod")
            m = re.search(r"^\s*module\s+(\S+)", text or "", re.M)
            if m:
                mods.append((m.group(1).strip('"'), d))
        # A module path that is a prefix of another's must not shadow it: longest first.
        self._go = sorted(mods, key=lambda x: -len(x[0]))
        self._go_packages: dict[str, list[str]] = {}

    def _go_package(self, directory: str) -> list[str]:
        found = self._go_packages.get(directory)
        if found is None:  # a package is imported from many files: list its files once
            found = sorted(f for f in self._by_dir.get(directory, ()) if f.endswith(".go") and not f.endswith("_test.go"))
            self._go_packages[directory] = found
        return found

    def _go_resolve(self, spec: str) -> list[str]:
        for module, directory in self._go:
            if spec == module or spec.startswith(module + "/"):
                rest = spec[len(module):].lstrip("/")
                return self._go_package(posixpath.join(directory, rest) if rest else directory)
        # GOROOT's own tree (Go's src/): a standard import path is a directory under the root.
        return self._go_package(spec) if not self._go or "." not in spec.split("/")[0] else []

    # --- Rust -----------------------------------------------------------------

    def _rust_crates(self) -> None:
        crates: dict[str, str] = {}  # crate name -> its root module file
        for f in self.files:
            if posixpath.basename(f) != "Cargo.toml":
                continue
            text = self._read(f) or ""
            m = re.search(r"^\[package\][^\[]*?^\s*name\s*=\s*\"([^\"]+)\"", text, re.M | re.S)
            base = posixpath.dirname(f)
            root = next((c for c in (posixpath.join(base, "src/lib.rs"), posixpath.join(base, "src/main.rs"))
                         if c in self.files), None)
            if m and root:
                crates[m.group(1).replace("-", "_")] = root
        self._crates = crates

    def _crate_root_of(self, path: str) -> str | None:
        best = None
        for root in self._crates.values():
            src = posixpath.dirname(root)
            if (path == root or path.startswith(src + "/")) and (best is None or len(root) > len(best)):
                best = root
        if best is None:
            for name in ("src/lib.rs", "src/main.rs", "lib.rs", "main.rs"):
                d = path
                while d:
                    d = posixpath.dirname(d)
                    cand = posixpath.join(d, name) if d else name
                    if cand in self.files:
                        return cand
        return best

    def _module_dir(self, path: str) -> str:
        """Where the submodules of the module in ``path`` live."""
        base = posixpath.basename(path)
        if base in ("mod.rs", "lib.rs", "main.rs"):
            return posixpath.dirname(path)
        return path[:-3]

    def _rs_module_file(self, directory: str, name: str) -> str | None:
        for cand in (posixpath.join(directory, f"{name}.rs"), posixpath.join(directory, name, "mod.rs")):
            if cand in self.files:
                return cand
        return None

    def _rs_walk(self, start_file: str, segments: list[str]) -> str | None:
        """The deepest module file reached from ``start_file``'s module along ``segments``."""
        current = start_file
        for seg in segments:
            nxt = self._rs_module_file(self._module_dir(current), seg)
            if nxt is None:
                break
            current = nxt
        return current

    def _rs_parent(self, path: str) -> str | None:
        root = self._crate_root_of(path)
        if root is None or path == root:
            return None
        directory = posixpath.dirname(path)
        if posixpath.basename(path) == "mod.rs":
            directory = posixpath.dirname(directory)
        if directory == posixpath.dirname(root):
            return root
        parent_name = posixpath.basename(directory)
        up = posixpath.dirname(directory)
        return self._rs_module_file(up, parent_name) or root

    def _rust(self, path: str, ref: ImportRef) -> list[str]:
        if ref.lang == "rs-mod":
            target = self._rs_module_file(self._module_dir(path), ref.spec)
            return [target] if target else []
        segs = [s for s in ref.spec.split("::") if s]
        if not segs:
            return []
        head = segs[0]
        if head == "crate":
            start = self._crate_root_of(path)
            segs = segs[1:]
        elif head in ("self", "super"):
            start = path
            while segs and segs[0] in ("self", "super"):
                if segs[0] == "super":
                    start = self._rs_parent(start) if start else None
                segs = segs[1:]
        elif head in self._crates:
            start = self._crates[head]
            segs = segs[1:]
        else:
            return []  # a dependency, or an item of the current module
        if start is None:
            return []
        target = self._rs_walk(start, segs)
        return [target] if target and target != path else []

    # --- JavaScript / TypeScript ---------------------------------------------

    def _js_config(self) -> None:
        self._tsconfigs: dict[str, tuple[str, dict[str, list[str]]]] = {}  # dir -> (baseUrl dir, paths)
        self._packages: dict[str, str] = {}  # workspace package name -> its directory
        for f in self.files:
            base = posixpath.basename(f)
            d = posixpath.dirname(f)
            if base in ("tsconfig.json", "jsconfig.json"):
                cfg = _json(self._read(f))
                opts = cfg.get("compilerOptions", {}) if isinstance(cfg, dict) else {}
                if not isinstance(opts, dict):
                    continue
                base_url = opts.get("baseUrl")
                paths = opts.get("paths") if isinstance(opts.get("paths"), dict) else {}
                if isinstance(base_url, str) or paths:
                    url_dir = posixpath.normpath(posixpath.join(d, base_url)) if isinstance(base_url, str) else d
                    self._tsconfigs[d] = ("" if url_dir == "." else url_dir,
                                          {k: [v for v in vs if isinstance(v, str)] for k, vs in paths.items()
                                           if isinstance(k, str) and isinstance(vs, list)})
            elif base == "package.json":
                pkg = _json(self._read(f))
                if isinstance(pkg, dict) and isinstance(pkg.get("name"), str) and d:
                    self._packages[pkg["name"]] = d

    def _js_file(self, stem: str) -> str | None:
        stem = posixpath.normpath(stem)
        if stem.startswith("../") or stem == "..":
            return None
        stem = "" if stem == "." else stem
        if stem in self.files:
            return stem
        if stem.endswith((".js", ".mjs", ".cjs", ".jsx")):  # './x.js' written for x.ts (TypeScript's ESM style)
            bare = stem.rsplit(".", 1)[0]
            for ext in (".ts", ".tsx", ".mts", ".cts"):
                if bare + ext in self.files:
                    return bare + ext
        for ext in _JS_EXTS:
            if stem + ext in self.files:
                return stem + ext
        for ext in _JS_EXTS:
            cand = posixpath.join(stem, "index" + ext) if stem else "index" + ext
            if cand in self.files:
                return cand
        return None

    def _js(self, path: str, ref: ImportRef) -> list[str]:
        spec = ref.spec.split("?")[0]
        here = posixpath.dirname(path)
        if spec.startswith("."):
            target = self._js_file(posixpath.join(here, spec))
            return [target] if target else []
        cfg_dir = here
        while True:  # the nearest tsconfig above the file
            cfg = self._tsconfigs.get(cfg_dir)
            if cfg is not None:
                base_url, paths = cfg
                for pattern, targets in paths.items():
                    if pattern.endswith("*") and spec.startswith(pattern[:-1]):
                        rest = spec[len(pattern) - 1:]
                    elif pattern == spec:
                        rest = ""
                    else:
                        continue
                    for t in targets:
                        found = self._js_file(posixpath.join(base_url, t.replace("*", rest)))
                        if found:
                            return [found]
                found = self._js_file(posixpath.join(base_url, spec)) if base_url or paths else None
                if found:
                    return [found]
                break
            if not cfg_dir:
                break
            cfg_dir = posixpath.dirname(cfg_dir)
        name, _, sub = spec.partition("/")
        if spec.startswith("@"):
            scope_name = "/".join(spec.split("/")[:2])
            name, sub = scope_name, "/".join(spec.split("/")[2:])
        directory = self._packages.get(name)
        if directory is not None:
            if sub:
                found = self._js_file(posixpath.join(directory, sub)) or \
                    self._js_file(posixpath.join(directory, "src", sub))
            else:
                found = self._package_entry(directory)
            return [found] if found else []
        return []

    def _package_entry(self, directory: str) -> str | None:
        pkg = _json(self._read(posixpath.join(directory, "package.json"))) or {}
        for key in ("source", "module", "main", "types"):
            value = pkg.get(key) if isinstance(pkg, dict) else None
            if isinstance(value, str):
                found = self._js_file(posixpath.join(directory, value))
                if found:
                    return found
        return self._js_file(posixpath.join(directory, "src", "index")) or self._js_file(directory)

    # --- Java / Kotlin ------------------------------------------------------

    def _jvm_index(self) -> None:
        classes: dict[str, str] = {}
        packages: dict[str, list[str]] = defaultdict(list)
        for f in sorted(self.files):
            if graph_language(f) != "jvm":
                continue
            pkg = jvm_package(self._read(f) or "")
            if pkg is None:  # no declaration: the default package, or a path under a source root
                pkg = ""
            stem = posixpath.basename(f).rsplit(".", 1)[0]
            classes.setdefault(f"{pkg}.{stem}" if pkg else stem, f)
            packages[pkg].append(f)
        self._classes, self._jvm_packages = classes, packages

    def _jvm(self, path: str, ref: ImportRef) -> list[str]:
        spec = ref.spec
        if spec.endswith(".*"):
            return [f for f in self._jvm_packages.get(spec[:-2], []) if f != path]
        name = spec
        while name:  # a.b.C.Inner: the file of the outermost class that exists
            if name in self._classes:
                return [self._classes[name]]
            name = name.rpartition(".")[0]
        return []

    # --- C / C++ --------------------------------------------------------------

    def _c_dirs(self) -> None:
        dirs: set[str] = set()
        for f in self.files:
            d = posixpath.dirname(f)
            while d and d not in dirs:
                dirs.add(d)
                d = posixpath.dirname(d)
        include = sorted({d for d in dirs if posixpath.basename(d) == "include"} |
                         {d for d in dirs if d.endswith("/include/uapi") or d == "include/uapi"})
        self._include_dirs = include + [""]
        self._c_cache: dict[str, str] = {}

    def _c(self, path: str, ref: ImportRef) -> list[str]:
        spec = ref.spec
        if ref.level == 0:
            here = path.rpartition("/")[0]
            cand = f"{here}/{spec}" if here else spec
            if "./" in spec or spec.startswith("/"):
                cand = posixpath.normpath(posixpath.join(here, spec))
            if cand in self.files:
                return [cand]
        # The same headers are included from everywhere: one search of the include directories per name.
        hit = self._c_cache.get(spec)
        if hit is None:
            hit = ""
            plain = "./" not in spec and not spec.startswith("/")
            for d in self._include_dirs:
                if plain:
                    cand = f"{d}/{spec}" if d else spec
                else:
                    cand = posixpath.normpath(posixpath.join(d, spec)) if d else posixpath.normpath(spec)
                if cand in self.files:
                    hit = cand
                    break
            self._c_cache[spec] = hit
        return [hit] if hit else []

    # --- dispatch -------------------------------------------------------------

    def resolve(self, path: str, ref: ImportRef) -> list[str]:
        """The project files ``ref`` (a reference of ``path``) imports; empty when none is in the project."""
        method = self._by_family.get(REF_FAMILY.get(ref.lang))
        if method is None:
            return []
        found = method(path, ref)
        if len(found) <= 1:  # the common case: no duplicates to drop
            return found if not found or found[0] != path else []
        return [f for f in dict.fromkeys(found) if f != path]
