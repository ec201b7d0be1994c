"""A project's own settings: ``[tool.codelex]`` in ``pyproject.toml``, a ``.codelex.toml``, a ``.codelexignore``.

Read from the project root, later sources overriding earlier ones key by key:

1. ``pyproject.toml``, table ``[tool.codelex]``;
2. ``.codelex.toml`` (top-level keys);
3. ``.codelex/config.toml`` (top-level keys; beside the index, not meant to be committed).

Keys (all optional):

``ignore``
    List of gitignore-style patterns (relative to the root) never to index, on top of the
    repository's own ignore files.
``include``
    List of gitignore-style patterns: when given, only the files matching one are indexed.
``max_bytes``
    Files larger than this many bytes are skipped (an integer >= 0).
``max_files``
    Cap on indexed files, code first (an integer >= 0).
``languages``
    List of kinds (or their short names: ``py``, ``ts``, ``rs`` ...) to index; others are skipped.
``embedder``
    The embedder of hybrid search: ``minilm``, ``st:PATH`` or ``model2vec:PATH`` (a relative PATH is
    taken from the root).
``fusion``
    ``shape`` or ``original``.

A ``.codelexignore`` file at the root (gitignore syntax, as ripgrep's ``.ignore``) adds its patterns to
``ignore``.  Arguments given to :class:`codelex.Project` (and CLI options) override every file.

A file that is not valid TOML, an unknown key or a bad value is a :class:`~codelex.errors.ConfigError`
naming the file and the key.
"""

from __future__ import annotations

import sys
from pathlib import Path

from codelex.defaults import INDEX_DIR_NAME
from codelex.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["CONFIG_KEYS", "IGNORE_FILE", "load_config"]

#: The settings read, with what their values must be.
CONFIG_KEYS = {
    "ignore": "a list of strings",
    "include": "a list of strings",
    "max_bytes": "an integer >= 0",
    "max_files": "an integer >= 0",
    "languages": "a list of language names",
    "embedder": "a string (minilm, st:PATH or model2vec:PATH)",
    "fusion": "one of: shape, original",
}
#: The ignore file read at the root, in gitignore syntax.
IGNORE_FILE = ".codelexignore"
_FUSIONS = ("shape", "original")


def _read(file: Path) -> dict | None:
    try:
        with open(file, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        return None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:  # (found by fuzzing: tomllib decodes before it parses)
        raise ConfigError(f"{file}: not valid TOML: not UTF-8 at byte {exc.start}") from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot be read: {exc}") from None


def _read_ignore(file: Path) -> list[str] | None:
    try:
        with open(file, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot be read: {exc}") from None
    return [line.rstrip("\r") for line in text.split("\n") if line.strip() and not line.lstrip().startswith("#")]


def _signature(file: Path) -> tuple | None:
    try:
        st = file.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


#: Parsed settings by root, with the files' (mtime, size) they were read from: a query stats, not parses.
_cache: dict[Path, tuple[tuple, dict]] = {}


def _sources(root: Path) -> list[tuple[Path, tuple[str, ...]]]:
    return [(root / "pyproject.toml", ("tool", "codelex")), (root / ".codelex.toml", ()),
            (root / INDEX_DIR_NAME / "config.toml", ())]


def load_config(root: str | Path) -> dict:
    """The settings of the project at ``root`` (an empty dict when it has none).

    The result maps the keys of :data:`CONFIG_KEYS` that some source sets to
    their checked values (``languages`` as canonical kind names, paths made
    absolute), plus ``sources``: the files that contributed.

    Raises
    ------
    codelex.ConfigError
        For a file that cannot be read or parsed, an unknown key or a bad value.
    """
    root = Path(root)
    files = [file for file, _ in _sources(root)] + [root / IGNORE_FILE]
    signature = tuple(_signature(file) for file in files)
    cached = _cache.get(root)
    if cached is not None and cached[0] == signature:
        return _copy(cached[1])
    out = _parse(root)
    _cache[root] = (signature, out)
    return _copy(out)


def _copy(settings: dict) -> dict:
    return {k: list(v) if isinstance(v, list) else v for k, v in settings.items()}


def _parse(root: Path) -> dict:
    out: dict = {}
    sources: list[str] = []
    for file, table in _sources(root):
        data = _read(file)
        if data is None:
            continue
        name = f"[{'.'.join(table)}]" if table else "the file"
        for key in table:
            data = data.get(key) if isinstance(data, dict) else None
            if data is None:
                break
        if data is None:
            continue  # e.g. a pyproject.toml without [tool.codelex]
        if not isinstance(data, dict):
            raise ConfigError(f"{file}: {name} must be a table")
        for key, value in data.items():
            out[key] = _check(file, key, value, root)
        sources.append(str(file))
    extra = _read_ignore(root / IGNORE_FILE)
    if extra is not None:
        out["ignore"] = list(out.get("ignore", [])) + extra
        sources.append(str(root / IGNORE_FILE))
    if sources:
        out["sources"] = sources
    return out


def _check(file: Path, key: str, value, root: Path):
    if key not in CONFIG_KEYS:
        raise ConfigError(f"{file}: unknown key {key!r} (known: {', '.join(CONFIG_KEYS)})")

    def bad() -> ConfigError:
        return ConfigError(f"{file}: {key} must be {CONFIG_KEYS[key]}, not {value!r}")

    if key in ("ignore", "include", "languages"):
        if not isinstance(value, list) or any(not isinstance(v, str) for v in value):
            raise bad()
        if key == "languages":
            from codelex.kinds import canonical_kind, supported_kinds

            kinds = []
            for v in value:
                kind = canonical_kind(v)
                if kind is None:
                    raise ConfigError(f"{file}: languages: unknown language {v!r} (supported: {supported_kinds()})")
                kinds.append(kind)
            return sorted(set(kinds))
        return list(value)
    if key in ("max_bytes", "max_files"):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise bad()
        return value
    if not isinstance(value, str) or not value:
        raise bad()
    if key == "fusion":
        if value not in _FUSIONS:
            raise bad()
        return value
    kind, sep, rest = value.partition(":")
    if sep and rest and not Path(rest).is_absolute():
        return f"{kind}:{root / rest}"
    return value
