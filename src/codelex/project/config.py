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
    List of gitignore-style patterns: when given, only the files matching one are indexed (an
    empty list is refused: remove the key to index everything).
``max_bytes``
    Files larger than this many bytes are skipped (an integer >= 0).
``max_files``
    Cap on indexed files, code first (an integer >= 0).
``languages``
    List of kinds (or their short names: ``py``, ``ts``, ``rs`` ...) to index; others are skipped.
``embedder``
    The embedder of hybrid search: a named, installed model (``minilm-int8``, ``minilm``;
    :data:`codelex.dense.embedders.NAMED_EMBEDDERS`).  Never a model folder
    (``onnx:PATH``, ``st:PATH``, ``model2vec:PATH``): a repository would choose which files
    a model library reads, and some load code from their folder.  A folder
    comes from the user: ``--embedder``, the ``embedder`` argument of the
    API, or ``$CODELEX_EMBEDDER``.
``fusion``
    ``adaptive`` (the default), ``shape``, ``original`` or ``vector`` (the vector half alone).
``embed_limit``
    Chunks embedded for hybrid search at most (an integer >= 0; default
    :data:`codelex.defaults.DEFAULT_EMBED_LIMIT`): source files first, then
    tests and examples, then documentation and data; past it the vector
    half ranks the chunks it has.

A ``.codelexignore`` file at the root (gitignore syntax, as ripgrep's ``.ignore``) adds its patterns to
``ignore``.  Arguments given to :class:`codelex.Project` (and CLI options) override every file.

A file that is not valid TOML, an unknown key or a bad value (a pattern that cannot compile or can never
match, ``"[z-a]"``, ``"\\"``, ``"["``) is a :class:`~codelex.errors.ConfigError` naming the file and the key.
So is a configuration file that is no regular file (a FIFO is refused, never waited for), a symbolic link
(not followed: the checkout is not trusted), larger than :data:`MAX_CONFIG_BYTES` or nested too deeply to
parse.  A ``.codelexignore`` line that cannot compile is dropped (as git drops such lines of an ignore file).

:func:`load_config` re-reads the files only when their ``lstat`` changed (:func:`config_signature`), so a
long-lived caller asks it on every request and follows edits of the configuration.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from codelex.defaults import EMBEDDER_ENV, INDEX_DIR_NAME
from codelex.persist.layout import local_dir_refusal
from codelex.errors import ConfigError, UnsafePathError
from codelex.safefs import NotRegularFileError, read_bytes

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["CONFIG_FILES", "CONFIG_KEYS", "IGNORE_FILE", "MAX_CONFIG_BYTES", "check_patterns", "config_signature",
           "is_settings_file", "load_config"]

#: The settings read, with what their values must be.
CONFIG_KEYS = {
    "ignore": "a list of strings",
    "include": "a list of strings",
    "max_bytes": "an integer >= 0",
    "max_files": "an integer >= 0",
    "languages": "a list of language names",
    "embedder": "the name of an installed model (minilm, minilm-int8)",
    "fusion": "one of: adaptive, shape, original, vector",
    "embed_limit": "an integer >= 0 (chunks embedded at most, source files first)",
}
#: The ignore file read at the root, in gitignore syntax.
IGNORE_FILE = ".codelexignore"
#: Every file read, relative to the root, in the order read (later ones override earlier ones).
CONFIG_FILES = ("pyproject.toml", ".codelex.toml", f"{INDEX_DIR_NAME}/config.toml", IGNORE_FILE)
#: Larger configuration files are refused (a ConfigError), never read whole.
MAX_CONFIG_BYTES = 8 * 1024 * 1024
_TABLES = {"pyproject.toml": ("tool", "codelex")}
_FUSIONS = ("adaptive", "shape", "original", "vector")


def _read_raw(root: Path, rel: str) -> bytes | None:
    """The bytes of the configuration file ``rel``; None when it does not exist; ConfigError when refused."""
    file = root / rel
    try:
        data, _ = read_bytes(root, rel, MAX_CONFIG_BYTES)
    except FileNotFoundError:
        return None
    except UnsafePathError:
        where = "a symbolic link" if os.path.islink(file) else "reached through a symbolic link"
        raise ConfigError(f"{file}: {where} (codelex follows none in a checkout)") from None
    except NotRegularFileError:
        raise ConfigError(f"{file}: not a regular file") from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot be read: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{file}: larger than {MAX_CONFIG_BYTES // (1024 * 1024)} MiB")
    return data


def _read(root: Path, rel: str) -> dict | None:
    data = _read_raw(root, rel)
    if data is None:
        return None
    file = root / rel
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:  # (found by fuzzing: tomllib decodes before it parses)
        raise ConfigError(f"{file}: not valid TOML: not UTF-8 at byte {exc.start}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise ConfigError(f"{file}: nested too deeply to parse") from None


def _read_ignore(root: Path) -> list[str] | None:
    from codelex.ingest.ignore import usable_lines

    data = _read_raw(root, IGNORE_FILE)
    if data is None:
        return None
    text = data.decode("utf-8", "surrogateescape")
    lines = [line.rstrip("\r") for line in text.split("\n") if line.strip() and not line.lstrip().startswith("#")]
    return usable_lines(lines)  # an ignore file follows git: a line that cannot compile is dropped, not an error


def _signature(file: str) -> tuple | None:
    try:
        st = os.lstat(file)
    except OSError:
        return None
    # The type and inode too: a file replaced by a link or a FIFO, or renamed over, is another file.
    return st.st_mode, st.st_ino, st.st_mtime_ns, st.st_size, st.st_ctime_ns


def config_signature(root: str | os.PathLike[str]) -> tuple:
    """What :func:`load_config`'s answer depends on: the ``lstat`` of each of :data:`CONFIG_FILES` (cheap).

    Searches ask it on every call: strings, not paths, keep it a few microseconds.
    """
    prefix = os.path.join(os.fspath(root), "")
    return tuple(_signature(prefix + rel) for rel in CONFIG_FILES)


def is_settings_file(rel: str) -> bool:
    """Whether a change of the root-relative file ``rel`` may change what a project indexes.

    True for the configuration files (:data:`CONFIG_FILES`) and for every
    ``.gitignore`` (outside ``.git/``).
    """
    if rel in CONFIG_FILES or rel == ".gitignore":
        return True
    return rel.endswith("/.gitignore") and not rel.startswith(".git/")


#: By root: the signature the settings (or the error) were read with: a query stats, not parses.
_cache: dict[Path, tuple[tuple, dict | str]] = {}


def load_config(root: str | Path) -> dict:
    """The settings of the project at ``root`` (an empty dict when it has none).

    The result maps the keys of :data:`CONFIG_KEYS` that some source sets to
    their checked values (``languages`` as canonical kind names, paths made
    absolute), plus ``sources``: the files that contributed.  Files are
    parsed again only when :func:`config_signature` changed.

    Raises
    ------
    codelex.ConfigError
        For a file that cannot be read or parsed, is not a regular file, an
        unknown key or a bad value (the message names the file and the key).
    """
    root = Path(root)
    signature = config_signature(root)
    cached = _cache.get(root)
    if cached is None or cached[0] != signature:
        try:
            out: dict | str = _parse(root)
        except ConfigError as exc:  # kept too: a broken file is not parsed again on every request
            out = str(exc)
        if len(_cache) > 256:
            _cache.clear()
        _cache[root] = cached = (signature, out)
    if isinstance(cached[1], str):
        raise ConfigError(cached[1])  # a new exception each time (a re-raised one would grow its traceback)
    return _copy(cached[1])


def _copy(settings: dict) -> dict:
    return {k: list(v) if isinstance(v, list) else v for k, v in settings.items()}


def _parse(root: Path) -> dict:
    out: dict = {}
    sources: list[str] = []
    for rel in CONFIG_FILES[:-1]:
        file, table = root / rel, _TABLES.get(rel, ())
        if rel.startswith(INDEX_DIR_NAME + "/") and local_dir_refusal(root) is not None:
            continue  # an index directory codelex will not use (another user's, a link, a file): not ours to read
        data = _read(root, rel)
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
    extra = _read_ignore(root)
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
        if key in ("include", "languages") and not value:
            # Read as "no restriction", an empty list would index everything: the opposite of what it says.
            raise ConfigError(f"{file}: {key} is empty: list what to index, or remove the key to index everything")
        if key != "languages":
            try:
                check_patterns(value, key)
            except ValueError as exc:
                raise ConfigError(f"{file}: {exc}") from None
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
    if key in ("max_bytes", "max_files", "embed_limit"):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise bad()
        return value
    if not isinstance(value, str) or not value:
        raise bad()
    if key == "fusion":
        if value not in _FUSIONS:
            raise bad()
        return value
    # key == "embedder": a name, never a path (see the module docstring)
    from codelex.dense.embedders import NAMED_EMBEDDERS

    if value in NAMED_EMBEDDERS:
        return value
    shown = value if len(value) <= 200 else value[:200] + "..."
    if ":" in value or "/" in value or os.sep in value:
        raise ConfigError(f"{file}: embedder: {shown!r} is a model path; a repository's configuration may name "
                          f"only an installed model ({', '.join(NAMED_EMBEDDERS)}): a model folder comes from the "
                          f"command line (--embedder), the API (embedder=) or the user's environment "
                          f"(${EMBEDDER_ENV})")
    raise ConfigError(f"{file}: embedder: unknown model {shown!r} (named models: {', '.join(NAMED_EMBEDDERS)})")


def check_patterns(patterns, key: str) -> None:
    """Raise ``ValueError("KEY: bad pattern 'P': reason")`` for the first pattern that is no usable one.

    For patterns a person wrote for codelex (``ignore``, ``include``), where
    a pattern that cannot compile or never matches is a mistake to report;
    see :func:`codelex.ingest.ignore.pattern_error`.
    """
    from codelex.ingest.ignore import pattern_error

    for pattern in patterns:
        why = pattern_error(pattern)
        if why is not None:
            shown = pattern if len(pattern) <= 200 else pattern[:200] + "..."
            raise ValueError(f"{key}: bad pattern {shown!r}: {why}")
