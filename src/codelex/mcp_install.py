"""Registering codelex's MCP server with an agent client: ``codelex mcp install|uninstall CLIENT``.

One table, :data:`CLIENTS`: each client's name and aliases, the file that holds its MCP servers for each
scope it has (``user``: every project; ``project``: the project of the current directory), that file's
format and the object our entry goes in, and the documentation the shape was checked against.

The registered command runs *this* installation: the absolute path of the running interpreter with
``-m codelex mcp`` (and ``--root DIR`` for each root named), so the client starts the codelex of the
environment it was installed into, never whichever ``codelex`` its ``PATH`` finds first.

A client's configuration file is the user's, and may hold anything: it is read as hostile input and
edited in place, never re-serialized.  A JSON file is parsed (strictly; with ``//`` and ``/* */``
comments and trailing commas only for clients whose files are JSONC, VS Code's and Zed's) by a parser
that records where each member lies, and only our entry's text is written, replaced or removed: every
other byte, comments and formatting included, stays as it was.  A TOML file (Codex) is read with
``tomllib`` and our ``[mcp_servers.NAME]`` table is replaced, appended or removed as text.  Either way
the edited text is parsed again and must hold exactly what was there plus (or minus) our entry;
anything else (a malformed file, an entry written in a form this module does not edit) is a
:class:`~codelex.errors.ClientConfigError` carrying the snippet to add by hand, and the file is left
untouched.  Files are read through :mod:`codelex.safefs` (a symbolic link or a FIFO is refused) and
replaced atomically (a temporary file in the same directory, fsynced, renamed over the original, which
must not have changed meanwhile), with the original's mode; a new user file is owner-only.
"""

from __future__ import annotations

import copy
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


def server_command(roots=()) -> tuple[str, list[str]]:
    """``(command, args)`` that start this installation's MCP server serving ``roots`` too.

    The interpreter's path is made absolute but not resolved: in a virtual environment it is a link to
    the base interpreter, and only the link's path runs with the environment's packages.

    Raises
    ------
    codelex.ClientConfigError
        A root that is not a directory.
    """
    command = os.path.abspath(sys.executable)
    args = ["-m", "codelex", "mcp"]
    for raw in roots:
        root = Path(raw).expanduser()
        try:
            root = root.resolve()
        except (OSError, RuntimeError) as exc:
            raise ClientConfigError(f"--root {raw}: {exc}") from None
        if not root.is_dir():
            raise ClientConfigError(f"--root {raw}: not a directory")
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
    return scope, client.files[scope](root)


def snippet(client: Client, name: str, entry: dict) -> str:
    """Our entry inside its container, as the client's file holds it (what to add by hand)."""
    if client.format == "toml":
        return _toml_table(name, entry)
    return json.dumps({client.container: {name: entry}}, indent=2, ensure_ascii=False) + "\n"


def install(client: Client, *, scope: str | None = None, name: str = "codelex", roots=(), dry_run: bool = False,
            cwd: str | os.PathLike[str] | None = None) -> Change:
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
    entry = client.entry(*server_command(roots))
    shown = snippet(client, name, entry)
    text, before = _read(path, shown)
    editor = _TomlEdit if client.format == "toml" else _JsonEdit
    new_text, action = editor(client, path, text, shown).put(name, entry)
    if action != "unchanged" and not dry_run:
        _replace(path, new_text, before, scope)
    return Change(client, scope, path, name, action, shown)


def uninstall(client: Client, *, scope: str | None = None, name: str = "codelex",
              cwd: str | os.PathLike[str] | None = None) -> Change:
    """Remove the server named ``name`` from ``client``'s configuration for ``scope``; nothing else changes.

    Returns a :class:`Change` whose action is ``"removed"``, or ``"absent"`` when there was no such entry
    (or no file).  Raises as :func:`install`.
    """
    name = _check_name(name)
    scope, path = _scope_file(client, scope, cwd)
    shown = snippet(client, name, client.entry(*server_command()))
    text, before = _read(path, shown)
    if text is None:
        return Change(client, scope, path, name, "absent", shown)
    editor = _TomlEdit if client.format == "toml" else _JsonEdit
    new_text, action = editor(client, path, text, shown).drop(name)
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
    import tempfile

    from codelex.persist.container import fsync_directory
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
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".codelex-tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
            f.flush()
            if hasattr(os, "fchmod"):
                os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        _check_unchanged(path, before)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_directory(directory)


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
            self.fail(exc.pos, exc.msg.lower())

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
            j = self.ws(end)
            if self.text.startswith(",", j):
                j = self.ws(j + 1)
                if self.text.startswith("}", j) and not self.jsonc:
                    self.fail(j, "a trailing comma")
            elif not self.text.startswith("}", j):
                self.fail(j, "',' or '}' expected")

    def array(self, i: int):
        out: list = []
        j = self.ws(i + 1)
        while True:
            if self.text.startswith("]", j):
                return out, j + 1, None
            value, end, _ = self.value(j)
            out.append(value)
            j = self.ws(end)
            if self.text.startswith(",", j):
                j = self.ws(j + 1)
                if self.text.startswith("]", j) and not self.jsonc:
                    self.fail(j, "a trailing comma")
            elif not self.text.startswith("]", j):
                self.fail(j, "',' or ']' expected")


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

    def put(self, name: str, entry: dict) -> tuple[str, str]:
        if self.text is None:  # no file, or only whitespace: ours is the whole document
            return snippet(self.client, name, entry), "added"
        container = self.container()
        found = self.ours(container, name)
        expected = copy.deepcopy(self.data)
        expected.setdefault(self.client.container, {})[name] = entry
        if found is not None:
            member = found[1]
            if self.data[self.client.container][name] == entry:
                return self.text, "unchanged"
            indent = _indent_before(self.text, member.key_start)
            text = self.text[:member.value_start] + self.dump(entry, indent) + self.text[member.value_end:]
            action = "updated"
        elif container is not None:
            text = self.insert(container.node, name, entry)
            action = "added"
        else:
            text = self.insert(self.top, self.client.container, {name: entry})
            action = "added"
        return self.verified(text, expected), action

    def drop(self, name: str) -> tuple[str, str]:
        if self.text is None:
            return self.original or "", "absent"
        container = self.container()
        found = self.ours(container, name)
        if found is None:
            return self.text, "absent"
        k, member = found
        expected = copy.deepcopy(self.data)
        del expected[self.client.container][name]
        text, parser = self.text, _JsonParser(self.text, self.client.jsonc)
        comma = parser.ws(member.value_end)
        follows = text.startswith(",", comma)
        start, end = member.key_start, (comma + 1 if follows else member.value_end)
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
        return json.dumps(value, indent=self.unit(), ensure_ascii=False).replace("\n", "\n" + indent)

    def insert(self, obj: _Object, key: str, value) -> str:
        text = self.text
        if obj.members:
            last = obj.members[-1]
            indent = _indent_before(text, obj.members[0].key_start)
            trailing = text.startswith(",", _JsonParser(text, self.client.jsonc).ws(last.value_end))
            member = json.dumps(key, ensure_ascii=False) + ": " + self.dump(value, indent)
            if indent is None:
                return text[:last.value_end] + ", " + member + text[last.value_end:]
            line = _line_start(text, obj.close)
            comma = "" if trailing else ","
            if line > last.value_end and text[line:obj.close].strip() == "":
                # Before the closing brace's line: a comment after the last member stays on its line.
                tail = "," if trailing else ""
                text = text[:line] + indent + member + tail + "\n" + text[line:]
            else:
                text = text[:obj.close] + "\n" + indent + member + "\n" + text[obj.close:]
            return text[:last.value_end] + comma + text[last.value_end:]
        outer = _indent_before(text, obj.open) or ""
        indent = outer + self.unit()
        member = json.dumps(key, ensure_ascii=False) + ": " + self.dump(value, indent)
        line = _line_start(text, obj.close)
        if line > obj.open and text[line:obj.close].strip() == "":
            return text[:line] + indent + member + "\n" + text[line:]
        return text[:obj.close] + "\n" + indent + member + "\n" + outer + text[obj.close:]

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


def _toml_table(name: str, entry: dict) -> str:
    lines = [f"[mcp_servers.{name}]"]
    for key, value in entry.items():
        if isinstance(value, str):
            lines.append(f"{key} = {_toml_string(value)}")
        elif isinstance(value, list):
            lines.append(f"{key} = [{', '.join(_toml_string(v) for v in value)}]")
    return "\n".join(lines) + "\n"


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
        position = 0
        for line in text.splitlines(keepends=True):
            match = _HEADER.fullmatch(line)
            parts = _key_parts(match["key"]) if match else None
            if parts is not None:
                if start is not None and end is None and parts[:2] != ours:
                    end = position
                elif start is None and parts == ours and not match.group(1):
                    start = position
            position += len(line)
        if start is None:
            return None
        end = len(text) if end is None else end
        body = text[start:end].splitlines(keepends=True)
        while len(body) > 1 and (not body[-1].strip() or body[-1].lstrip().startswith("#")):
            end -= len(body.pop())
        return start, end

    def put(self, name: str, entry: dict) -> tuple[str, str]:
        expected = copy.deepcopy(self.data)
        expected.setdefault(self.client.container, {})[name] = entry
        if self.servers.get(name) == entry:
            return self.text, "unchanged"
        table = _toml_table(name, entry)
        found = self.block(name)
        if found is not None:
            start, end = found
            text, action = self.text[:start] + table + self.text[end:], "updated"
        elif name in self.servers:
            raise self.error(f"{self.client.container}.{name} is written in a form codelex does not edit")
        else:
            text = self.text
            if text.strip():
                text += ("" if text.endswith("\n") else "\n") + "\n"
            text, action = text + table, "added"
        return self.verified(text, expected), action

    def drop(self, name: str) -> tuple[str, str]:
        if name not in self.servers:
            return self.text, "absent"
        found = self.block(name)
        if found is None:
            raise self.error(f"{self.client.container}.{name} is written in a form codelex does not edit")
        start, end = found
        expected = copy.deepcopy(self.data)
        del expected[self.client.container][name]
        text = self.text[:start] + self.text[end:]
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
