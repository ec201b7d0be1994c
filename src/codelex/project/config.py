"""A project's own settings: ``[tool.codelex]`` in ``pyproject.toml``, then ``.codelex/config.toml``.

Keys (all optional): ``embedder`` (``minilm``, ``st:PATH``, ``model2vec:PATH``;
a relative PATH is taken from the root) and ``fusion`` (``shape`` or
``original``).  The second file overrides the first.  A file that is not
valid TOML, or a key of the wrong type, is a :class:`~codelex.errors.ConfigError`;
unknown keys are ignored, so newer settings do not break older versions.
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

__all__ = ["CONFIG_KEYS", "load_config"]

#: The settings read, with their types.
CONFIG_KEYS = {"embedder": str, "fusion": str}


def _read(file: Path) -> dict:
    try:
        with open(file, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot be read: {exc}") from None


def _signature(file: Path) -> tuple | None:
    try:
        st = file.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


#: Parsed settings by root, with the files' (mtime, size) they were read from: a query stats, not parses.
_cache: dict[Path, tuple[tuple, dict]] = {}


def load_config(root: str | Path) -> dict:
    """The settings of the project at ``root`` (an empty dict when it has none)."""
    root = Path(root)
    sources = [(root / "pyproject.toml", ("tool", "codelex")), (root / INDEX_DIR_NAME / "config.toml", ())]
    signature = tuple(_signature(file) for file, _ in sources)
    cached = _cache.get(root)
    if cached is not None and cached[0] == signature:
        return dict(cached[1])
    out = _parse(root, sources)
    _cache[root] = (signature, out)
    return dict(out)


def _parse(root: Path, sources) -> dict:
    out: dict = {}
    for file, table in sources:
        data = _read(file)
        for key in table:
            data = data.get(key, {}) if isinstance(data, dict) else {}
        if not isinstance(data, dict):
            raise ConfigError(f"{file}: [{'.'.join(table)}] must be a table")
        for key, kind in CONFIG_KEYS.items():
            if key in data:
                if not isinstance(data[key], kind):
                    raise ConfigError(f"{file}: {key} must be a {kind.__name__}, not {type(data[key]).__name__}")
                out[key] = data[key]
    emb = out.get("embedder")
    if isinstance(emb, str) and ":" in emb:
        kind, _, rest = emb.partition(":")
        if rest and not Path(rest).is_absolute():
            out["embedder"] = f"{kind}:{root / rest}"
    return out
