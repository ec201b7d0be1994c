"""Registering codelex's MCP server with an agent client: ``codelex mcp install|uninstall CLIENT``.

One table, :data:`CLIENTS`: each client's name and aliases, the file that holds its MCP servers for each
scope it has (``user``: every project; ``project``: the project of the current directory), that file's
format and the object our entry goes in, and the documentation the shape was checked against.

The registered command runs *this* installation: the absolute path of the running interpreter with
``-P -m codelex mcp`` (and ``--root DIR`` for each root named), so the client starts the codelex of the
environment it was installed into, never whichever ``codelex`` its ``PATH`` finds first.

A client's configuration file is the user's, and may hold anything: it is read as hostile input and
edited in place, never re-serialized.  A JSON file is parsed (strictly; with ``//`` and ``/* */``
comments and trailing commas only for clients whose files are JSONC, VS Code's and Zed's) by a parser
that records where each member lies, and only our entry's text is written, replaced or removed: every
other byte, comments and formatting included, stays as it was.  A TOML file (Codex) is read with
``tomllib`` and our ``[mcp_servers.NAME]`` table is edited, appended or removed as text.  An entry of
ours already there keeps every key but ours (``command``, ``args``, ``type``: the user's ``env`` or
timeouts stay); an entry of that name that is not codelex's is neither replaced nor removed without
``force``.  Either way the edited text is parsed again and must hold exactly what was there, with our
entry added, updated or removed;
anything else (a malformed file, an entry written in a form this module does not edit) is a
:class:`~codelex.errors.ClientConfigError` carrying the snippet to add by hand, and the file is left
untouched.  Files are read through :mod:`codelex.safefs` (a symbolic link or a FIFO is refused) and
replaced atomically (a temporary file in the same directory, fsynced, renamed over the original, which
must not have changed meanwhile), with the original's mode; a new user file is owner-only.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import re
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from codelex.errors import ClientConfigError, UnsafePathError

__all__ = ["CLIENTS", "SCOPES", "Change", "Client", "client_named", "install", "server_command", "uninstall"]

SCOPES = ("user", "project")
#: A client's configuration larger than this is refused (``~/.claude.json`` holds Claude Code's history: MBs).
_MAX_BYTES = 64 << 20
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
#: The keys of an entry that are codelex's: an update sets these and keeps every other key the user added.
_OWNED = ("type", "command", "args")


def _home() -> Path:
    return Path.home()


def _config_home() -> Path:
    """Linux's ``$XDG_CONFIG_HOME`` (Electron's and Zed's user configuration live under it), else ``~/.config``."""
    raw = os.environ.get("XDG_CONFIG_HOME", "")
    return Path(raw) if raw and os.path.isabs(raw) else _home() / ".config"


def _vscode_user() -> Path:
    # VS Code's user profile folder, where "MCP: Open User Configuration" keeps mcp.json.
    if sys.platform == "darwin":
        return _home() / "Library" / "Application Support" / "Code" / "User" / "mcp.json"
    if os.name == "nt":
        return Path(os.environ.get("APPDATA") or _home() / "AppData" / "Roaming") / "Code" / "User" / "mcp.json"
    return _config_home() / "Code" / "User" / "mcp.json"


def _zed_user() -> Path:
    # https://zed.dev/docs/configuring-zed: ~/.config/zed/settings.json on macOS and Linux ($XDG_CONFIG_HOME
    # on Linux), %APPDATA%\Zed\settings.json on Windows.
    if os.name == "nt":
        return Path(os.environ.get("APPDATA") or _home() / "AppData" / "Roaming") / "Zed" / "settings.json"
    if sys.platform == "darwin":
        return _home() / ".config" / "zed" / "settings.json"
    return _config_home() / "zed" / "settings.json"


def _codex_home() -> Path:
    # Codex reads $CODEX_HOME/config.toml, ~/.codex when unset.
    raw = os.environ.get("CODEX_HOME", "")
    return Path(raw) if raw and os.path.isabs(raw) else _home() / ".codex"


def _stdio(command: str, args: list[str]) -> dict:
    return {"type": "stdio", "command": command, "args": args}


def _plain(command: str, args: list[str]) -> dict:
    return {"command": command, "args": args}


def _zed(command: str, args: list[str]) -> dict:
    return {"command": command, "args": args, "env": {}}


@dataclass(frozen=True)
class Client:
    """An MCP client codelex registers with: where its servers live and in what shape."""

    name: str
    title: str
    aliases: tuple[str, ...]
    #: scope -> the file, given the project root (``project``) or not (``user``).
    files: dict[str, Callable[[Path], Path]]
    default_scope: str
    #: The object (a top-level key) that maps server names to their entries.
    container: str
    entry: Callable[[str, list[str]], dict]
    format: str = "json"  # "json" or "toml"
    jsonc: bool = False  # the client reads its file as JSON with comments and trailing commas
    docs: tuple[str, ...] = field(default=())


CLIENTS: tuple[Client, ...] = (
    # https://code.claude.com/docs/en/mcp (MCP installation scopes): project scope is .mcp.json at the
    # project root, user scope the top-level "mcpServers" of ~/.claude.json; stdio entries are
    # {"type": "stdio", "command", "args", "env"}.
    Client("claude", "Claude Code", ("claude-code", "claudecode"),
           {"user": lambda root: _home() / ".claude.json", "project": lambda root: root / ".mcp.json"},
           "user", "mcpServers", _stdio, docs=("https://code.claude.com/docs/en/mcp",)),
    # https://cursor.com/docs/mcp (and docs.cursor.com/context/model-context-protocol): ~/.cursor/mcp.json
    # for every project, .cursor/mcp.json in a project; "mcpServers" with command, args, env.
    Client("cursor", "Cursor", (),
           {"user": lambda root: _home() / ".cursor" / "mcp.json", "project": lambda root: root / ".cursor" / "mcp.json"},
           "user", "mcpServers", _plain, docs=("https://cursor.com/docs/mcp",)),
    # https://developers.openai.com/codex/mcp and github.com/openai/codex docs/config.md (mcp_servers):
    # [mcp_servers.NAME] with command and args in ~/.codex/config.toml ($CODEX_HOME), or .codex/config.toml
    # in a project Codex trusts.
    Client("codex", "Codex", ("codex-cli", "openai-codex"),
           {"user": lambda root: _codex_home() / "config.toml", "project": lambda root: root / ".codex" / "config.toml"},
           "user", "mcp_servers", _plain, format="toml",
           docs=("https://developers.openai.com/codex/mcp", "https://github.com/openai/codex/blob/main/docs/config.md")),
    # https://code.visualstudio.com/docs/copilot/reference/mcp-configuration: .vscode/mcp.json in the
    # workspace or mcp.json in the user profile; a top-level "servers" object, stdio entries with
    # "type": "stdio", command, args.  VS Code reads it as JSONC.
    Client("vscode", "VS Code", ("code", "vs-code", "copilot"),
           {"user": lambda root: _vscode_user(), "project": lambda root: root / ".vscode" / "mcp.json"},
           "project", "servers", _stdio, jsonc=True,
           docs=("https://code.visualstudio.com/docs/copilot/reference/mcp-configuration",)),
    # https://docs.windsurf.com/windsurf/cascade/mcp: ~/.codeium/windsurf/mcp_config.json, the schema of
    # Claude Desktop's file ("mcpServers", command, args, env); no project file.
    Client("windsurf", "Windsurf", ("codeium", "cascade"),
           {"user": lambda root: _home() / ".codeium" / "windsurf" / "mcp_config.json"},
           "user", "mcpServers", _plain, docs=("https://docs.windsurf.com/windsurf/cascade/mcp",)),
    # https://zed.dev/docs/ai/mcp (custom servers: "context_servers" in settings.json, command, args, env)
    # and https://zed.dev/docs/configuring-zed (the user file; a project's .zed/settings.json; JSON with
    # comments).
    Client("zed", "Zed", ("zed-editor",),
           {"user": lambda root: _zed_user(), "project": lambda root: root / ".zed" / "settings.json"},
           "user", "context_servers", _zed, jsonc=True,
           docs=("https://zed.dev/docs/ai/mcp", "https://zed.dev/docs/configuring-zed")),
)


def client_named(text: str) -> Client:
    """The client called ``text`` (its name or an alias, any case).

    Raises
    ------
    codelex.ClientConfigError
        For a name no client has; the message lists them.
    """
    key = text.strip().lower()
    for client in CLIENTS:
        if key == client.name or key in client.aliases:
            return client
    raise ClientConfigError(f"unknown MCP client {text!r} (one of: {', '.join(c.name for c in CLIENTS)})")


#: The interpreter option that keeps the current directory off ``sys.path`` (see :func:`server_command`).
SAFE_PATH = ["-P"] if sys.version_info >= (3, 11) else ["-I"]


def server_command(roots=(), output_schemas: bool = False) -> tuple[str, list[str]]:
    """``(command, args)`` that start this installation's MCP server serving ``roots`` too (and publishing its
    output schemas, with ``output_schemas``: ``codelex mcp --output-schemas``).

    The interpreter's path is made absolute but not resolved: in a virtual environment it is a link to
    the base interpreter, and only the link's path runs with the environment's packages.  A client starts
    the server in a project's directory, and ``-m`` would put that directory first on ``sys.path``: a
    checkout's ``codelex/`` or ``json.py`` would run instead of ours.  ``-P`` (Python 3.11+) keeps it
    off; before 3.11, ``-I`` (which also leaves out the user site and ``PYTHONPATH``).

    Raises
    ------
    codelex.ClientConfigError
        A root that is not a directory.
    """
    command = os.path.abspath(sys.executable)
    args = [*SAFE_PATH, "-m", "codelex", "mcp", *(["--output-schemas"] if output_schemas else [])]
    for raw in roots:
        root = Path(raw).expanduser()
        try:
            root = root.resolve()
        except (OSError, RuntimeError) as exc:
            raise ClientConfigError(f"--root {raw}: {exc}") from None
        if not root.is_dir():
            raise ClientConfigError(f"--root {raw}: not a directory")
        try:
            str(root).encode("utf-8")
        except UnicodeEncodeError:  # (a name os.fsdecode could only escape): no client's file can hold it
            raise ClientConfigError(f"--root {raw!r}: its name is not UTF-8 text, which a client's "
                                    f"configuration cannot hold") from None
        from codelex.project.roots import refusal_reason

        refused = refusal_reason(root)
        if refused is not None:  # (the server would refuse it at every start)
            raise ClientConfigError(f"--root {raw}: {refused}")
        args += ["--root", str(root)]
    return command, args


@dataclass(frozen=True)
class Change:
    """What an install or uninstall did (or, with ``dry_run``, would do) to a client's file."""

    client: Client
    scope: str
    path: Path
    name: str
    #: "added", "updated", "unchanged", "removed" or "absent" (uninstall found nothing of ours).
    action: str
    #: The configuration to add by hand: the container with our entry, in the file's format.
    snippet: str


def _is_ours(entry) -> bool:
    """Whether an entry runs codelex's MCP server: ``... -m codelex mcp ...``, or a ``codelex`` command with ``mcp``."""
    if not isinstance(entry, dict):
        return False
    command, args = entry.get("command"), entry.get("args", [])
    if not isinstance(command, str) or not isinstance(args, list):
        return False
    if any(args[i:i + 3] == ["-m", "codelex", "mcp"] for i in range(len(args))):
        return True
    return re.split(r"[\\/]", command)[-1].lower() in ("codelex", "codelex.exe") and args[:1] == ["mcp"]


def _ours(path: Path, name: str, old, force: bool, verb: str) -> bool:
    """Whether the entry ``old`` named ``name`` is codelex's; another server's is refused unless ``force``."""
    if _is_ours(old):
        return True
    if not force:
        raise ClientConfigError(f"{path}: the MCP server {name!r} there is not codelex's; left as it is "
                                f"(--force to {verb} it anyway)")
    return False


def _merged(old: dict, entry: dict) -> dict:
    """Our entry ``old`` with our keys of ``entry`` set; any other key the user added is kept."""
    merged = dict(old)
    for key, value in entry.items():
        if key in _OWNED or key not in merged:
            merged[key] = value
    return merged


def _eol(text: str) -> str:
    """The text's line ending: its first line's."""
    i = text.find("\n")
    return "\r\n" if i > 0 and text[i - 1] == "\r" else "\n"


def _check_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise ClientConfigError(f"--name {name!r}: letters, digits, '-' and '_' only (at most 64)")
    return name


def _scope_file(client: Client, scope: str | None, cwd: str | os.PathLike[str] | None) -> tuple[str, Path]:
    scope = scope or client.default_scope
    if scope not in client.files:
        raise ClientConfigError(f"{client.title} has no {scope} configuration (only: {', '.join(client.files)})")
    root = Path()
    if scope == "project":
        from codelex.project.roots import discover_root, refusal_reason

        root = discover_root(cwd if cwd is not None else os.getcwd())
        refused = refusal_reason(root)
        if refused is not None:
            raise ClientConfigError(f"--scope project needs a project directory, not the home directory or above "
                                    f"({root}); run it inside the project")
    path = client.files[scope](root)
    here = root
    for part in path.relative_to(root).parts[:-1] if scope == "project" else ():
        here = here / part  # (a checked-out .vscode or .zed may lead anywhere, the user's own settings included)
        if here.is_symlink():
            raise ClientConfigError(f"{here}: a symbolic link; codelex edits a project's configuration only "
                                    f"inside the project (left as it is)")
    return scope, path


def snippet(client: Client, name: str, entry: dict) -> str:
    """Our entry inside its container, as the client's file holds it (what to add by hand)."""
    if client.format == "toml":
        return _toml_table(name, entry)
    return json.dumps({client.container: {name: entry}}, indent=2, ensure_ascii=False) + "\n"


def install(client: Client, *, scope: str | None = None, name: str = "codelex", roots=(), dry_run: bool = False,
            cwd: str | os.PathLike[str] | None = None, force: bool = False, output_schemas: bool = False) -> Change:
    """Add codelex's server to ``client``'s configuration for ``scope``, or update our entry named ``name``.

    Parameters
    ----------
    client
        A :data:`CLIENTS` entry (:func:`client_named`).
    scope
        ``"user"`` or ``"project"`` (default: the client's usual one).
    name
        The server's name in the client's configuration.
    roots
        Directories the server serves besides the project it is started in (``codelex mcp --root``).
    dry_run
        Read and check the file, write nothing.
    cwd
        Where the project is found for the project scope (default: the current directory).
    force
        Replace an entry named ``name`` that is not codelex's (refused otherwise).
    output_schemas
        The server registered publishes its answers' schemas (``codelex mcp --output-schemas``).

    Returns
    -------
    Change
        The file, what was done to it, and the snippet.

    Raises
    ------
    codelex.ClientConfigError
        An unknown scope or name, a malformed file or one our entry cannot be edited in, a symbolic link,
        a file that changed while being edited.
    OSError
        When the file cannot be read or written.
    """
    name = _check_name(name)
    scope, path = _scope_file(client, scope, cwd)
    entry = client.entry(*server_command(roots, output_schemas))
    shown = snippet(client, name, entry)
    text, before = _read(path, shown)
    editor = _TomlEdit if client.format == "toml" else _JsonEdit
    new_text, action = editor(client, path, text, shown).put(name, entry, force)
    if action != "unchanged" and not dry_run:
        _replace(path, new_text, before, scope)
    return Change(client, scope, path, name, action, shown)


def uninstall(client: Client, *, scope: str | None = None, name: str = "codelex",
              cwd: str | os.PathLike[str] | None = None, force: bool = False) -> Change:
    """Remove the server named ``name`` from ``client``'s configuration for ``scope``; nothing else changes.

    Returns a :class:`Change` whose action is ``"removed"``, or ``"absent"`` when there was no such entry
    (or no file).  An entry that is not codelex's is removed only with ``force``.  Raises as :func:`install`.
    """
    name = _check_name(name)
    scope, path = _scope_file(client, scope, cwd)
    shown = snippet(client, name, client.entry(*server_command()))
    text, before = _read(path, shown)
    if text is None:
        return Change(client, scope, path, name, "absent", shown)
    editor = _TomlEdit if client.format == "toml" else _JsonEdit
    new_text, action = editor(client, path, text, shown).drop(name, force)
    if action == "removed":
        _replace(path, new_text, before, scope)
    return Change(client, scope, path, name, action, shown)


# --- reading and writing the file ------------------------------------------------------------------

def _read(path: Path, shown: str) -> tuple[str | None, os.stat_result | None]:
    """The file's text and its ``stat`` (None, None when it does not exist); never through a link."""
    from codelex.safefs import NotRegularFileError, read_bytes

    try:
        data, st = read_bytes(path.parent, path.name, max_bytes=_MAX_BYTES)
    except FileNotFoundError:
        return None, None
    except UnsafePathError:
        raise ClientConfigError(f"{path}: a symbolic link; codelex edits only the file itself "
                                f"(add the entry by hand)", shown) from None
    except NotRegularFileError:
        raise ClientConfigError(f"{path}: not a regular file", shown) from None
    if len(data) > _MAX_BYTES:
        raise ClientConfigError(f"{path}: larger than {_MAX_BYTES >> 20} MiB", shown)
    try:
        return data.decode("utf-8"), st
    except UnicodeDecodeError as exc:
        raise ClientConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); left as it is",
                                shown) from None


def _replace(path: Path, text: str, before: os.stat_result | None, scope: str) -> None:
    """Write ``text`` to ``path`` atomically: a temporary file beside it, fsynced, renamed over it.

    The original's mode is kept; a new file is owner-only in the user scope (it names a command the
    client runs) and as the umask has it in a project.  The rename happens only if the file is still
    the one read (same inode, size and modification time): a client saving its own file meanwhile
    (Claude Code rewrites ``~/.claude.json`` often) is never overwritten with an older copy.
    """
    from codelex.persist.atomic import replaced
    from codelex.persist.layout import make_private_dir

    directory = path.parent
    if before is None and not directory.is_dir():
        if scope == "user":
            make_private_dir(directory)  # (only created: an existing directory's mode is the user's)
        else:
            directory.mkdir(parents=True, exist_ok=True)
    if before is not None:
        mode = stat.S_IMODE(before.st_mode)
    elif scope == "user":
        mode = 0o600
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    with replaced(path, mode=mode, before_rename=lambda: _check_unchanged(path, before)) as f:
        f.write(text.encode("utf-8"))


def _check_unchanged(path: Path, before: os.stat_result | None) -> None:
    try:
        now = os.lstat(path)
    except FileNotFoundError:
        now = None
    if before is None:
        if now is not None:
            raise ClientConfigError(f"{path}: appeared while codelex was writing it; run the command again")
        return
    if now is None or stat.S_ISLNK(now.st_mode) or (now.st_ino, now.st_dev, now.st_size, now.st_mtime_ns) != (
            before.st_ino, before.st_dev, before.st_size, before.st_mtime_ns):
        raise ClientConfigError(f"{path}: changed while codelex was editing it; run the command again")


# --- JSON and JSONC, edited in place ---------------------------------------------------------------

@dataclass
class _Member:
    key: str
    key_start: int
    value_start: int
    value_end: int
    node: _Object | None  # the value's members when it is an object


@dataclass
class _Object:
    open: int  # index of "{"
    close: int  # index of "}"
    members: list[_Member]


_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}


class _JsonParser:
    """A JSON (or JSONC) parser that also returns where each object's members lie in the text."""

    def __init__(self, text: str, jsonc: bool) -> None:
        self.text, self.jsonc = text, jsonc

    def fail(self, i: int, what: str):
        line = self.text.count("\n", 0, i) + 1
        column = i - (self.text.rfind("\n", 0, i) + 1) + 1
        raise ValueError(f"{what} at line {line} column {column}")

    def ws(self, i: int) -> int:
        text, n = self.text, len(self.text)
        while i < n:
            c = text[i]
            if c in " \t\r\n":
                i += 1
            elif self.jsonc and text.startswith("//", i):
                j = text.find("\n", i)
                i = n if j < 0 else j + 1
            elif self.jsonc and text.startswith("/*", i):
                j = text.find("*/", i + 2)
                if j < 0:
                    self.fail(i, "an unterminated comment")
                i = j + 2
            else:
                break
        return i

    def document(self):
        i = self.ws(1 if self.text.startswith("\ufeff") else 0)
        value, end, node = self.value(i)
        if self.ws(end) != len(self.text):
            self.fail(self.ws(end), "text after the document")
        return value, node

    def value(self, i: int):
        text = self.text
        if i >= len(text):
            self.fail(i, "a value expected")
        c = text[i]
        if c == "{":
            return self.object(i)
        if c == "[":
            return self.array(i)
        if c == '"':
            value, end = self.string(i)
            return value, end, None
        for word, literal in _LITERALS.items():
            if text.startswith(word, i):
                return literal, i + len(word), None
        match = _NUMBER.match(text, i)
        if match:
            raw = match.group()
            return (float(raw) if any(ch in raw for ch in ".eE") else int(raw)), match.end(), None
        self.fail(i, "a value expected")

    def string(self, i: int) -> tuple[str, int]:
        try:
            return json.decoder.scanstring(self.text, i + 1, True)
        except json.JSONDecodeError as exc:
            self.fail(exc.pos, exc.msg.lower().removesuffix(" at"))  # ("... starting at" at line ...)

    def object(self, i: int):
        members: list[_Member] = []
        out: dict = {}
        j = self.ws(i + 1)
        while True:
            if self.text.startswith("}", j):
                return out, j + 1, _Object(i, j, members)
            if not self.text.startswith('"', j):
                self.fail(j, "a member name or '}' expected")
            key, k = self.string(j)
            k = self.ws(k)
            if not self.text.startswith(":", k):
                self.fail(k, "':' expected")
            v = self.ws(k + 1)
            value, end, node = self.value(v)
            members.append(_Member(key, j, v, end, node))
            out[key] = value
            j = self.after_item(end, "}")

    def array(self, i: int):
        out: list = []
        j = self.ws(i + 1)
        while True:
            if self.text.startswith("]", j):
                return out, j + 1, None
            value, end, _ = self.value(j)
            out.append(value)
            j = self.after_item(end, "]")

    def after_item(self, i: int, close: str) -> int:
        """Where the next member or element starts (past a ','), or the ``close`` that ends them; a comma
        before ``close`` is JSONC's only."""
        j = self.ws(i)
        if self.text.startswith(",", j):
            j = self.ws(j + 1)
            if self.text.startswith(close, j) and not self.jsonc:
                self.fail(j, "a trailing comma")
        elif not self.text.startswith(close, j):
            self.fail(j, f"',' or '{close}' expected")
        return j


def _line_start(text: str, i: int) -> int:
    return text.rfind("\n", 0, i) + 1


def _indent_before(text: str, i: int) -> str | None:
    """The whitespace that starts ``i``'s line when only whitespace precedes ``i`` there, else None."""
    prefix = text[_line_start(text, i):i]
    return prefix if prefix.strip() == "" else None


class _JsonEdit:
    """Our entry put into, or taken out of, one JSON or JSONC file's text."""

    def __init__(self, client: Client, path: Path, text: str | None, shown: str) -> None:
        self.client, self.path, self.shown = client, path, shown
        self.text = text if text is not None and text.strip("\ufeff \t\r\n") else None
        self.original = text
        self.eol = _eol(text or "")
        self.data: dict = {}
        self.top: _Object | None = None
        if self.text is not None:
            self.data, self.top = self.parse(self.text)

    def error(self, why: str) -> ClientConfigError:
        return ClientConfigError(f"{self.path}: {why}; left as it is (add the entry by hand)", self.shown)

    def parse(self, text: str) -> tuple[dict, _Object]:
        try:
            data, node = _JsonParser(text, self.client.jsonc).document()
            if not self.client.jsonc:  # (a second, independent reading: the standard library's)
                json.loads(text.lstrip("\ufeff"), parse_constant=_refuse_constant)
        except RecursionError:
            raise self.error("nested too deeply") from None
        except ValueError as exc:
            hint = "" if self.client.jsonc else " (comments and trailing commas are not JSON)"
            raise self.error(f"not valid JSON: {exc}{hint}") from None
        if not isinstance(data, dict):
            raise self.error("not a JSON object")
        return data, node

    def container(self) -> _Member | None:
        found = [m for m in self.top.members if m.key == self.client.container] if self.top else []
        if len(found) > 1:
            raise self.error(f'"{self.client.container}" appears more than once')
        if found and found[0].node is None:
            raise self.error(f'"{self.client.container}" is not an object')
        return found[0] if found else None

    def ours(self, container: _Member | None, name: str) -> tuple[int, _Member] | None:
        if container is None:
            return None
        found = [(k, m) for k, m in enumerate(container.node.members) if m.key == name]
        if len(found) > 1:
            raise self.error(f'"{name}" appears more than once in "{self.client.container}"')
        return found[0] if found else None

    def unit(self) -> str:
        """The file's indentation step: its first member's indentation, else two spaces."""
        if self.top is not None and self.top.members:
            indent = _indent_before(self.text, self.top.members[0].key_start)
            if indent:
                return indent
        return "  "

    def put(self, name: str, entry: dict, force: bool = False) -> tuple[str, str]:
        if self.text is None:  # no file, or only whitespace: ours is the whole document
            return snippet(self.client, name, entry), "added"
        container = self.container()
        found = self.ours(container, name)
        expected = copy.deepcopy(self.data)
        servers = expected.setdefault(self.client.container, {})
        if found is not None:
            member, old = found[1], self.data[self.client.container][name]
            ours = _ours(self.path, name, old, force, "replace")
            servers[name] = new = _merged(old, entry) if ours else entry  # (another server's env is not ours)
            if old == new:
                return self.text, "unchanged"
            if ours:  # only our keys' values change
                text = self.update(member.node, old, new)
            else:
                indent = _indent_before(self.text, member.key_start)
                text = self.text[:member.value_start] + self.dump(entry, indent) + self.text[member.value_end:]
            action = "updated"
        else:
            servers[name] = entry
            if container is not None:
                text = self.insert(container.node, {name: entry})
            else:
                text = self.insert(self.top, {self.client.container: {name: entry}})
            action = "added"
        return self.verified(text, expected), action

    def update(self, node: _Object, old: dict, new: dict) -> str:
        """The entry ``node`` (holding ``old``) made ``new``: changed members' values rewritten (on one line if
        they were), new members added at its end; every other member's text as it was."""
        assert self.text is not None  # (the entry was found in it)
        added = {key: value for key, value in new.items() if key not in old}
        text = self.insert(node, added) if added else self.text  # (after every member: their places hold)
        for member in reversed(node.members):
            if old[member.key] != new[member.key]:
                was = text[member.value_start:member.value_end]
                indent = _indent_before(text, member.key_start) if "\n" in was else None
                text = text[:member.value_start] + self.dump(new[member.key], indent) + text[member.value_end:]
        return text

    def drop(self, name: str, force: bool = False) -> tuple[str, str]:
        if self.text is None:
            return self.original or "", "absent"
        container = self.container()
        found = self.ours(container, name)
        if found is None:
            return self.text, "absent"
        k, member = found
        _ours(self.path, name, self.data[self.client.container][name], force, "remove")
        expected = copy.deepcopy(self.data)
        del expected[self.client.container][name]
        text, parser = self.text, _JsonParser(self.text, self.client.jsonc)
        comma = parser.ws(member.value_end)
        follows = text.startswith(",", comma)
        start, end = member.key_start, (comma + 1 if follows else member.value_end)
        obj = container.node
        if len(obj.members) == 1 and not (text[obj.open + 1:start] + text[end:obj.close]).strip():
            # the only member, with nothing but blanks around it: the object is left as {}
            return self.verified(text[:obj.open + 1] + text[obj.close:], expected), "removed"
        if _indent_before(text, start) is not None:  # on a line of its own: the line goes
            start = _line_start(text, start)
            rest = re.match(r"[ \t]*\r?\n", text[end:])
            if rest:
                end += rest.end()
        else:  # on a line with others: the blanks after its comma go with it
            end += len(text[end:]) - len(text[end:].lstrip(" \t")) if follows else 0
        cuts = [(start, end)]
        if not follows and k > 0:  # the last member: the comma before it separated it, and goes too
            before = parser.ws(container.node.members[k - 1].value_end)
            if text.startswith(",", before):
                if start == member.key_start:  # one line: from that comma on
                    cuts = [(before, end)]
                else:
                    cuts.append((before, before + 1))
        for a, b in sorted(cuts, reverse=True):
            text = text[:a] + text[b:]
        return self.verified(text, expected), "removed"

    def dump(self, value, indent: str | None) -> str:
        if indent is None:  # a one-line file stays one line
            return json.dumps(value, ensure_ascii=False)
        return json.dumps(value, indent=self.unit(), ensure_ascii=False).replace("\n", self.eol + indent)

    def members(self, values: dict, indent: str | None) -> str:
        """``values`` as an object's members, one a line at ``indent`` (None: all on one line)."""
        between = ", " if indent is None else "," + self.eol + indent
        return between.join(json.dumps(key, ensure_ascii=False) + ": " + self.dump(value, indent)
                            for key, value in values.items())

    def insert(self, obj: _Object, values: dict) -> str:
        """The text with ``values`` added at the end of ``obj``, laid out as its members are."""
        text, eol = self.text, self.eol
        if obj.members:
            last = obj.members[-1]
            indent = _indent_before(text, obj.members[0].key_start)
            trailing = text.startswith(",", _JsonParser(text, self.client.jsonc).ws(last.value_end))
            member = self.members(values, indent)
            if indent is None:
                return text[:last.value_end] + ", " + member + text[last.value_end:]
            line = _line_start(text, obj.close)
            comma = "" if trailing else ","
            if line > last.value_end and text[line:obj.close].strip() == "":
                # Before the closing brace's line: a comment after the last member stays on its line.
                tail = "," if trailing else ""
                text = text[:line] + indent + member + tail + eol + text[line:]
            else:
                text = text[:obj.close] + eol + indent + member + eol + text[obj.close:]
            return text[:last.value_end] + comma + text[last.value_end:]
        if obj is not self.top and "\n" not in text.strip():  # {} in a one-line file: filled on that line
            return text[:obj.close] + self.members(values, None) + text[obj.close:]
        outer = re.match(r"[ \t]*", text[_line_start(text, obj.open):obj.open]).group()  # the {'s line's indentation
        indent = outer + self.unit()
        member = self.members(values, indent)
        line = _line_start(text, obj.close)
        if line > obj.open and text[line:obj.close].strip() == "":
            return text[:line] + indent + member + eol + text[line:]
        return text[:obj.close] + eol + indent + member + eol + outer + text[obj.close:]

    def verified(self, text: str, expected: dict) -> str:
        """``text`` when it reads back as exactly ``expected``; else an error (the file is not written)."""
        try:
            data, _ = self.parse(text)
        except ClientConfigError:
            data = None
        if data != expected:
            raise self.error("codelex could not edit it without changing something else")
        return text


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not JSON")


# --- TOML (Codex), edited as text ------------------------------------------------------------------

# A table header on a line of its own, possibly followed by a comment: [a.b] or [[a.b]].
_HEADER = re.compile(r"[ \t]*\[(\[?)[ \t]*(?P<key>[^\[\]\n#]+?)[ \t]*\]\1[ \t]*(?:#[^\n]*)?\r?\n?")
# A key = value line's start: the key, one part (bare, "basic" or 'literal').
_ASSIGN = re.compile(r"[ \t]*(?P<key>[A-Za-z0-9_-]+|\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*')[ \t]*=")
_KEY_PART = re.compile(r"[ \t]*(?:(?P<bare>[A-Za-z0-9_-]+)|\"(?P<basic>(?:[^\"\\\n]|\\.)*)\"|'(?P<literal>[^'\n]*)')[ \t]*")


def _key_parts(key: str) -> list[str] | None:
    """A dotted TOML key's parts (bare, "basic" or 'literal'); None when it is not a key."""
    parts, i = [], 0
    while True:
        match = _KEY_PART.match(key, i)
        if not match:
            return None
        if match["bare"] is not None:
            parts.append(match["bare"])
        elif match["literal"] is not None:
            parts.append(match["literal"])
        else:
            try:
                parts.append(json.loads(f'"{match["basic"]}"'))
            except ValueError:
                return None
        i = match.end()
        if i == len(key):
            return parts
        if key[i] != ".":
            return None
        i += 1


def _toml_string(value: str) -> str:
    # JSON's escapes are TOML's (\" \\ \b \f \n \r \t \uXXXX); DEL, which JSON leaves raw, TOML forbids raw.
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_value(value: str | list[str]) -> str:
    return f"[{', '.join(_toml_string(v) for v in value)}]" if isinstance(value, list) else _toml_string(value)


def _toml_table(name: str, entry: dict, eol: str = "\n") -> str:
    lines = [f"[mcp_servers.{name}]", *(f"{key} = {_toml_value(value)}" for key, value in entry.items())]
    return eol.join(lines) + eol


def _lines(text: str) -> list[str]:
    """``text``'s lines, each with its "\\n" (TOML's only line break; str.splitlines knows a dozen more)."""
    return re.findall(r"[^\n]*\n|[^\n]+\Z", text)


def _toml_loads(text: str) -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    return tomllib.loads(text)


class _TomlEdit:
    """Our ``[mcp_servers.NAME]`` table put into, or taken out of, a TOML file's text."""

    def __init__(self, client: Client, path: Path, text: str | None, shown: str) -> None:
        self.client, self.path, self.shown = client, path, shown
        self.text = text or ""
        self.eol = _eol(self.text)
        try:
            self.data = _toml_loads(self.text.lstrip("\ufeff"))
        except RecursionError:
            raise self.error("nested too deeply") from None
        except ValueError as exc:  # (tomllib.TOMLDecodeError is a ValueError)
            raise self.error(f"not valid TOML: {exc}") from None
        servers = self.data.get(client.container, {})
        if not isinstance(servers, dict):
            raise self.error(f"{client.container} is not a table")
        self.servers = servers

    def error(self, why: str) -> ClientConfigError:
        return ClientConfigError(f"{self.path}: {why}; left as it is (add the entry by hand)", self.shown)

    def block(self, name: str) -> tuple[int, int] | None:
        """Where our table and its sub-tables are written: from its header to the next table's header,
        less the blank and comment lines just before that header (they belong to what follows)."""
        text, ours = self.text, [self.client.container, name]
        start = end = None
        position = 1 if text.startswith("\ufeff") else 0
        for line in _lines(text[position:]):
            match = _HEADER.fullmatch(line)
            parts = _key_parts(match["key"]) if match else None
            if parts is not None:
                if start is not None and end is None and parts[:2] != ours and self.real(position):
                    end = position
                elif start is None and parts == ours and not match.group(1) and self.real(position):
                    start = position
            position += len(line)
        if start is None:
            return None
        end = len(text) if end is None else end
        body = _lines(text[start:end])
        while len(body) > 1 and (not body[-1].strip() or body[-1].lstrip().startswith("#")):
            end -= len(body.pop())
        return start, end

    def real(self, position: int) -> bool:
        """Whether a header's line at ``position`` is one: tomllib reads the text before it (a multi-line
        string's or array's line is inside something unfinished there)."""
        try:
            _toml_loads(self.text[:position].lstrip("\ufeff"))
        except ValueError:
            return False
        return True

    def put(self, name: str, entry: dict, force: bool = False) -> tuple[str, str]:
        expected = copy.deepcopy(self.data)
        old, new, ours = self.servers.get(name), entry, False
        if name in self.servers:
            ours = _ours(self.path, name, old, force, "replace")
            new = _merged(old, entry) if ours else entry
        if old == new:
            return self.text, "unchanged"
        expected.setdefault(self.client.container, {})[name] = new
        eol, found = self.eol, self.block(name)
        if found is not None:
            start, end = found
            if ours:
                text = self.update(start, end, old, new)
            else:
                text = self.text[:start] + _toml_table(name, entry, eol) + self.text[end:]
            action = "updated"
        elif name in self.servers:
            raise self.error(f"{self.client.container}.{name} is written in a form codelex does not edit")
        else:
            text = self.text
            if text.strip():
                text += ("" if text.endswith("\n") else eol) + eol
            text, action = text + _toml_table(name, entry, eol), "added"
        return self.verified(text, expected), action

    def update(self, start: int, end: int, old: dict, new: dict) -> str:
        """Our table at ``start:end`` with each key whose value changes rewritten where it is (or added under the
        header); every other line, sub-tables included, as it was."""
        lines = _lines(self.text[start:end])
        body = start + len(lines[0])  # the table's own keys: from after its header to its first sub-table
        stop = body + sum(len(line) for line in itertools.takewhile(lambda s: not _HEADER.fullmatch(s), lines[1:]))
        edits = []
        for key, value in new.items():
            if key not in old or old[key] != value:
                line = f"{key} = {_toml_value(value)}{self.eol}"
                where = self.assignment(body, stop, key) or (body, body)
                edits.append((*where, line if lines[0].endswith("\n") else self.eol + line))
        text = self.text
        for a, b, line in sorted(edits, reverse=True):
            text = text[:a] + line + text[b:]
        return text

    def assignment(self, start: int, stop: int, key: str) -> tuple[int, int] | None:
        """Where the lines of ``key = value`` lie between ``start`` and ``stop`` (a line's start)."""
        lines = _lines(self.text[start:stop])
        for i, line in enumerate(lines):
            match = _ASSIGN.match(line)
            if match and _key_parts(match["key"]) == [key]:
                for j in range(i + 1, len(lines) + 1):  # as many lines as its value takes
                    try:
                        if _toml_loads("".join(lines[i:j])).keys() == {key}:
                            return start, start + len("".join(lines[i:j]))
                    except ValueError:
                        pass
                return None
            start += len(line)
        return None

    def drop(self, name: str, force: bool = False) -> tuple[str, str]:
        if name not in self.servers:
            return self.text, "absent"
        _ours(self.path, name, self.servers[name], force, "remove")
        found = self.block(name)
        if found is None:
            raise self.error(f"{self.client.container}.{name} is written in a form codelex does not edit")
        start, end = found
        expected = copy.deepcopy(self.data)
        del expected[self.client.container][name]
        before, after = self.text[:start], self.text[end:]
        # The blank line that set our table apart goes with it (install then uninstall gives the file back).
        lead = re.match(r"[ \t]*\r?\n", after)
        if lead and (before in ("", "\ufeff") or re.search(r"\n[ \t]*\r?\n\Z", before)):
            after = after[lead.end():]
        elif not after and (tail := re.search(r"\n([ \t]*\r?\n)\Z", before)):
            before = before[:tail.start(1)]
        text = before + after
        if not expected[self.client.container]:
            # An implicit [mcp_servers] table disappears with its last sub-table; an explicit one stays empty.
            try:
                if self.client.container not in _toml_loads(text.lstrip("\ufeff")):
                    del expected[self.client.container]
            except ValueError:
                pass
        return self.verified(text, expected), "removed"

    def verified(self, text: str, expected: dict) -> str:
        try:
            data = _toml_loads(text.lstrip("\ufeff"))
        except (ValueError, RecursionError):
            data = None
        if data != expected:
            raise self.error("codelex could not edit it without changing something else")
        return text
